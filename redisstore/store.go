package redisstore

import (
	"bytes"
	"cmp"
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/redis/go-redis/v9"
)

// Store keeps the state of polite budget keys in Redis, so that the
// processes sharing one Redis (and one prefix) pace each origin as one
// client. It implements [polite.Store]; plug it into [polite.Budget].
//
// Create a Store with [New]. A Store is safe for concurrent use by multiple
// goroutines. Its fields must not be changed after first use. A process
// should use one Store per Redis and prefix, shared by all its Budgets: each
// Store holds one pub/sub connection.
//
// Call [Store.Close] when done with it to stop its subscription; it does not
// close the Redis client.
type Store struct {
	// Timeout bounds each Redis call made on behalf of a request, so that a
	// slow or hung Redis holds no request longer than this before its
	// Budget falls back to memory. An update of a key that arrives while
	// another of the same key is being swapped waits for that swap, then
	// makes its own (a release queued so must still reach a Redis that
	// runs it late): twice this when Redis stopped answering (the updates
	// queued that take a lease are then not sent), but under a Redis slow
	// to answer within Timeout, updates queued together that take a lease
	// and that release one are swapped apart, a run of each kind in turn,
	// so that one behind k runs waits for k+1 swaps. A request's deadline
	// ends any such wait. A release Redis does not answer within Timeout
	// is sent again apart, for up to 10 s: its caller waits for the
	// outcome as its context allows (a Budget's allows 10 s), the updates
	// batched with it that release nothing fail at once, as the swap did,
	// and the other updates of the key go on (see "When Redis fails" in
	// the package doc). It takes effect only if the client honours
	// context deadlines (redis.Options.ContextTimeoutEnabled); otherwise
	// the client's own ReadTimeout and WriteTimeout bound each call. If
	// zero, 250 ms.
	Timeout time.Duration

	// MaxKeys is the most budget keys whose last state and generation the
	// Store keeps in this process (to save a read per update and to wake
	// waiters). It bounds memory only; a key that falls out costs one more
	// round trip on its next update. Keys in use (a Wait may last as long
	// as a pause) are kept beyond it until they are not. If zero, 10000;
	// it is at least 16, one for each shard of the Store.
	MaxKeys int

	// ExpiryMargin is added to the expiry a state reports before it is
	// given to Redis as the key's time to live, so that a key outlives its
	// budget's idle time despite clock differences between processes. If
	// zero, 1 minute.
	ExpiryMargin time.Duration

	// RetryInterval is how long the Store waits before subscribing again
	// after its subscription failed, and how long a waiter sleeps before
	// looking again while the Store is not subscribed (it cannot be woken
	// then). If zero, 1 second.
	RetryInterval time.Duration

	rdb     redis.UniversalClient
	prefix  string
	channel string
	name    string // this Store's name in swaps: random

	once   sync.Once
	shards [nShards]shard
	zero   []byte // a zero KeyState in binary form

	stats    struct{ updates, swaps, stale, blocked, notes atomic.Int64 }
	writes   atomic.Uint64 // writes sent, for their tokens
	releases atomic.Uint64 // batches swapped with no limit, for their numbers (see Store.resend)

	// timed reports that rdb ends a call at its context's deadline
	// (ContextTimeoutEnabled): a swap that takes a lease is then sent with
	// the instant it gives up (see swapScript).
	timed bool
	// read is how long rdb waits for a reply at most besides a deadline
	// (its ReadTimeout; 0: none): a call ends at the sooner of the two.
	read time.Duration

	// the subscription
	mu         sync.Mutex
	started    atomic.Bool
	closed     bool
	stop       context.CancelFunc
	done       chan struct{}
	ps         *redis.PubSub
	subscribed atomic.Bool   // the subscription is live
	epoch      atomic.Uint64 // counts changes of subscribed, and failures
	epochCh    chan struct{} // closed and replaced when epoch changes
}

const (
	nShards              = 16
	defaultTimeout       = 250 * time.Millisecond
	defaultMaxKeys       = 10000
	defaultExpiryMargin  = time.Minute
	defaultRetryInterval = time.Second
	defaultTTL           = 10 * time.Minute     // for a state that gives no expiry
	contentionLimit      = 4                    // an update gives up after 4 Timeouts of lost swaps
	blockedWait          = 2 * time.Millisecond // for another store's write, while it has its turn
)

// ErrContention is returned (wrapped) by [Store.Update] when other
// processes' updates of the same key won the compare-and-swap for four
// times Timeout and this one gave up: it gives up before a swap once four
// Timeouts have passed, so that with the swap in flight then (a Timeout at
// most) an update so refused takes up to five.
var ErrContention = errors.New("redisstore: too much contention on one key")

// errLate is the error of a swap Redis ran after its Timeout, as this
// process's clock measured it.
var errLate = errors.New("redisstore: update: Redis ran the swap after its timeout")

// errAbandoned is the error of the updates of a batch whose leader's own
// update panicked or exited its goroutine.
var errAbandoned = errors.New("redisstore: update abandoned by a panic in another update of the key")

// New returns a Store keeping budgets in rdb under keys starting with
// prefix (if empty, "polite:"). Processes that share budgets use the same
// prefix; a prefix also names the pub/sub channel the Store listens on.
//
// rdb may be a single-node client, a failover (Sentinel) client or a Redis
// Cluster client, as returned by [redis.NewUniversalClient]; all the Redis
// data of one budget key is in one slot. A [redis.Ring] does not fit: its
// shards do not share pub/sub, so waiters would not be woken across them.
// For request timeouts to hold, create rdb with ContextTimeoutEnabled.
func New(rdb redis.UniversalClient, prefix string) *Store {
	if prefix == "" {
		prefix = "polite:"
	}
	var b [8]byte
	crand.Read(b[:])
	s := &Store{rdb: rdb, prefix: prefix, channel: prefix + "changed", name: hex.EncodeToString(b[:])}
	s.timed, s.read = timeouts(rdb)
	return s
}

// timeouts reports whether rdb ends each call at its context's deadline,
// and how long it waits for a reply at most besides: its ReadTimeout
// (go-redis's default of 3 s if zero); 0 when none, or unknown.
func timeouts(rdb redis.UniversalClient) (timed bool, read time.Duration) {
	switch c := rdb.(type) {
	case *redis.Client:
		timed, read = c.Options().ContextTimeoutEnabled, c.Options().ReadTimeout
	case *redis.ClusterClient:
		timed, read = c.Options().ContextTimeoutEnabled, c.Options().ReadTimeout
	default:
		return false, 0
	}
	switch {
	case read == 0:
		read = 3 * time.Second
	case read < 0:
		read = 0
	}
	return timed, read
}

func (s *Store) init() {
	s.once.Do(func() {
		z, _ := new(polite.KeyState).MarshalBinary()
		s.zero = z
		n := s.MaxKeys
		if n <= 0 {
			n = defaultMaxKeys
		}
		for i := range s.shards {
			per := n / nShards
			if i < n%nShards {
				per++
			}
			s.shards[i].init(max(1, per))
		}
		s.epochCh = make(chan struct{})
	})
}

func (s *Store) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return defaultTimeout
}

func (s *Store) margin() time.Duration {
	if s.ExpiryMargin > 0 {
		return s.ExpiryMargin
	}
	return defaultExpiryMargin
}

func (s *Store) retryInterval() time.Duration {
	if s.RetryInterval > 0 {
		return s.RetryInterval
	}
	return defaultRetryInterval
}

// id returns the name of key in Redis: a hash, so that a key built from a
// credential never appears in Redis, its logs or its replication stream.
func id(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// redisKey returns the Redis key holding the state of the key named id. The
// braces make it a hash tag: whatever else a key's state needs later stays
// in the same Redis Cluster slot.
func (s *Store) redisKey(id string) string { return s.prefix + "{" + id + "}" }

func (s *Store) shard(id string) *shard {
	// id is hex: its first two digits pick the shard.
	h, _ := strconv.ParseUint(id[:2], 16, 8)
	return &s.shards[h%nShards]
}

// Update calls fn with key's state and keeps what fn leaves, atomically
// across every process sharing the Redis and prefix. It reads nothing
// before its compare-and-swap when this process has seen the key's latest
// version; otherwise the failed swap returns the current state and fn runs
// again on it. A state past its Expiry is given to fn as the zero state.
// When the state's generation grew, Update publishes it, and waiters in
// every process sharing the store wake.
//
// Concurrent updates of one key in one process are applied in batches,
// one swap each (fn of each runs in turn on the state the previous one
// left): under load, a request costs less than one round trip per update.
//
// An error (wrapping the Redis client's) means the state may not have been
// kept; each Redis call is bounded by Timeout (a release Redis did not
// answer is sent again apart, its caller waiting as its context allows:
// see Store.resend), and an
// update that keeps
// losing swaps to other processes gives up after four Timeouts (five at
// most, with the swap then in flight) with [ErrContention]. If ctx ends while the update waits for its batch,
// Update returns ctx.Err(). Once its batch is being swapped, it waits for
// the swap in flight (a Timeout at most), so that what fn did, a lease
// taken say, is never kept without its caller knowing; if that swap kept
// nothing (lost to another process's), it returns ctx.Err() then, and the
// updates batched with it go on without it. A swap Redis runs only after
// its Timeout keeps nothing (see "When Redis fails" in the package doc).
func (s *Store) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	s.init()
	s.start()
	if err := ctx.Err(); err != nil {
		return err
	}
	s.stats.updates.Add(1)
	err := s.update(ctx, key, fn)
	if err != nil && ctx.Err() == nil {
		// Redis may be failing: waiters look again (and their Budget
		// falls back to memory if it is).
		s.mu.Lock()
		s.wakeAll()
		s.mu.Unlock()
	}
	return err
}

// update is Update without its checks.
//
// The updates of one key in one process go to Redis in batches: while one
// batch is being swapped, the updates that arrive queue, and the next
// batch applies them all, in order, with one swap. Each would otherwise
// swap against the same version and all but one would fail.
func (s *Store) update(ctx context.Context, key string, fn func(*polite.KeyState)) (err error) {
	kid := id(key)
	sh := s.shard(kid)
	e := sh.pin(kid)
	defer sh.unpin(e)

	o := &op{ctx: ctx, fn: fn, done: make(chan result, 1)}
	if !sh.enqueue(e, o) {
		r, err := await(ctx, sh, e, o)
		if err != nil || !r.lead {
			return cmp.Or(err, r.err)
		}
		if err := ctx.Err(); err != nil {
			// Handed the lead once its context had ended (put back
			// in the queue by a batch's split or a leader that left,
			// and led after): not sent, the lead passed on.
			sh.pass(e, o)
			return err
		}
	}
	// This update leads: it swaps the queue, its own update first, and
	// hands the lead to the next update queued, if any. The swap does not
	// end with the leader's context: it is the others' too.
	batch := sh.take(e)
	err = errAbandoned // unless commit returns
	handed := false
	defer func() {
		if handed {
			return // a release sent again: each has its outcome, or will
		}
		if err == errLeaderGone || err == errLeaderStalled {
			// The others go on: at the head of the queue, in order,
			// the first of them to lead.
			sh.requeue(e, batch[1:])
			if err == errLeaderGone {
				err = ctx.Err()
			} else {
				err = errStalled
			}
		} else {
			for _, b := range batch[1:] {
				b.done <- result{err: err}
			}
		}
		sh.handOff(e)
	}()
	err = s.commit(context.WithoutCancel(ctx), kid, e, &batch)
	var u *unsentRelease
	if !errors.As(err, &u) {
		return err
	}
	// A release Redis did not answer: it is sent again apart (see
	// resend), the updates of the batch that release a request waiting
	// for it as their contexts allow; the others end now, as the swap's
	// did, and the other updates of the key go on.
	err = errAbandoned // unless releases returns
	frees := releases(batch, u.cur)
	err = u
	if len(frees) == 0 {
		return err
	}
	for _, b := range batch[1:] {
		if slices.Contains(frees, b) {
			b.done <- result{resent: true}
		} else {
			b.done <- result{err: err}
		}
	}
	handed = true
	sh.handOff(e)
	sh.pin(kid) // for the resend
	go func() {
		defer sh.unpin(e)
		p, err := (*opPanic)(nil), errAbandoned // unless resend returns (an update may end the goroutine)
		defer func() {
			for _, b := range frees {
				r := result{err: err}
				if p != nil && p.o == b {
					r.panic = p // its update panicked: so does its caller
				}
				b.done <- r
			}
		}()
		p, err = s.resend(u, frees)
	}()
	if frees[0] != batch[0] {
		return err
	}
	return awaitResend(ctx, o)
}

// await waits for o's result: the outcome of its batch, or the lead. It
// returns ctx's error if ctx ends before o is taken into a batch, or while
// its release is sent again (see Store.resend): o leaves, not knowing
// whether it was kept, as an update whose swap failed. Taken into a batch
// swapped once, o waits for the swap in flight (a Timeout at most).
func await(ctx context.Context, sh *shard, e *entry, o *op) (result, error) {
	var r result
	select {
	case r = <-o.done:
	case <-ctx.Done():
		if sh.withdraw(e, o) {
			return result{}, ctx.Err()
		}
		r = <-o.done // handed the lead, done, or sent again, just now
	}
	if !r.resent {
		return r, nil
	}
	return result{}, awaitResend(ctx, o)
}

// awaitResend waits for the outcome of o's release, sent again (see
// Store.resend), or for ctx to end: then o leaves, its update never run
// again, and it returns ctx's error.
func awaitResend(ctx context.Context, o *op) error {
	select {
	case r := <-o.done:
		if r.panic != nil {
			panic(r.panic.v)
		}
		return r.err
	case <-ctx.Done():
		o.leave()
		return ctx.Err()
	}
}

// releases returns the updates of batch that free a request in flight
// (see frees), each applied in turn to cur, the state its swap started
// from, in order.
func releases(batch []*op, cur []byte) []*op {
	st, _ := decoded(cur)
	var out []*op
	for _, o := range batch {
		before, after, ok := applied(&st, o)
		if !ok {
			return nil
		}
		if frees(before, after) {
			out = append(out, o)
		}
	}
	return out
}

// applied applies the update o to st, and returns st's binary form
// before and after it; ok is false if either could not be encoded.
func applied(st *polite.KeyState, o *op) (before, after []byte, ok bool) {
	before, err := st.MarshalBinary()
	if err != nil {
		return nil, nil, false
	}
	o.fn(st)
	after, err = st.MarshalBinary()
	return before, after, err == nil
}

// unanswered reports whether err is a swap's that Redis did not answer in
// time (paused, busy, unreachable): the Store's Timeout, or the client's
// ReadTimeout. An error Redis replied, or a closed client, is not.
func unanswered(err error) bool {
	var ne net.Error
	return errors.Is(err, errNoReply) || errors.As(err, &ne) && ne.Timeout()
}

// frees reports whether the state after an update ends a request the
// state before held in flight, and takes no lease: a release.
func frees(before, after []byte) bool {
	var b, a control.State
	if b.UnmarshalBinary(before) != nil || a.UnmarshalBinary(after) != nil || takesLease(before, after) {
		return false
	}
	return a.Leases() < b.Leases() || a.Awaiting() < b.Awaiting()
}

// unsentRelease is commit's error when Redis did not answer in time a
// swap that takes no lease and ends a request in flight (a release), from
// the state cur: it may have run, or may yet.
type unsentRelease struct {
	rkey, kid string
	e         *entry
	cur       []byte
	r         swap
	stall     int64 // the key's stall mark its failure set (see entry.stall)
	err       error
}

func (u *unsentRelease) Error() string { return u.err.Error() }
func (u *unsentRelease) Unwrap() error { return u.err }

// resend sends u's swap again, under its number (see swapScript), for the
// updates ops that release a request, until Redis answers, or maxResend
// passes, or the Store closes; an error Redis replies ends it, but that it
// is busy or loading, or a connection refused (it ran nothing). It returns
// nil once the swap ran, now or before. Told the key changed since (its
// first send, which expects the version gone, can never run) or that
// another store has its turn, it runs ops again on the key as Redis holds
// it, each whose caller has not left (see awaitResend), and sends that
// under the same number, which a late run of the first send would find.
// Told the key cannot say whether it ran (see swapScript), it gives up:
// run twice, a release frees another request's slot and reads its answer
// twice; not run, its lease stays in Redis until it ends. Should the
// updates, run again, take a lease, it gives up too: only a swap with a
// limit may take one (see commit). While Redis does not answer, the key
// stays stalled (see Store.stalled), so that its updates that take a lease
// fail at once.
//
// A release whose swap went unanswered (Redis paused or busy for a moment)
// and was not sent again left its lease in Redis until it ended: the slot
// taken in every process, and a key whose quota was far from spent let one
// request go every 3 s (the ramp's stall) for the Budget's Lease.
func (s *Store) resend(u *unsentRelease, ops []*op) (p *opPanic, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), maxResend)
	defer cancel()
	r, mark := u.r, u.stall
	r.again = true
	stalled := unanswered(u.err)
	for tries := 1; ; tries++ {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed || ctx.Err() != nil {
			return nil, u.err
		}
		sent := time.Now()
		if stalled {
			// The try before went unanswered: the key stays stalled
			// while this one is, with no gap between the two.
			mark = int64(time.Since(stallBase)) + 1
			u.e.stall.Store(mark)
		}
		res, nver, nstate, _, err := s.swap(ctx, u.rkey, r)
		s.stats.swaps.Add(1)
		if err != nil {
			pause := resendPause - time.Since(sent) // tries start resendPause apart at least
			switch stalled = unanswered(err); {
			case stalled:
				mark = int64(time.Since(stallBase)) + 1
				u.e.stall.Store(mark)
			case busy(err), dialFailed(err):
				pause = busyPause // it did not run
			default:
				return nil, err
			}
			if pause > 0 {
				t := time.NewTimer(pause)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
				t.Stop()
			}
			continue
		}
		u.e.stall.CompareAndSwap(mark, 0) // answered (unless a later swap of the key was not)
		switch res {
		case swapDone, swapAgain:
			if res == swapDone && r.mode == modeWrite {
				s.shard(u.kid).storeNewer(u.e, nver, r.state)
			}
			return nil, nil
		case swapStale, swapBlocked:
			if res == swapStale {
				s.stats.stale.Add(1)
			} else {
				s.stats.blocked.Add(1)
				time.Sleep(blockedWait) // another store's turn
			}
			st, _ := decoded(nstate)
			before := st.Generation()
			ran := false
			for _, o := range ops {
				ok, pv := o.runSafe(&st)
				if pv != nil {
					return &opPanic{o: o, v: pv}, errAbandoned
				}
				ran = ok || ran
			}
			next, err := st.MarshalBinary()
			if err != nil {
				return nil, fmt.Errorf("redisstore: encoding state: %w", err)
			}
			if !ran || takesLease(nstate, next) {
				return nil, u.err
			}
			rel := r.rel
			r = s.swapOf(u.kid, nver, nstate, next, &st, before)
			r.rel, r.again, r.lost = rel, true, tries
			continue
		}
		return nil, u.err // not known whether it ran; or late, which no swap without a limit is
	}
}

// errUnknown is the error of an update whose swap, sent again, the key
// cannot tell ran or not (see swapScript).
var errUnknown = errors.New("redisstore: update: sent again, and whether it ran is not known")

// Sending a release again (see Store.resend): for at most maxResend (a
// Budget bounds a release by 10 s); tries start resendPause apart at
// least, and busyPause after a reply that Redis is busy (a script past its
// busy-reply-threshold) or loading its data, or a connection refused.
const (
	maxResend   = 10 * time.Second
	resendPause = 10 * time.Millisecond
	busyPause   = 50 * time.Millisecond
)

// dialFailed reports whether err is a connection that could not be made
// (Redis restarting, say): the command was not sent.
func dialFailed(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// busy reports whether err is a reply that Redis did not run the command:
// busy with a script past its busy-reply-threshold, or loading its data.
func busy(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	m := re.Error()
	return strings.HasPrefix(m, "BUSY ") || strings.HasPrefix(m, "LOADING ")
}

// errStalled is the error of an update that takes a lease, not sent
// because Redis did not answer the last swap of its key, a moment before
// (see Store.stalled).
var errStalled = errors.New("redisstore: update: not sent: Redis did not answer the key's last swap")

// errLeaderStalled is commit's error when the batch's first update is
// one errStalled ends: the others are handed back to the queue.
var errLeaderStalled = errors.New("redisstore: the leading update is not sent")

// stalled reports whether Redis did not answer the last swap of e's key,
// less than a Timeout ago by the monotonic clock (a step of the wall
// clock back would make it a stall as long).
func (s *Store) stalled(e *entry) bool {
	t := e.stall.Load()
	d := time.Since(stallBase) - time.Duration(t-1)
	return t != 0 && d >= 0 && d < s.timeout()
}

// stallBase is the instant, with its monotonic clock reading, that
// entry.stall counts from.
var stallBase = time.Now()

// stallOut ends with errStalled the updates of *bp but the first that take
// a lease (see takesLease; each seen from the state pre and the updates
// kept before it),
// leaving the others in *bp, in order; it reports whether the first takes
// one too, in which case *bp keeps it first.
func stallOut(bp *[]*op, pre []byte) (first bool) {
	var st polite.KeyState
	if st.UnmarshalBinary(pre) != nil {
		return false
	}
	batch := *bp
	keep := make([]*op, 0, len(batch))
	var out []*op
	for i, o := range batch {
		before, after, ok := applied(&st, o)
		if !ok {
			return false
		}
		if !takesLease(before, after) {
			keep = append(keep, o)
			continue
		}
		// Not applied: the next ones are seen without it.
		st = polite.KeyState{}
		if len(before) > 0 && st.UnmarshalBinary(before) != nil {
			return false
		}
		if i == 0 {
			first = true
		} else {
			out = append(out, o)
		}
	}
	for _, o := range out {
		o.done <- result{err: errStalled}
	}
	if first {
		keep = append([]*op{batch[0]}, keep...)
	}
	*bp = keep
	return first
}

// nextGeneration returns st with one more Generation (see
// control.State.NextGeneration).
func nextGeneration(st polite.KeyState) polite.KeyState {
	var c control.State
	if b, err := st.MarshalBinary(); err != nil || c.UnmarshalBinary(b) != nil {
		return st
	}
	c.NextGeneration()
	b, err := c.MarshalBinary()
	var next polite.KeyState
	if err != nil || next.UnmarshalBinary(b) != nil {
		return st
	}
	return next
}

// takesLease reports whether the state after an update took a lease that
// the state before did not hold: more grants, or more leases (a new
// incarnation counts its grants from zero). A Forget, which starts one
// with none, takes none.
func takesLease(before, after []byte) bool {
	var b, a control.State
	if a.UnmarshalBinary(after) != nil {
		return false
	}
	if len(before) > 0 && b.UnmarshalBinary(before) != nil {
		return true
	}
	return a.Grants() > b.Grants() || a.Leases() > b.Leases()
}

// errLeaderGone is commit's error when the context of the batch's first
// update, whose goroutine swaps, ended after a swap that kept nothing:
// the others are handed back to the queue.
var errLeaderGone = errors.New("redisstore: the leading update's context ended")

// drop ends, with their context's error, the updates of batch but the
// first whose context has ended, and returns the rest: between two swaps,
// after one that kept nothing, they need not wait for the next.
func drop(batch []*op) []*op {
	keep := batch[:1]
	for _, o := range batch[1:] {
		if err := o.ctx.Err(); err != nil {
			o.done <- result{err: err}
			continue
		}
		keep = append(keep, o)
	}
	clear(batch[len(keep):])
	return keep
}

// commit swaps a batch of updates of one key into Redis. After a swap
// that kept nothing (lost to another process's), the updates whose
// context has ended leave the batch, *batch left with the others; when
// the first's has, commit returns errLeaderGone. A batch in which some
// updates take a lease and others release one (free it, or keep it in
// flight with its answer) is split (see split): the run at its head is
// swapped, the rest queued again at the head, in order, so
// that a release never goes in a swap with a limit, which Redis would
// refuse whole if it ran it late (see "When Redis fails" in the package
// doc).
func (s *Store) commit(ctx context.Context, kid string, e *entry, bp *[]*op) error {
	sh := s.shard(kid)
	ver, cur := sh.cached(e)
	// Notifications count only if the subscription was live before the
	// swap was sent: then none published after it can be missed.
	epoch, live := s.epoch.Load(), s.subscribed.Load()
	rkey := s.redisKey(kid)
	deadline := time.Now().Add(contentionLimit * s.timeout())
	splits := 0 // the attempts that split the batch rather than lost a swap
	rel := ""   // the batch's number, once a swap with no limit is sent (see Store.resend)
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			// The last swap kept nothing: an update whose context
			// ended may go, its caller told so.
			if *bp = drop(*bp); (*bp)[0].ctx.Err() != nil {
				return errLeaderGone
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("redisstore: %d tries: %w", attempt-splits, ErrContention)
			}
		}
		batch := *bp
		st, kept := decoded(cur) // kept: st is the state Redis holds
		before := st.Generation()
		if kept && sh.startedOver(e, before, control.Identity(cur)) {
			// The key started over at the generation this process knew
			// (see setGen): a Wait called with that generation may
			// have it from the state before, or from this one. Moved
			// one past it, the generation tells them apart: the next
			// Wait of the first kind finds it changed, and this
			// swap's callers get the new one. (Left as it was, the
			// swap made every such Wait take it for its own: one
			// called after an update of this process, an Inspect's,
			// slept to its deadline, up to a lease.)
			st = nextGeneration(st)
		}
		var pre []byte // the state before, when a swap taking a lease may get a limit
		ahead := sh.ahead(e)
		if s.timed && ahead != 0 {
			if b, err := st.MarshalBinary(); err == nil {
				// A zero state (the key past its expiry, or new to
				// Redis) marshals to nothing: it is still the state
				// before, and a swap taking a lease from it gets its
				// limit too. (Left nil, the first request to a key
				// idle past its Expiry kept its lease when Redis ran
				// its swap late: every process held for Lease.)
				if b == nil {
					b = []byte{}
				}
				pre = b
			}
		}
		if pre != nil && s.stalled(e) {
			// Redis did not answer the key's last swap, a moment ago:
			// the updates that take a lease fail now, as that swap's
			// did, and the others go in one swap. Split in runs, each
			// swapped after the one before failed, the updates queued
			// behind a swap Redis did not answer waited a Timeout for
			// each run ahead of them.
			if stallOut(bp, pre) {
				return errLeaderStalled
			}
			batch = *bp
		}
		takes := false // an update of the batch takes a lease (see split)
		if pre != nil && len(batch) > 1 {
			mine, others, took := split(batch, pre, &st)
			if len(others) > 0 {
				sh.requeue(e, others)
				*bp = mine
				ver, cur = sh.cached(e)
				splits++
				continue
			}
			takes = took
		} else {
			for _, o := range batch {
				o.fn(&st)
			}
		}
		next, err := st.MarshalBinary()
		if err != nil {
			return fmt.Errorf("redisstore: encoding state: %w", err)
		}
		gen := st.Generation()
		r := s.swapOf(kid, ver, cur, next, &st, before)
		r.lost = attempt - splits
		sent := time.Now().UnixMicro()
		if pre != nil && (takes || grants(next) != grants(pre)) {
			// It takes a lease: should Redis run it only after this
			// process gave up, it must change nothing. (Told by the
			// grants of the batch's updates one by one, not by the
			// count before and after alone: a Forget that starts a new
			// incarnation counts them from zero again, and a batch of
			// it and an Acquire, after one grant, ended at the count it
			// began with; sent without a limit, run late, its lease
			// held the key in every process for a Lease:
			// TestForgetAcquireBatchLateKeepsNothing.)
			// The client gives up at its ReadTimeout if sooner than
			// Timeout: a swap Redis ran between the two kept its lease.
			limit := s.timeout()
			if s.read > 0 {
				limit = min(limit, s.read)
			}
			r.by = sent + limit.Microseconds() + ahead - 1 + 1000 // and a millisecond more
		}
		if r.by == 0 {
			// Sent with no limit: should Redis not answer, it may be
			// sent again, under the same number (see Store.resend).
			if rel == "" {
				rel = strconv.FormatUint(s.releases.Add(1), 36)
			}
			r.rel = rel
		}
		res, nver, nstate, clock, err := s.swap(ctx, rkey, r)
		recv := time.Now().UnixMicro()
		s.stats.swaps.Add(1)
		if err != nil {
			mark := int64(time.Since(stallBase)) + 1
			e.stall.Store(mark)
			if r.mode != modeCheck && (unanswered(err) || busy(err) || dialFailed(err)) && frees(cur, next) {
				return &unsentRelease{rkey: rkey, kid: kid, e: e, cur: cur, r: r, stall: mark, err: err}
			}
			return err
		}
		e.stall.Store(0)
		if res == swapUnknown {
			// Only a swap sent again is told so (see resend).
			return errUnknown
		}
		if res == swapLate {
			// Answered in time after all: this process's clock stepped
			// back, or the key moved to a server whose clock is ahead,
			// since the measure. Measure again.
			sh.forgetAhead(e)
			return errLate
		}
		if clock > 0 {
			// The script read its clock after the swap was sent and
			// before its reply came: the server's clock is at most
			// clock-sent ahead of ours, and at least clock-recv. The
			// least of the recent upper bounds is kept: one measured by
			// a swap that waited behind a busy Redis is late by that
			// wait, and would make the next swaps' limits late by as
			// much.
			sh.measured(e, clock, sent, recv)
		}
		switch res {
		case swapStale:
			s.stats.stale.Add(1)
		case swapBlocked:
			s.stats.blocked.Add(1)
		}
		if res == swapAgain && !bytes.Equal(nstate, next) {
			// It had run, and another write came since: this update
			// is done, and the key's state is that write's.
			sh.store(e, nver, nstate)
			return nil
		}
		if res == swapDone || res == swapAgain {
			cver := nver
			if r.mode == modeDelete {
				cver, next = 0, nil // absent: the next swap expects no key
			}
			sh.done(e, cver, next, nver, gen, epoch, live)
			return nil
		}
		if res == swapBlocked {
			// Queued behind another store's turn: wait a moment for its
			// write to be published, with its state.
			newer := sh.newer(e)
			sh.store(e, nver, nstate)
			t := time.NewTimer(blockedWait)
			select {
			case <-newer:
			case <-t.C:
			}
			t.Stop()
		} else {
			sh.store(e, nver, nstate)
		}
		ver, cur = sh.cached(e)
	}
}

// split applies the updates of batch in turn to st, whose binary form was
// pre, and returns the longest run at its head in which no update
// releases a lease while another takes one, and the rest, in order: those
// that take one go with a limit, which must not refuse a release (updates
// that do neither go with either). A release is one that frees a lease,
// or ends the wait for its answer, or changes the state (a new
// Generation) without taking a lease: a Release with Outcome.Keep keeps
// its request in flight while the body arrives (Leases as it was), and
// one whose lease had ended frees none, but each brings what the server
// said in its headers. When there is a rest, st is left
// as it was not to be kept. takes reports whether an update of mine
// changed the count of grants (a new incarnation's count from zero
// again too), which a swap of mine must then send with a limit.
func split(batch []*op, pre []byte, st *polite.KeyState) (mine, others []*op, takes bool) {
	var c control.State
	if c.UnmarshalBinary(pre) != nil {
		return batch, nil, false
	}
	g, n, w, gen := c.Grants(), c.Leases(), c.Awaiting(), c.Generation()
	kind := 0 // 1: an update took a lease; -1: one released one
	for i, o := range batch {
		o.fn(st)
		b, _ := st.MarshalBinary()
		if c.UnmarshalBinary(b) != nil {
			return batch, nil, false
		}
		k := 0
		switch {
		case c.Grants() != g:
			k = 1
		case c.Leases() < n, c.Awaiting() < w, c.Generation() != gen:
			// A release, or an update that changed the state
			// without taking a lease: one whose lease had ended, or
			// was another incarnation's, frees none, and still
			// brings what the server said.
			k = -1
		}
		g, n, w, gen = c.Grants(), c.Leases(), c.Awaiting(), c.Generation()
		switch {
		case k == 0:
		case kind == 0:
			kind = k
		case k != kind:
			return batch[:i:i], batch[i:], kind == 1
		}
	}
	return batch, nil, kind == 1
}

// decoded returns the state cur, which Redis holds, as an update starts
// from it: zero if this version cannot read it (written by a newer one, or
// damaged: it is replaced), or if it is past its expiry by this process's
// clock (forgotten, as in memory). kept reports whether st is cur.
func decoded(cur []byte) (st polite.KeyState, kept bool) {
	if len(cur) == 0 {
		return st, false
	}
	if st.UnmarshalBinary(cur) != nil {
		return polite.KeyState{}, false
	}
	if exp := st.Expiry(); !exp.IsZero() && !time.Now().Before(exp) {
		return polite.KeyState{}, false
	}
	return st, true
}

// swapOf returns the swap of key kid from cur, at version ver, to next,
// st's binary form, whose generation was before as the updates began: a
// write, or the key deleted (next is the zero state), or only a check
// (next is cur).
func (s *Store) swapOf(kid string, ver int64, cur, next []byte, st *polite.KeyState, before uint64) swap {
	gen := st.Generation()
	r := swap{expect: ver, id: kid, gen: gen, notify: gen > before}
	switch {
	case bytes.Equal(next, s.zero):
		r.mode = modeDelete
	case bytes.Equal(next, cur):
		r.mode = modeCheck
	default:
		r.mode, r.state = modeWrite, next
		r.tok = s.name + "." + strconv.FormatUint(s.writes.Add(1), 36)
		r.ttl = s.ttl(st.Expiry())
		// Every process using the key learns the new state, so that
		// its next update swaps without a failed try first.
		r.notify = r.notify || len(next) <= maxNotifyState
	}
	return r
}

// ttl returns the time to live of a state expiring at expiry.
func (s *Store) ttl(expiry time.Time) time.Duration {
	d := defaultTTL
	if !expiry.IsZero() {
		d = time.Until(expiry)
	}
	return max(d, 0) + s.margin()
}

// Wait blocks until key's generation is no longer gen (it grew, or the key
// expired and started over), or the key started over at gen itself (a
// state of another identity: see "Waiting across processes" in the
// package doc), until until (zero: no deadline), or ctx ends; nil but in
// the last case, ctx.Err() then. Waking costs no Redis call: every Store
// listens on its prefix's channel, where updates publish new generations.
// A wake published between the Update that returned gen and the call to
// Wait is not lost.
//
// Wait reads the key from Redis (one round trip) only when this process
// has not seen it since its subscription (re)started. While the Store is
// not subscribed (Redis does not answer), no notification can come: Wait
// then returns after RetryInterval at the latest, so that its caller looks
// again (and falls back to memory if Redis fails).
func (s *Store) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	s.init()
	s.start()
	kid := id(key)
	sh := s.shard(kid)
	e := sh.pin(kid)
	defer sh.unpin(e)

	var fire <-chan time.Time
	if !until.IsZero() {
		d := time.Until(until)
		if d <= 0 {
			return ctx.Err()
		}
		t := time.NewTimer(d)
		defer t.Stop()
		fire = t.C
	}
	var retry *time.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	var wt waiter
	for {
		epochCh := s.epochChan()
		epoch, live := s.epoch.Load(), s.subscribed.Load()
		changed, w := sh.watch(e, gen, &wt, epoch, live)
		switch w {
		case woken:
			return nil
		case unsure:
			if live {
				// A notification may have been missed: read the key,
				// within the wait's own bound.
				rctx, cancel := ctx, context.CancelFunc(nil)
				if !until.IsZero() {
					rctx, cancel = context.WithDeadline(ctx, until)
				}
				err := s.refresh(rctx, kid, e, epoch)
				if cancel != nil {
					cancel()
				}
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
						// The read ended with the context's deadline,
						// a moment before the context says so: wait
						// for it to, briefly, and return its error,
						// as Wait does (a DeadlineExceeded of its own,
						// with ctx.Err() still nil, was read by the
						// Budget as Redis failing).
						return deadlineErr(ctx)
					}
					return nil // Redis fails: the caller looks again
				}
				continue
			}
		}
		var poll <-chan time.Time
		if !live {
			// No notification can come: look again after a while.
			if retry == nil {
				retry = time.NewTimer(s.retryInterval())
			}
			poll = retry.C
		}
		select {
		case <-changed:
			// The generation changed (or the entry was reset): check.
		case <-epochCh:
			// The subscription started, stopped or an update failed.
		case <-poll:
			return nil
		case <-fire:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// refresh reads the key named kid from Redis, after the subscription went
// live at epoch, and records its generation. The read measures the
// server's clock as a swap does: an entry made again by a Wait (the key
// fell out, more than MaxKeys others used since) gets its measure back,
// and the next swap that takes a lease its limit.
func (s *Store) refresh(ctx context.Context, kid string, e *entry, epoch uint64) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	sent := time.Now().UnixMicro()
	vals, err := readScript.Run(ctx, s.rdb, []string{s.redisKey(kid)}, maxState).Slice()
	recv := time.Now().UnixMicro()
	if err != nil && err != redis.Nil {
		return fmt.Errorf("redisstore: read: %w", err)
	}
	vals = append(vals, nil, nil, nil) // a key absent: neither version nor state
	var ver int64
	var gen uint64
	var state []byte
	if v, ok := vals[1].(string); ok {
		ver, _ = strconv.ParseInt(v, 10, 64)
		if b, ok := vals[2].(string); ok {
			state = []byte(b)
			var st polite.KeyState
			if st.UnmarshalBinary(state) == nil {
				gen = st.Generation()
			}
		}
	}
	sh := s.shard(kid)
	if c, ok := vals[0].(string); ok {
		if clock, err := strconv.ParseInt(c, 10, 64); err == nil && clock > 0 {
			sh.measured(e, clock, sent, recv)
		}
	}
	sh.refreshed(e, ver, gen, state, epoch)
	return nil
}

// epochChan returns the channel closed when the subscription starts or
// stops, or Redis fails.
func (s *Store) epochChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epochCh
}

// wakeAll moves to a new epoch and wakes every waiter. s.mu must be held.
func (s *Store) wakeAll() {
	s.epoch.Add(1)
	close(s.epochCh)
	s.epochCh = make(chan struct{})
}

// setSubscribed records whether the subscription is live, waking every
// waiter when that changes (or when it was re-established: notifications
// may have been missed in between).
func (s *Store) setSubscribed(live bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !live && !s.subscribed.Load() {
		return
	}
	s.subscribed.Store(live)
	s.wakeAll()
}

// Close stops the Store's subscription and waits for it to end, for twice
// RetryInterval at most: a Redis that accepted the subscription's
// connection and never answers holds it until the client's timeouts end
// it (for ever with ReadTimeout -1), and the Store's goroutine ends then.
// Waits after Close do not wake on other processes' changes; updates
// still work. Close does not close the Redis client. It returns nil.
func (s *Store) Close() error {
	s.init()
	s.mu.Lock()
	s.closed = true
	s.wakeAll()
	stop, done, ps := s.stop, s.done, s.ps
	s.mu.Unlock()
	if stop != nil {
		stop()
		if ps != nil {
			// Ends a receive in progress; it waits for a reconnection
			// the client makes meanwhile, as long as its handshake.
			go ps.Close()
		}
		t := time.NewTimer(2 * s.retryInterval())
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		}
	}
	return nil
}

// Stats counts what a [Store] did since it was created.
type Stats struct {
	Updates int64 // calls of Update
	Swaps   int64 // compare-and-swap scripts run: Redis round trips of updates
	Stale   int64 // swaps that found a newer version than this process had seen
	Blocked int64 // swaps refused while another process had its turn
	Notes   int64 // notifications received
}

// Stats returns what s did so far.
func (s *Store) Stats() Stats {
	return Stats{
		Updates: s.stats.updates.Load(),
		Swaps:   s.stats.swaps.Load(),
		Stale:   s.stats.stale.Load(),
		Blocked: s.stats.blocked.Load(),
		Notes:   s.stats.notes.Load(),
	}
}

// grants returns how many leases the state b (a KeyState's binary form)
// granted; 0 for one that does not decode.
func grants(b []byte) uint64 {
	var c control.State
	if c.UnmarshalBinary(b) != nil {
		return 0
	}
	return c.Grants()
}

// deadlineErr returns ctx's error once ctx says it ended, its deadline
// passed, or context.DeadlineExceeded after 10 ms: a context whose Done
// closes late, or never (one that reports a deadline over
// context.Background), does not hold the caller.
func deadlineErr(ctx context.Context) error {
	t := time.NewTimer(10 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return context.DeadlineExceeded
	}
}
