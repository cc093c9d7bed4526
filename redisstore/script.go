package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// swapScript is the compare-and-swap of one key's state. The state is a
// hash: v, its version; s, the controller's state in its binary form; and,
// while a store that lost several swaps in a row has its turn, o and ot,
// that store's name and the end of its turn (microseconds of the server's
// clock). The script knows nothing of pacing; it only compares versions,
// so the rules live in one place, the Go controller.
//
//	KEYS[1]  the state's key
//	ARGV[1]  the version the caller read ("0": it expects no key)
//	ARGV[2]  "w" write the state, "d" delete the key, "c" only check
//	ARGV[3]  the new state (w)
//	ARGV[4]  time to live in milliseconds (w)
//	ARGV[5]  channel to publish on; "" for none
//	ARGV[6]  the key's name in notifications
//	ARGV[7]  the new state's generation
//	ARGV[8]  "1" to send the state along with the notification
//	ARGV[9]  the caller's name (one per Store)
//	ARGV[10] how many swaps this update lost so far
//	ARGV[11] how long a turn lasts, in microseconds
//
// On a version mismatch, or while another store has its turn, it returns
// {0, current version, current state}, so the caller's retry needs no read
// of its own. Otherwise it returns {1, version now}. A written version is
// the old one plus one; a key created (or re-created after it expired or
// was deleted) starts from the server's clock in microseconds, which is
// above any version an earlier life of the key reached, so a stale version
// never matches a newer state.
//
// Turns keep a process from starving: Redis serves ready clients in a fixed
// order, so without them the process that won a swap could win every next
// one. A caller that lost twice takes the turn if nobody has it; until it
// swaps or its turn ends, other callers' swaps fail as if stale.
//
// The notification is "name version generation[ state]": waiters compare
// generations, and the state, when small enough to send to every process,
// spares their next update a failed swap.
var swapScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'v', 's', 'o', 'ot')
local v = cur[1] or '0'
local other = false
local now = nil
if cur[3] and cur[3] ~= ARGV[9] then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  other = now < tonumber(cur[4])
end
if v ~= ARGV[1] or other then
  if not other and cur[1] and tonumber(ARGV[10]) >= 2 then
    if not now then
      local t = redis.call('TIME')
      now = tonumber(t[1]) * 1000000 + tonumber(t[2])
    end
    redis.call('HSET', KEYS[1], 'o', ARGV[9], 'ot', string.format('%d', now + tonumber(ARGV[11])))
  end
  return {0, v, cur[2] or ''}
end
local mode = ARGV[2]
if mode == 'c' then
  return {1, v}
end
local nv
if v == '0' then
  local t = redis.call('TIME')
  nv = string.format('%d', tonumber(t[1]) * 1000000 + tonumber(t[2]))
else
  nv = string.format('%d', tonumber(v) + 1)
end
if mode == 'd' then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'v', nv, 's', ARGV[3])
  if cur[3] then
    redis.call('HDEL', KEYS[1], 'o', 'ot')
  end
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
if ARGV[5] ~= '' then
  local msg = ARGV[6] .. ' ' .. nv .. ' ' .. ARGV[7]
  if ARGV[8] == '1' then
    msg = msg .. ' ' .. ARGV[3]
  end
  redis.call('PUBLISH', ARGV[5], msg)
end
return {1, nv}
`)

type swapMode string

const (
	modeWrite  swapMode = "w"
	modeDelete swapMode = "d"
	modeCheck  swapMode = "c"
)

// swap is one compare-and-swap request.
type swap struct {
	expect int64
	mode   swapMode
	state  []byte
	ttl    time.Duration
	id     string
	gen    uint64
	notify bool
	lost   int // swaps this update lost so far
}

// turn is how long a store that lost twice in a row has the key to itself.
const turn = 20 * time.Millisecond

// maxNotifyState is the largest state sent along with a notification.
const maxNotifyState = 4096

// swap runs swapScript under the Store's timeout. It reports whether the
// swap happened, and the key's version (and, when it did not, its state).
func (s *Store) swap(ctx context.Context, rkey string, r swap) (ok bool, ver int64, state []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	channel := ""
	if r.notify {
		channel = s.channel
	}
	withState := ""
	if r.notify && len(r.state) <= maxNotifyState {
		withState = "1"
	}
	ms := max(r.ttl.Milliseconds(), 1)
	res, err := swapScript.Run(ctx, s.rdb, []string{rkey},
		strconv.FormatInt(r.expect, 10), string(r.mode), r.state, ms,
		channel, r.id, strconv.FormatUint(r.gen, 10), withState,
		s.name, r.lost, turn.Microseconds()).Slice()
	if err != nil {
		return false, 0, nil, fmt.Errorf("redisstore: update: %w", err)
	}
	if len(res) < 2 {
		return false, 0, nil, fmt.Errorf("redisstore: update: unexpected reply of %d elements", len(res))
	}
	flag, _ := res[0].(int64)
	vs, _ := res[1].(string)
	ver, err = strconv.ParseInt(vs, 10, 64)
	if err != nil {
		return false, 0, nil, fmt.Errorf("redisstore: update: unexpected version %q", vs)
	}
	if flag == 1 {
		return true, ver, nil, nil
	}
	if len(res) > 2 {
		if s, _ := res[2].(string); s != "" {
			state = []byte(s)
		}
	}
	return false, ver, state, nil
}
