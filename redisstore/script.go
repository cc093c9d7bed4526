package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// swapScript is the compare-and-swap of one key's state. The state is a
// hash: v, its version; s, the controller's state in its binary form; and,
// while stores wait for their turn, q, their names in order, and qt, when
// the turn of the first ends (microseconds of the server's clock). The
// script knows nothing of pacing; it only compares versions, so the rules
// live in one place, the Go controller.
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
//	ARGV[12] the largest state read, in bytes
//	ARGV[13] when the caller gives up, on the server's clock in
//	         microseconds (at the latest); "0" for no limit
//	ARGV[14] this swap's token, unique to it (w); "" for none
//	ARGV[15] the release's number, this store's, the same each time it
//	         is sent (w, no limit); "" for none
//	ARGV[16] "1" if this number may have been sent before
//
// A key no store could have written (another type than a hash, a state
// above ARGV[12], a version that is not a canonical integer below 2^53 or
// is more than maxAhead past the server's clock) is deleted first, and so
// starts over, as a state that does not decode does; so is a queue longer
// than 4 KiB, one whose names are not one space apart, or a turn that ends
// more than a turn from now.
//
// A swap that runs after its caller gave up (Redis was busy for longer
// than the Store's Timeout) returns {3} and changes nothing: a lease it
// would take would be kept in Redis with no request to end it. Only a
// swap that takes a lease is sent with a limit: a release that comes late
// still frees its slot.
//
// A write adds its token to w, which keeps the last 32, newest first. A
// swap whose token the key holds ran already: sent again (the client
// retried it after its reply was lost, as go-redis does after a
// connection fails), it changes nothing, late or not, and returns {4,
// current version, current state}: the state is the swap's own unless
// another write came since (by a store of an older version too, which
// writes no token). Run twice, its update was applied twice, and a lease
// it took was kept with no request to end it. Sent again after 32 other
// writes, it is stale, and its update is applied again.
//
// A write sent without a limit carries a number of its store's, the same
// however often it is sent, on whatever version (see Store.resend). The
// key keeps, in r, the last 32 numbers each store wrote and the largest
// it dropped to keep no more (its floor), for the 13 stores that wrote
// last, none more than a minute before, and the second a store's were
// last dropped to keep no more stores (a store that writes again within
// the minute starts its entry with a floor just below its number). A swap
// sent again whose number the key holds ran already, and returns {4} as
// above; one whose number the key cannot tell of (at or below its store's
// floor, or, its store with no entry, a store's dropped within the
// minute) changes nothing and returns {5, current version}; otherwise it
// never ran, and runs. So a release sent again runs once
// however many writes other stores make meanwhile, which push its token
// out of w.
//
// On a version mismatch it returns {0, current version, current state,
// the server's clock in microseconds}, so the caller's retry needs no read
// of its own (and, the clock measured, gets its limit: see commit); while
// another store has its turn, {2, current version, current state, the
// clock}. Otherwise it returns {1, version now, "", the clock}. A written
// version is the server's clock in microseconds, or the old version plus
// one when that is not above it: versions grow
// across the lives of a key (re-created after it expired or was deleted)
// and across a Redis that went back to older data (a restart from a
// snapshot, a failover to a replica that was behind), whose versions
// are below the clock now, so a stale version never matches a newer
// state, and a newer state's notification is never taken for an old one.
// It holds while the server's clock does not go back.
//
// Turns keep a process from starving: Redis serves ready clients in a fixed
// order, so without them the process that won a swap could win every next
// one. A caller that lost a swap before joins the queue; while the queue
// has a first, only it may swap, until it does or its turn ends. A turn
// that ends unused drops the queue: the stores still contending join it
// again at their next lost swap, and the names of stores gone hold the key
// one turn in all, not one each.
//
// The notification is "name version generation[ state]": waiters compare
// generations, and the state, when small enough to send to every process,
// spares their next update a failed swap.
var swapScript = redis.NewScript(`
local now = nil
local function clock()
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return now
end
local tok = ARGV[14]
-- foreign reports whether v is a version no store writes: not canonical,
-- at or past 2^53, where Lua's numbers lose the ones, or an hour past the
-- clock.
local function foreign(v)
  return not string.match(v, '^[1-9]%d*$') or tonumber(v) >= 9007199254740992 -- maxVersion
    or tonumber(v) > clock() + 3600000000 -- maxAhead
end
-- again returns the reply to a swap that ran already (its token among the
-- key's last writes), or nil. A key no store wrote (a version foreign, a
-- state past ARGV[12] bytes) gives none: the key starts over below, or
-- the late swap changes nothing.
local function again()
  if tok == '' or redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then
    return nil
  end
  local w = redis.call('HGET', KEYS[1], 'w') or ''
  if #w > 4096 or not string.find(' ' .. w .. ' ', ' ' .. tok .. ' ', 1, true) then
    return nil
  end
  local cur = redis.call('HMGET', KEYS[1], 'v', 's')
  if (cur[1] and foreign(cur[1])) or redis.call('HSTRLEN', KEYS[1], 's') > tonumber(ARGV[12]) then
    return nil
  end
  return {4, cur[1] or '0', cur[2] or ''}
end
local by = tonumber(ARGV[13])
if by > 0 and clock() > by then
  local a = again()
  if a then
    return a -- it ran in time, its reply lost
  end
  return {3, '0'} -- run after its caller gave up: it changes nothing
end
local turn = tonumber(ARGV[11])
local kind = redis.call('TYPE', KEYS[1])['ok']
if (kind ~= 'hash' and kind ~= 'none') or redis.call('HSTRLEN', KEYS[1], 's') > tonumber(ARGV[12]) then
  redis.call('DEL', KEYS[1]) -- no store writes another type, nor a state so large
end
local cur = redis.call('HMGET', KEYS[1], 'v', 's', 'q', 'qt', 'w', 'r')
local a = again()
if a then
  return a
end
local v = cur[1] or '0'
if cur[1] and foreign(v) then
  -- A version no store writes: the key starts over.
  redis.call('DEL', KEYS[1])
  cur = {false, false, false, false, false, false}
  v = '0'
end
-- The numbers of the swaps with no limit the key holds (see
-- Store.resend): r is "~:S" (the second a store's were last dropped for
-- room), then "name:S:floor:n,n,..." for each store, the one that wrote
-- last first (S: the second it wrote; floor: the largest of its numbers
-- dropped, its numbers in base 36, oldest first).
local me = ARGV[9]
local rel = ARGV[15]
local sec = math.floor(clock() / 1000000)
local rmine, rfloor, rothers, rdropped, rfound = '', '0', '', 0, false
if rel ~= '' then
  local rf = cur[6] or ''
  if #rf > 8192 then
    rf, rdropped = '', sec -- written by no store: what it held is not known
  end
  local d, rest = string.match(rf, '^~:(%d+) *(.*)$')
  if d then
    rf, rdropped = rest, math.min(tonumber(d), sec) -- none is written ahead of the clock
  end
  local p = ' ' .. rf .. ' '
  local at = string.find(p, ' ' .. me .. ':', 1, true)
  rfound = at ~= nil
  if at then
    local stop = string.find(p, ' ', at + 1, true)
    local ent = string.sub(p, at + 1, stop - 1)
    local f, l = string.match(ent, '^%x+:%d+:(%w+):(.+)$')
    if f and (#ent > 1024 or #f > 11 or string.find(',' .. l .. ',', ',,', 1, true)) then
      f = nil -- an empty number, a floor of more than 11 digits, or an entry longer than a store writes
    end
    if f then
      rfloor, rmine = f, l
    else
      rfound, rdropped = false, sec -- not as a store writes it: what it held is not known
    end
    p = string.sub(p, 1, at) .. string.sub(p, stop + 1)
  end
  rothers = p
  if ARGV[16] == '1' then
    if string.find(',' .. rmine .. ',', ',' .. rel .. ',', 1, true) then
      return {4, v, cur[2] or ''} -- it ran already
    end
    -- Its store's numbers at or below the floor were dropped; with no
    -- entry of its store, so may all have been, within the minute.
    if tonumber(rel, 36) <= tonumber(rfloor, 36) or not rfound and rdropped >= sec - 60 then
      return {5, v} -- whether it ran is not known
    end
  end
end
local q = cur[3] or ''
-- A turn end is whole microseconds, as stores write it: anything else
-- ("nan", which tonumber takes and every comparison fails, held the
-- head's turn for ever) reads as lapsed.
local qt = cur[4] and string.match(cur[4], '^%-?%d+$') and tonumber(cur[4]) or 0
local dirty = false
if #q > 4096 or qt > clock() + turn or (q ~= '' and string.gsub(q .. ' ', string.rep('[0-9a-f]', 16) .. ' ', '') ~= '') then
  -- A queue longer than stores contend, a turn beyond one, or names not
  -- a store's (16 hex digits) one space apart: written by no store; it
  -- starts over. (Shorter names, each given its turn, held a key for as
  -- many turns as fit in 4096 bytes: 2000 of one byte, 40 s.)
  q, qt, dirty = '', 0, true
end
if q ~= '' and qt <= clock() and string.match(q, '^%S+') ~= me then
  -- The first's turn lapsed unused: the queue is dropped whole, since the
  -- names after it may be of stores gone too (a crash, a hostile write),
  -- each of which, given a turn in its turn, held the key that long (240
  -- names of 16 hex digits fit in 4096 bytes: 4.8 s). The stores still
  -- contending join it again at their next lost swap.
  q, qt, dirty = '', 0, true
end
local head = string.match(q, '^%S+')
if v ~= ARGV[1] or (head and head ~= me) then
  if cur[1] then
    if tonumber(ARGV[10]) >= 1 and not string.find(' ' .. q .. ' ', ' ' .. me .. ' ', 1, true) then
      if q == '' then
        q = me
        qt = clock() + turn
      else
        q = q .. ' ' .. me
      end
      dirty = true
    end
    if dirty then
      redis.call('HSET', KEYS[1], 'q', q, 'qt', string.format('%d', qt))
    end
  end
  if head and head ~= me then
    return {2, v, cur[2] or '', string.format('%d', clock())}
  end
  return {0, v, cur[2] or '', string.format('%d', clock())}
end
if head == me then
  q = string.sub(q, #me + 2)
  qt = clock() + turn
  dirty = true
end
local mode = ARGV[2]
if mode == 'c' then
  if dirty and cur[1] then
    redis.call('HSET', KEYS[1], 'q', q, 'qt', string.format('%d', qt))
  end
  return {1, v, '', string.format('%d', clock())}
end
local nv = clock()
if v ~= '0' and tonumber(v) >= nv then
  nv = tonumber(v) + 1
end
nv = string.format('%d', nv)
if mode == 'd' then
  redis.call('DEL', KEYS[1])
else
  local w = cur[5] or ''
  if #w > 4096 then
    w = '' -- written by no store
  end
  local _, n = string.gsub(w, '%S+', '')
  if n >= 32 then
    w = string.match(w, '^(.*) %S+$') or '' -- the oldest goes
  end
  if w ~= '' then
    w = ' ' .. w
  end
  redis.call('HSET', KEYS[1], 'v', nv, 's', ARGV[3], 'w', tok .. w)
  if rel ~= '' then
    local l = rel
    if rmine ~= '' then
      l = rmine .. ',' .. rel
    elseif not rfound and rdropped >= sec - 60 then
      -- A new entry, while its store's may have been dropped: the
      -- numbers before this one are not known.
      local n, f = tonumber(rel, 36) - 1, ''
      repeat
        local k = n % 36
        f = string.sub('0123456789abcdefghijklmnopqrstuvwxyz', k + 1, k + 1) .. f
        n = math.floor(n / 36)
      until n == 0
      rfloor = f
    end
    local _, commas = string.gsub(l, ',', ',')
    if commas >= 32 then
      local c = string.find(l, ',', 1, true)
      local cut = string.sub(l, 1, c - 1)
      local n = tonumber(cut, 36)
      if not n then
        rfloor = string.rep('z', 11) -- a number no store writes: none before is known
      elseif n > tonumber(rfloor, 36) then
        rfloor = cut
      end
      l = string.sub(l, c + 1)
    end
    local parts = {me .. ':' .. sec .. ':' .. rfloor .. ':' .. l}
    for ent in string.gmatch(rothers, '%S+') do
      local s = tonumber(string.match(ent, '^%x+:(%d+):%w+:.+$') or '')
      if s and s > sec + 60 then
        rdropped = sec -- ahead of the clock: the clock stepped back, or no store wrote it
      elseif s and s >= sec - 60 and #ent <= 1024 then
        if #parts < 13 then
          parts[#parts + 1] = ent
        else
          rdropped = sec
        end
      end
    end
    if rdropped >= sec - 60 then
      table.insert(parts, 1, '~:' .. rdropped)
    end
    redis.call('HSET', KEYS[1], 'r', table.concat(parts, ' '))
  end
  if dirty then
    redis.call('HSET', KEYS[1], 'q', q, 'qt', string.format('%d', qt))
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
return {1, nv, '', string.format('%d', clock())}
`)

// readScript reads the version and state of KEYS[1], the state only when
// it is no larger than ARGV[1] bytes (a larger one is replaced by the next
// swap, unread), after the server's clock in microseconds: {clock[,
// version[, state]]}. A key no store wrote (another type, a version more
// than maxAhead past the server's clock) reads as absent. The clock
// measures the server's, as a swap's does (see Store.refresh).
var readScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local clock = string.format('%d', now)
if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' then
  return {clock}
end
local v = redis.call('HGET', KEYS[1], 'v')
if not v then
  return {clock}
end
if (tonumber(v) or 0) > now + 3600000000 then -- maxAhead
  return {clock} -- a version no store writes: the next swap replaces it
end
if redis.call('HSTRLEN', KEYS[1], 's') > tonumber(ARGV[1]) then
  return {clock, v}
end
return {clock, v, redis.call('HGET', KEYS[1], 's')}
`)

// swapResult is what became of a swap.
type swapResult int

const (
	swapStale   swapResult = 0 // the caller's version was not the current one
	swapDone    swapResult = 1
	swapBlocked swapResult = 2 // another store has its turn
	swapLate    swapResult = 3 // it ran after the caller gave up
	swapAgain   swapResult = 4 // it had run already: sent again after its reply was lost
	swapUnknown swapResult = 5 // sent again, whether it ran is not known: it changes nothing
)

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
	lost   int    // swaps this update lost so far
	by     int64  // when the caller gives up, on the server's clock in microseconds; 0: no limit
	tok    string // the write's token, unique to it (see swapScript); "" for none
	rel    string // the release's number, the same each time it is sent (see swapScript); "" for none
	again  bool   // rel may have been sent before
}

// turn is how long a store that lost twice in a row has the key to itself.
const turn = 20 * time.Millisecond

// maxNotifyState is the largest state sent along with a notification.
const maxNotifyState = 4096

// maxVersion bounds the versions swapScript writes: 2^53, past which Lua's
// numbers lose the ones; a key holding one starts over.
const maxVersion = 1 << 53

// maxAhead is how far past the server's clock a version may be, in
// microseconds: versions run ahead of it only after its clock went back,
// by one per write. A key with a version further ahead was written by no
// store (one that would make every store take it, and then any other, for
// older) and starts over; a notification naming one is ignored. A Redis
// whose clock steps back by more loses the states it holds, as after a
// restart with no data.
const maxAhead = int64(time.Hour / time.Microsecond)

// maxState is the largest state read from Redis: the controller's largest
// is about 37 KB (doc.go, "Expiry and size"); anything larger was written
// by no store, and is replaced.
const maxState = 64 << 10

// swap runs swapScript under the Store's timeout. It reports whether the
// swap happened, and the key's version (and, when it did not, its state).
func (s *Store) swap(ctx context.Context, rkey string, r swap) (res swapResult, ver int64, state []byte, clock int64, err error) {
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
	reply, err := swapScript.Run(ctx, s.rdb, []string{rkey},
		strconv.FormatInt(r.expect, 10), string(r.mode), r.state, ms,
		channel, r.id, strconv.FormatUint(r.gen, 10), withState,
		s.name, r.lost, turn.Microseconds(), maxState, r.by, r.tok, r.rel, again(r.again)).Slice()
	if err != nil {
		if ctx.Err() != nil {
			// The Store's Timeout: ctx is the update's without its
			// cancellation (see update). Told apart from the end of the
			// request's own context, which a Budget reads as no failure
			// of the Store (see polite.Store).
			return 0, 0, nil, 0, fmt.Errorf("%w (%v)", errNoReply, s.timeout())
		}
		return 0, 0, nil, 0, fmt.Errorf("redisstore: update: %w", err)
	}
	if len(reply) < 2 {
		return 0, 0, nil, 0, fmt.Errorf("redisstore: update: unexpected reply of %d elements", len(reply))
	}
	flag, _ := reply[0].(int64)
	vs, _ := reply[1].(string)
	ver, err = strconv.ParseInt(vs, 10, 64)
	if err != nil || flag < 0 || flag > 5 {
		// Neither the version nor the state is printed whole: a hostile
		// writer chose them, and the state may be 64 KiB.
		return 0, 0, nil, 0, fmt.Errorf("redisstore: update: unexpected reply (flag %d, version %.24q)", flag, vs)
	}
	if len(reply) > 2 {
		if s, _ := reply[2].(string); s != "" {
			state = []byte(s)
		}
	}
	if len(reply) > 3 {
		c, _ := reply[3].(string)
		clock, _ = strconv.ParseInt(c, 10, 64)
	}
	return swapResult(flag), ver, state, clock, nil
}

// again is swapScript's ARGV[16].
func again(b bool) string {
	if b {
		return "1"
	}
	return ""
}

// errNoReply is the error of a swap Redis did not answer within the
// Store's Timeout.
var errNoReply = errors.New("redisstore: update: no reply within the Store's Timeout")
