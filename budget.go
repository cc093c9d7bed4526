package polite

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// Budget holds the pacing state of every budget key (by default, every
// origin) that one or more Transports talk to: the quotas the servers
// stated, the last observation of each, pauses, the requests in flight and
// the ramp-up after a pause. Transports that share a Budget share what they
// learn and pace together, as one client; Budgets in several processes that
// share a [Store] pace together too.
//
// The zero value is ready to use. A Budget is safe for concurrent use by
// multiple goroutines. Its fields must not be changed after first use, nor
// the Budget copied: a copy shares the original's state and secret, and
// keeps the settings the original had at its first use.
//
// Memory is bounded: a key unused for IdleTTL is forgotten (its next
// request starts fresh, with a probe), and the in-memory store keeps at
// most MaxKeys keys, the least recently used going first (but not one that
// requests wait on, nor one with a request in flight: see MemoryStore).
// No goroutine runs
// in the background; expired keys are dropped lazily as new requests
// arrive.
type Budget struct {
	// MaxKeys is the most budget keys kept at once in memory. If zero or
	// negative, 65536. It sizes the in-memory store used when Store is nil, and the
	// one used for a key while Store fails.
	MaxKeys int

	// IdleTTL is how long a key may go unused before it is forgotten,
	// measured from its last request or the end of its last pause,
	// whichever is later; never while a lease is out, nor before a stop
	// of retries ends, nor before the last start a stated quota counts
	// leaves its window (a key of 3 requests an hour is kept an hour), nor
	// before a cost quota spent from is whole again (5,000 points an hour,
	// 4,900 spent: kept until the hour ends), a day at most; nor before
	// MaxRate's spacing lets its next request start (a MaxRate of one
	// request in 3 days keeps a key 3 days). If zero or negative, 10
	// minutes.
	IdleTTL time.Duration

	// Store keeps the state of every key. If nil, a [MemoryStore] of
	// MaxKeys keys, private to this Budget. When Store.Update fails, the
	// request goes on with a private in-memory state for its key (pacing
	// by what this process sees: requests the Store granted, still in
	// flight, do not count against MaxConcurrency there; see DESIGN.md
	// §3; a pause, and MaxRate's spacing, carry over both ways, and a
	// pause the Store no longer holds, as after Forget in another
	// process, is dropped from the private state too), an
	// EventStoreDown is reported once, and the Budget tries Store again a
	// second later; EventStoreUp reports that it answered. The Update that ends a request (its answer, or
	// the end of a body that streamed) runs in the caller's goroutine
	// with the request's context detached, bounded by 10 seconds: a Store
	// that stops answering holds RoundTrip, or a streamed body's last
	// Read or Close, up to that long past the request's context, rather
	// than leave its slot taken in every process until its Lease ends.
	Store Store

	// MaxRate is the most requests per second started under one key by
	// all the Budget's Transports together (and, with a shared Store, by
	// every process), whatever the server says. If zero or negative, there
	// is no such ceiling. Transport.MaxRate bounds one Transport's own requests.
	MaxRate float64

	// MaxConcurrency is the most requests in flight under one key, by all
	// the Budget's Transports together, whatever the server says. If zero
	// or negative, there is no such ceiling. Transport.MaxConcurrency bounds one
	// Transport's own requests.
	MaxConcurrency int

	// Lease is the longest one request counts as in flight: a request
	// holds a lease until its response body ends (or its response arrives,
	// when the body comes with it), its context ends, or Lease has passed
	// since it started, whichever comes first, so that a process that dies
	// mid-request, or a body never closed, does not hold its slot forever.
	// A context cancelled while Base has not answered ends the lease when
	// Base returns (a Base that ignores the cancellation still has the
	// request in flight); a context's deadline ends it then in any case.
	// A lease ends up to Lease/16 after its deadline (leases are kept by
	// expiry slot). If zero or negative, 10 minutes.
	Lease time.Duration

	once     sync.Once
	cfg      control.Config
	mem      *MemoryStore // the store, when it keeps states in memory: no serialisation
	ext      Store        // the store, when it is another kind
	fallback *MemoryStore // for keys while ext fails
	secret   *[16]byte    // keys fingerprints; behind a pointer, which fmt prints as an address
	// down is, while ext fails, when to try it again (Unix nanoseconds):
	// positive once a request found it failing (EventStoreDown was
	// emitted), negative while only Inspect did; 0 while it answers.
	down atomic.Int64
	// retried is the latest retry instant of the Store (as down) a
	// request the fallback held for a pause claimed, to ask the Store
	// then (see wait): one such request a second, not all.
	retried atomic.Int64
	// The keys these two hold (a custom key among them: a credential)
	// are behind pointers, which fmt prints as addresses: a Budget held
	// by value in a caller's struct printed them verbatim.
	uncarried *uncarriedKeys
	leaves    *leaveQueue
}

// uncarriedKeys holds keys whose fallback state holds a pause the Store
// does not, which the release that taught it could not carry (the Store
// failed then): carried by the next request the Store answers, whatever
// its key, since the key's own next request may never come. At most
// maxUncarried; n is its length.
type uncarriedKeys struct {
	mu       sync.Mutex
	keys     []uncarried
	n        atomic.Int32
	carrying atomic.Bool // a goroutine of carryUncarried runs
	want     atomic.Bool // a run was asked for since the last began
	current  memKey      // the key it carries now, if busy
	busy     bool
}

// uncarried is a key of uncarriedKeys, with the tries to carry its pause
// that failed.
type uncarried struct {
	k      budgetKey
	blamed int       // tries that failed while another key's carry, right after, did not
	tries  int       // tries that failed
	next   time.Time // not tried again before then
	again  bool      // kept again while being carried: its fallback state may hold a later pause than the carry took
}

// maxCarryBlamed is how many failed tries to carry a key's pause, each
// followed by another key's carried, drop it from Budget.uncarried: a key
// the Store refuses whatever (one longer than it takes) would be tried
// for as long as its pause lasts. Its pause is carried at its next
// request then, as past maxUncarried. A failure followed by none carried
// may be an outage's, and blames no key.
const maxCarryBlamed = 3

// carryBackoffMax is the longest a key whose carry failed waits before
// its next try: from storeRetry, doubled at each failure. A key the Store
// refuses, with no other carried after it to blame it, was tried at every
// request the Store answered.
const carryBackoffMax = 8 * time.Second

// leaveQueue holds what requests that stopped waiting have to tell the
// Store, told by tellLeaves while telling; at most maxLeaves.
type leaveQueue struct {
	mu      sync.Mutex
	q       []leaving
	telling bool
}

// maxUncarried is the most keys a Budget keeps to carry their pauses to a
// Store that failed; past it, a key's pause is carried at its next
// request only.
const maxUncarried = 64

// maxPolicies is the most policies a key keeps, and the most a problem
// document may name.
const maxPolicies = 8

// storeRetry is how long a Budget goes on without a failing Store before
// trying it again.
const storeRetry = time.Second

// releaseTimeout bounds the Update that ends a request on a Store, which
// runs even when the request's context has ended.
const releaseTimeout = 10 * time.Second

func (b *Budget) init() {
	b.once.Do(func() {
		b.cfg = control.Config{MaxRate: b.MaxRate, MaxConcurrency: b.MaxConcurrency, IdleTTL: b.IdleTTL, Lease: b.Lease}
		switch s := b.Store.(type) {
		case nil:
			b.mem = &MemoryStore{MaxKeys: b.MaxKeys}
		case *MemoryStore:
			b.mem = s
		default:
			b.ext = s
			b.fallback = &MemoryStore{MaxKeys: b.MaxKeys}
		}
		b.secret = new([16]byte)
		rand.Read(b.secret[:])
		b.uncarried, b.leaves = new(uncarriedKeys), new(leaveQueue)
	})
}

// storeNote reports a change in a Store's health, for an event.
type storeNote struct {
	kind EventKind // EventStoreDown or EventStoreUp; "" when none
	err  error
}

// failed records a failure of the Store, the Store to be tried again
// storeRetry after it: after the failure, not after the call began (a
// Store that failed slowly, after a 5 s timeout, was tried again by the
// next request at once, and every request waited the timeout). The first
// failure after it answered is a transition.
func (b *Budget) failed(err error) storeNote {
	if b.down.Swap(time.Now().Add(storeRetry).UnixNano()) <= 0 {
		return storeNote{kind: EventStoreDown, err: err}
	}
	return storeNote{}
}

// answered records that the Store answered; the first answer after a
// failure a request found is a transition.
func (b *Budget) answered() storeNote {
	if b.down.Load() != 0 {
		if old := b.down.Swap(0); old != 0 {
			// Requests the fallback holds look at the Store again:
			// the key's state there decides from now on, and another
			// process may have cleared the pause held here
			// (Budget.Forget), which wakes only the Store's waiters.
			b.fallback.wakeAll()
			if old > 0 {
				return storeNote{kind: EventStoreUp}
			}
		}
	}
	return storeNote{}
}

// claimRetry reports whether a request the fallback holds is the first to
// claim the Store's retry instant r (see wait): it asks the Store then.
func (b *Budget) claimRetry(r int64) bool {
	old := b.retried.Load()
	return old < r && b.retried.CompareAndSwap(old, r)
}

// inspected records what Inspect's call of the Store found, err its
// error, as failed and answered do for a request's, but emitting nothing:
// a failure is a transition for the first request that finds the Store
// failing, and an answer ends only a failure no request found. (Not
// recorded, every Inspect waited for a Store that does not answer, to its
// timeout: a metrics scrape reading its keys one by one took ten seconds
// a key.)
func (b *Budget) inspected(err error) {
	for {
		old := b.down.Load()
		next := int64(0)
		switch {
		case err == nil && old >= 0:
			return // answering, or a failure a request found: it records the answer
		case err != nil:
			next = -time.Now().Add(storeRetry).UnixNano()
			if old > 0 {
				next = -next
			}
		}
		if b.down.CompareAndSwap(old, next) {
			if next == 0 {
				b.fallback.wakeAll() // as answered does
			}
			return
		}
	}
}

// retryAt returns when a failing Store is to be tried again (Unix
// nanoseconds); 0 while it answers.
func (b *Budget) retryAt() int64 {
	d := b.down.Load()
	if d < 0 {
		return -d
	}
	return d
}

// useExt reports whether the next call for a key goes to the Store: it
// answers, or its retry is due, or more than storeRetry away (the clock
// stepped back since the failure: waited for, the Store was not asked
// again for as long as the step).
func (b *Budget) useExt(now time.Time) bool {
	d := b.retryAt()
	n := now.UnixNano()
	return d == 0 || n >= d || d-n > int64(storeRetry)
}

// lease is a granted request.
type lease struct {
	control.Lease
	e     *memEntry     // the in-memory entry that granted it; nil for a Store's
	local bool          // granted by the fallback store
	ceil  reservation   // what the Transport's local ceilings reserved for it
	floor time.Duration // the interval robots.txt asks between starts to its origin (see ceilings.setFloor)
	at    time.Time     // when it was granted, with the monotonic clock, unless from says
	from  reading       // when it was granted, as the Transport's clock read it; its b is nil when at says
	// unkept reports that the Store failed the release that was to keep
	// it in flight while its body streams: the Store counts it as the
	// grant left it, and its end must free it so (see end).
	unkept bool
}

// granted returns when the lease was granted; zero when unknown.
func (l *lease) granted() time.Time {
	if l.from.b != nil {
		return l.from.time()
	}
	return l.at
}

// now returns the current instant. The lease's grant read the wall and the
// monotonic clocks; now reads the monotonic clock alone, which costs half
// as much, and counts from the grant.
func (l *lease) now() time.Time {
	n, _ := l.read()
	return n
}

// read returns the current instant as now does, and its instant on the
// controller's clock (control.Instant(now)), which a grant read by the
// Transport's clock gives for an addition. Counted from the clock's base
// instant rather than from the grant, it is the same instant: the grant
// is the base plus the monotonic time elapsed since it.
func (l *lease) read() (time.Time, int64) {
	if b := l.from.b; b != nil {
		r := reading{b, time.Since(b.t)}
		return r.time(), r.instant()
	}
	n := time.Now()
	if !l.at.IsZero() {
		n = l.at.Add(time.Since(l.at))
	}
	return n, control.Instant(n)
}

// arrival is when a response arrived, as a lease reads it (see read): its
// instant on the controller's clock, its wall-clock time, which is all that
// reading the response's fields needs, made without converting a
// monotonic reading, and its time.Time with the monotonic reading, made
// only when asked for.
type arrival struct {
	ns   int64     // the instant on the controller's clock
	wall time.Time // the same instant, perhaps without its monotonic reading
	r    reading   // the instant as the Transport's clock read it, when r.b is not nil
	t    time.Time // otherwise, the instant as read returned it
}

// arrive sets a, which is zero, to the current instant, as read reads it.
func (l *lease) arrive(a *arrival) {
	b := l.from.b
	if b == nil {
		a.t, a.ns = l.read()
		a.wall = a.t
		return
	}
	r := reading{b, time.Since(b.t)}
	if !r.exact() {
		a.t = r.time()
		a.ns, a.wall = control.Instant(a.t), a.t
		return
	}
	unix := b.unix + int64(r.d)
	wall := time.Unix(0, unix)
	if loc := b.t.Location(); loc != time.Local {
		wall = wall.In(loc)
	}
	a.ns, a.wall, a.r = control.InstantOf(unix), wall, r // set once: a is in memory
}

// time returns the instant with its monotonic clock reading, as read
// does.
func (a *arrival) time() time.Time {
	if a.r.b != nil {
		return a.r.time()
	}
	return a.t
}

// hold is a wait a store asked for.
type hold struct {
	control.Hold
	local bool // from the fallback store
	// ex is the quota of a Store's state that a request it held for good
	// (Never) exceeds, read in the Update that held it; nil otherwise.
	ex *control.Excess
}

// acquire asks k's state to start a request at now. A grant is written to
// g.
func (b *Budget) acquire(ctx context.Context, k budgetKey, now time.Time, ask control.Ask, g *lease) (hold, bool, storeNote, error) {
	if b.mem != nil {
		h, ok := b.mem.acquire(k.sh, k.m, now, &b.cfg, ask, g)
		return hold{Hold: h}, ok, storeNote{}, nil
	}
	return b.acquireExt(ctx, k, now, ask, g)
}

func (b *Budget) acquireExt(ctx context.Context, k budgetKey, now time.Time, ask control.Ask, g *lease) (hold, bool, storeNote, error) {
	var note storeNote
	if b.useExt(now) {
		// A pause this process learned while the Store was down carries
		// over to the Store's state; one it copied from the Store does
		// not: the Store's state is the truth, and another process may
		// have cleared it since (Budget.Forget).
		// So does the spacing of Budget.MaxRate, both ways: a request
		// the fallback granted a moment ago, and one the Store granted,
		// are a 1/MaxRate apart whichever state grants the next.
		// What fn reads and writes, in one variable: each one the
		// closure captures is moved to the heap.
		var r struct {
			c    carried
			l    control.Lease
			cost control.Cost
			h    control.Hold
			ok   bool
			ex   control.Excess // the quota a hold for good (Never) exceeds
			sp   time.Time      // the Store's pause, when it holds the request
			swhy control.Reason
			sr   time.Time // the Store's next start by MaxRate
			sa   time.Time // the Store's pause, whether it holds the request or not
			ask  control.Ask
		}
		r.c = b.toCarry(k, now)
		copies := b.fallback.copiesOf(k.m) // before the Store is read: see unmirror
		r.ask = ask
		r.ask.Shared = true
		r.cost = g.Cost()
		r.l.SetCost(r.cost)
		err := b.ext.Update(ctx, k.m.String(), func(s *KeyState) {
			r.c.apply(s, now, &b.cfg, b, k)
			r.sp, r.swhy, r.ex = time.Time{}, control.ReasonNone, control.Excess{} // the Store may run fn again
			if r.h, r.ok = s.c.Acquire(now, &b.cfg, r.ask, &r.l); !r.ok {
				r.sp, r.swhy = s.c.Paused(now)
				if r.h.Never {
					// Which quota, read with the hold: a second call to
					// ask would find another state, or fail.
					r.ex = s.c.Excess(now, &r.cost)
				}
			}
			r.sr = s.c.Spaced(now)
			r.sa, _ = s.c.Paused(now)
		})
		if err == nil {
			if !r.c.pu.IsZero() {
				// Carried: the Store's now, which another process may
				// clear (Budget.Forget), not to be carried again.
				b.fallback.mirrored(k.m, r.c.pu)
				copies++ // this one, read with the Store
			}
			b.fallback.unmirror(k.m, now, r.sa, copies, &b.cfg)
			if r.sp.After(now) {
				// A pause another process learned, kept in this one
				// too, as a release keeps its own: should the Store
				// fail, the fallback still holds the key for it.
				b.fallback.pause(k.m, now, r.sp, r.swhy, &b.cfg, k.custom)
			}
			if !r.sr.IsZero() {
				b.fallback.space(k.m, now, r.sr, &b.cfg, k.custom)
			}
			*g = lease{Lease: r.l, at: now, floor: g.floor} // the Crawl-delay the request carries stays for its next try
			if b.uncarried.n.Load() > 0 {
				b.carryUncarried()
			}
			h := hold{Hold: r.h}
			if r.h.Never {
				h.ex = &r.ex
			}
			return h, r.ok, b.answered(), nil
		}
		if ctx.Err() != nil {
			if outlasted(ctx, err) {
				// The Store failed as ctx ended: a call that outlasted
				// the request by a timeout of the Store's own. Every
				// request whose deadline is shorter than that timeout
				// would end so, and none find the Store down.
				note = b.failed(err)
			}
			return hold{}, false, note, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) && deadlinePassed(ctx) {
			// Ended at ctx's deadline, a moment before ctx says so:
			// ctx's end, not the Store failing (see wait).
			return hold{}, false, storeNote{}, deadlineErr(ctx)
		}
		note = b.failed(err)
	}
	h, ok := b.fallback.acquire(nil, k.m, now, &b.cfg, ask, g)
	g.local = true
	return hold{Hold: h, local: true}, ok, note, nil
}

// release applies the outcome of the request l granted.
func (b *Budget) release(ctx context.Context, k budgetKey, l *lease, now time.Time, out *control.Outcome) (control.Plan, storeNote) {
	switch {
	case b.mem != nil:
		return b.mem.release(k.m, now, &b.cfg, l, out), storeNote{}
	case l.local:
		plan := b.fallback.release(k.m, now, &b.cfg, l, out)
		b.ownPause(k, now, plan)
		var note storeNote
		if b.useExt(now) {
			// The Store answers again: a pause the answer taught goes
			// to it now, not at the key's next request, which may never
			// come (a refusal handed back, unretried), while other
			// processes go on sending.
			note = b.carry(ctx, k, now)
			if b.keepUncarried(k, now) {
				// The carry failed: tried again apart, as below.
				b.carryUncarried()
			}
		} else if b.keepUncarried(k, now) {
			// Within the second before the Store is tried again, which
			// may answer (the failure may have been one call's): tried
			// apart from the request, once for the key.
			b.carryUncarried()
		}
		return plan, note
	}
	plan, note, ok := b.releaseExt(ctx, k, *l, now, *out)
	l.unkept = !ok && out.Keep
	return plan, note
}

// carry writes to the Store a pause this process learned while the
// Store failed and did not carry over yet, and Budget.MaxRate's next
// start its fallback set granting (see acquireExt), bounded by
// releaseTimeout, and reports the Store's health as a release does.
func (b *Budget) carry(ctx context.Context, k budgetKey, now time.Time) storeNote {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	called, err := b.carryTo(ctx, k, now)
	switch {
	case err != nil:
		return b.failed(err)
	case called:
		return b.answered()
	}
	return storeNote{}
}

// carryTo is carry under ctx, recording nothing of the Store's health; it
// reports whether it called the Store.
func (b *Budget) carryTo(ctx context.Context, k budgetKey, now time.Time) (bool, error) {
	c := b.toCarry(k, now)
	if c.pu.IsZero() && c.fr.IsZero() {
		return false, nil
	}
	if err := b.ext.Update(ctx, k.m.String(), func(s *KeyState) { c.apply(s, now, &b.cfg, b, k) }); err != nil {
		return true, err
	}
	if !c.pu.IsZero() {
		b.fallback.mirrored(k.m, c.pu)
	}
	if !c.fr.IsZero() {
		b.fallback.space(k.m, now, c.fr, &b.cfg, k.custom) // carried: marked as the Store's
	}
	return true, nil
}

// carried is what the fallback holds of a key that its Store does not:
// a pause learned while the Store failed (zero: none), and Budget.MaxRate's
// next start the fallback set granting (zero: none).
type carried struct {
	pu  time.Time
	why control.Reason
	fr  time.Time
}

// toCarry returns what k's fallback state holds at now that the Store's
// does not.
func (b *Budget) toCarry(k budgetKey, now time.Time) carried {
	var c carried
	c.pu, c.why = b.fallback.learned(k.m, now)
	if b.MaxRate > 0 {
		c.fr = b.fallback.spaced(k.m, now)
	}
	return c
}

// apply bounds s, the Store's state, as of now (another process may have
// written it), and carries into it what b's fallback holds for k, read
// again within the Store's Update, into c. A Forget of k clears the
// fallback before the Store: read before that, the pause carried after the
// Store was cleared came back for its whole length, with no answer from
// the server since, in every process sharing the Store.
func (c *carried) apply(s *KeyState, now time.Time, cfg *control.Config, b *Budget, k budgetKey) {
	s.c.Bound(now, cfg)
	// What the fallback holds now, not what it held when c was read: a
	// pause forgotten since, and another learned after the Forget, wrote
	// the forgotten one.
	// Read again only when there was something to carry: the common
	// request, with nothing, takes no more locks.
	if !c.pu.IsZero() || !c.fr.IsZero() {
		fresh := b.toCarry(k, now)
		c.pu, c.why, c.fr = fresh.pu, fresh.why, fresh.fr
	}
	if !c.pu.IsZero() {
		s.c.PauseUntil(now, cfg, c.pu, c.why)
	}
	s.c.SpaceUntil(now, cfg, c.fr)
}

// releaseExt is release on a Store. It takes its own copy of the outcome,
// which the Store's callback keeps, so that the caller's does not escape.
func (b *Budget) releaseExt(ctx context.Context, k budgetKey, l lease, now time.Time, out control.Outcome) (control.Plan, storeNote, bool) {
	var (
		plan control.Plan
		pu   time.Time
		why  control.Reason
	)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	err := b.ext.Update(ctx, k.m.String(), func(s *KeyState) {
		plan = s.c.Release(now, &b.cfg, &l.Lease, &out)
		pu, why = s.c.Paused(now)
	})
	if err == nil {
		if !pu.IsZero() {
			// Kept in this process too: should the Store fail, the
			// fallback still holds the key for the pause it was told.
			b.fallback.pause(k.m, now, pu, why, &b.cfg, k.custom)
		}
		return plan, b.answered(), true
	}
	// The Store holds the lease until it expires; the answer still
	// teaches this process, and the plan comes from what it saw. The
	// fallback did not grant it, whatever its state's identity: it frees
	// none of its own requests' slots.
	note := b.failed(err)
	plan = b.fallback.release(k.m, now, &b.cfg, &lease{Lease: l.Lease.Foreign()}, &out)
	b.ownPause(k, now, plan)
	if b.keepUncarried(k, now) {
		// Carried apart from the request, which may have been the
		// key's last (a refusal handed back): the failure may have
		// been this call's alone.
		b.carryUncarried()
	}
	return plan, note, false
}

// ownPause records the pause plan, the fallback's release of an answer
// at now while the Store failed, set on k's state, as this process's own
// to carry (see MemoryStore.owned): a pause copied from the Store that
// ends later, which another process may clear, would otherwise hide it.
func (b *Budget) ownPause(k budgetKey, now time.Time, plan control.Plan) {
	if plan.Pause > 0 {
		b.fallback.owned(k.m, now.Add(plan.Pause), plan.Reason)
	}
}

// keepUncarried records k, if its fallback state holds a pause the Store
// does not, to be carried by the next request the Store answers (see
// Budget.uncarried). It reports whether k was not recorded yet.
func (b *Budget) keepUncarried(k budgetKey, now time.Time) bool {
	if pu, _ := b.fallback.learned(k.m, now); pu.IsZero() {
		return false
	}
	u := b.uncarried
	u.mu.Lock()
	defer u.mu.Unlock()
	for i := range u.keys {
		if u.keys[i].k.m == k.m {
			if u.busy && u.current == k.m {
				u.keys[i].again = true // carried now, from what the fallback held before
			}
			return false
		}
	}
	if len(u.keys) >= maxUncarried {
		return false
	}
	u.keys = append(u.keys, uncarried{k: budgetKey{m: k.m.clone(), custom: k.custom}})
	u.n.Store(int32(len(u.keys)))
	return true
}

// carryUncarried carries the pauses of Budget.uncarried into the Store, in
// a goroutine of its own (one at a time), so that no request waits for a
// Store that may still fail. A key whose carry fails goes behind the
// others, not tried again for a while (carryBackoffMax at most), and the
// next is tried: carried, it blames the one that failed (a key the Store
// refuses whatever, first, kept every other from the Store), which
// leaves the list at its maxCarryBlamed-th blame; failing too, the run
// stops, the Store likely down, and no key is blamed. Of the Store's
// health it records only an answer, as Inspect does (see inspected): a
// failure it kept would put every request on the fallback with no
// EventStoreDown, which a request that finds it reports.
//
// A run asked for while one goes on runs after it (a key listed during a
// run, which counted its keys as it began, was in none), unless its last
// try failed (the Store likely down: the next request it answers starts
// one). A key whose
// tries failed is tried again by the run a later request starts: a
// process that sends nothing more once the Store failed for longer than
// a call keeps its pause to itself (no timer of the Budget's calls the
// Store on its own).
func (b *Budget) carryUncarried() {
	u := b.uncarried
	u.want.Store(true)
	if !u.carrying.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			u.want.Store(false)
			failed := b.carryRun()
			u.carrying.Store(false)
			if failed || !u.want.Load() || !u.carrying.CompareAndSwap(false, true) {
				break
			}
		}
	}()
}

// carryRun is one run of carryUncarried: each key listed as it begins,
// once at most. It reports whether its last try failed.
func (b *Budget) carryRun() (failed bool) {
	u := b.uncarried
	u.mu.Lock()
	n := len(u.keys) // each key once a run at most
	u.mu.Unlock()
	var suspect budgetKey // the key whose carry failed last, if none was carried since (suspected)
	suspected := false
	for range n {
		// The head stays listed while it is carried, so that
		// keepUncarried finds it (taken out, the key was listed
		// twice once a request to it kept it meanwhile).
		u.mu.Lock()
		if len(u.keys) == 0 {
			u.mu.Unlock()
			return failed
		}
		head := u.keys[0]
		if time.Now().Before(head.next) {
			u.keys = append(u.keys[1:], head) // its turn comes later
			u.mu.Unlock()
			continue
		}
		u.current, u.busy = head.k.m, true
		u.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		called, err := b.carryTo(ctx, head.k, time.Now())
		cancel()
		u.mu.Lock()
		u.current, u.busy = memKey{}, false
		i := slices.IndexFunc(u.keys, func(o uncarried) bool { return o.k.m == head.k.m })
		switch {
		case err == nil:
			switch {
			case i < 0:
			case u.keys[i].again:
				// Kept again during the carry: carried again,
				// behind the others.
				o := u.keys[i]
				o.again = false
				u.keys = append(slices.Delete(u.keys, i, i+1), o)
			default:
				u.keys = slices.Delete(u.keys, i, i+1)
			}
			if called {
				b.inspected(nil)
				if suspected {
					// The Store took another key's: the one that
					// failed before it failed for its own.
					u.blame(suspect)
					suspected = false
				}
			}
		case i >= 0:
			o := u.keys[i]
			o.tries++
			o.next = time.Now().Add(min(storeRetry<<min(o.tries-1, 8), carryBackoffMax))
			u.keys = append(slices.Delete(u.keys, i, i+1), o) // behind the others
		}
		u.n.Store(int32(len(u.keys)))
		u.mu.Unlock()
		failed = err != nil
		if err != nil {
			if suspected {
				return true // two in a row: the Store, not a key
			}
			suspect, suspected = head.k, true
		}
	}
	return failed
}

// blame counts a failed carry against k (see carryUncarried), which
// leaves the list at maxCarryBlamed. u.mu is held.
func (u *uncarriedKeys) blame(k budgetKey) {
	for i := range u.keys {
		if u.keys[i].k.m == k.m {
			if u.keys[i].blamed++; u.keys[i].blamed >= maxCarryBlamed {
				u.keys = append(u.keys[:i], u.keys[i+1:]...)
			}
			return
		}
	}
}

// end ends the request l granted, whose release kept it in flight while
// its response body streamed. On a Store it is one Update, run even when
// the request's context has ended, bounded by releaseTimeout; should it
// fail, the Store's lease expires there. Should the release have failed,
// the Store still counts the request as its grant did, and the end frees
// it so: ended as a kept one, it freed nothing, and with MaxConcurrency 1
// the key's slot stayed taken in every process for the whole Lease.
func (b *Budget) end(ctx context.Context, k budgetKey, l *lease, now time.Time) storeNote {
	switch {
	case b.mem != nil:
		b.mem.end(k.m, now, &b.cfg, l)
		return storeNote{}
	case l.local:
		b.fallback.end(k.m, now, &b.cfg, l)
		return storeNote{}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	g, unkept := l.Lease, l.unkept
	err := b.ext.Update(ctx, k.m.String(), func(s *KeyState) {
		if unkept {
			s.c.EndUnkept(now, &b.cfg, &g)
			return
		}
		s.c.End(now, &b.cfg, &g)
	})
	if err == nil {
		return b.answered()
	}
	return b.failed(err)
}

// mayRetry reports whether the refusal r of the request g granted may be
// retried at now (see control.MayRetry), on the key's state: its short
// waits in a row, which double the floor, and its pause. On a Store the
// state costs a call, made only when the refusal's body would be read
// (ask): otherwise, or when the Store fails, the refusal alone answers.
func (b *Budget) mayRetry(ctx context.Context, k budgetKey, now time.Time, r *control.Refusal, g *lease, ask bool) bool {
	switch {
	case b.mem != nil:
		return b.mem.mayRetry(k.m, now, &b.cfg, r, &g.Lease)
	case g.local:
		return b.fallback.mayRetry(k.m, now, &b.cfg, r, &g.Lease)
	case !control.MayRetry(now, r, &g.Lease):
		return false
	case !ask || !b.useExt(now):
		return true
	}
	return b.storeMayRetry(ctx, k, now, *r, g.Lease)
}

// storeMayRetry is mayRetry on a Store's state for k, which it reads
// within drainTime (no longer than reading the body takes at most, which
// it spares); true when the Store fails, so that the refusal is read as
// without the state: its release tells the Store's health. r and l are
// copies, which the Update's closure holds: pointers to the caller's
// would move them to the heap on every request's path.
func (b *Budget) storeMayRetry(ctx context.Context, k budgetKey, now time.Time, r control.Refusal, l control.Lease) bool {
	ctx, cancel := context.WithTimeout(ctx, drainTime)
	defer cancel()
	may := true
	if b.ext.Update(ctx, k.m.String(), func(s *KeyState) { may = s.c.MayRetry(now, &b.cfg, &r, &l) }) != nil {
		return true
	}
	return may
}

// leave tells k's state that the request that first asked at since stopped
// waiting (see control.State.Leave), claimed if it was counted in the
// claim of its place, placed if it had a place among those waiting for a
// slot. On a Store it is queued for
// tellLeaves, so that the request, which failed its wait, returns at once,
// not when a slow Store is done. (Only a request that stops waiting takes
// this path, never one that is granted.) A change in the Store's health
// that telling it finds goes to note, from tellLeaves' goroutine.
//
// Telling is an economy, not a duty: a claim nobody leaves lapses on its
// own a grace or two after its turn (see control's turn.go), a place
// among those waiting for a slot with the first handoff of a slot to it
// (see control's handoff.go), so a leave the queue has no room for is
// dropped.
func (b *Budget) leave(ctx context.Context, k budgetKey, since time.Time, claimed, placed bool, note func(storeNote)) {
	now := time.Now()
	if b.mem != nil {
		b.mem.leave(k.m, now, since, claimed, placed)
		return
	}
	b.fallback.leave(k.m, now, since, claimed, placed)
	if !b.useExt(now) {
		return
	}
	q := b.leaves
	q.mu.Lock()
	if len(q.q) < maxLeaves {
		q.q = append(q.q, leaving{ctx: context.WithoutCancel(ctx), k: budgetKey{m: k.m.clone(), custom: k.custom}, since: since, claimed: claimed, placed: placed, note: note})
	}
	start := !q.telling
	q.telling = true
	q.mu.Unlock()
	if start {
		go b.tellLeaves()
	}
}

// leaving is a leave queued for tellLeaves.
type leaving struct {
	ctx     context.Context // the request's, without its cancellation
	k       budgetKey
	since   time.Time
	claimed bool // counted in the claim of its place (see control.State.Leave)
	placed  bool // with a place among those waiting for a slot (likewise)
	note    func(storeNote)
}

// maxLeaves is the most leaves a Budget queues for its Store; past it, a
// request that stops waiting leaves its claim to lapse.
const maxLeaves = 256

// tellLeaves tells the Store the leaves queued, until none is: the leaves
// of one key in one Update, bounded by releaseTimeout, one key after
// another. It runs in one goroutine at a time (leaveQueue.telling),
// however many requests stop waiting: a goroutine for each, when a Store
// hung, was as many goroutines as the requests that gave up in
// releaseTimeout. Should the Store fail, the leaves taken with that key's
// are dropped, and those queued later are told only once it answers
// again.
func (b *Budget) tellLeaves() {
	q := b.leaves
	var batch []leaving
	for {
		q.mu.Lock()
		if len(q.q) == 0 || !b.useExt(time.Now()) {
			clear(q.q)
			q.q, q.telling = q.q[:0], false
			q.mu.Unlock()
			return
		}
		batch, q.q = q.q, batch[:0]
		q.mu.Unlock()
		b.tellBatch(batch)
		clear(batch) // no request's context outlives its telling
	}
}

// tellBatch tells the Store the leaves of batch, one Update per key in
// the order the keys first appear, and stops at the first that fails.
func (b *Budget) tellBatch(batch []leaving) {
	var leaves []leaving
	for i, l := range batch {
		if l.note == nil {
			continue // told with an earlier leave of its key
		}
		leaves = append(leaves[:0], l)
		for j := i + 1; j < len(batch); j++ {
			if batch[j].note != nil && batch[j].k.m == l.k.m {
				leaves = append(leaves, batch[j])
				batch[j].note = nil
			}
		}
		ctx, cancel := context.WithTimeout(l.ctx, releaseTimeout)
		err := b.ext.Update(ctx, l.k.m.String(), func(s *KeyState) {
			for _, l := range leaves {
				s.c.Leave(l.since, l.claimed, l.placed)
			}
		})
		cancel()
		if err != nil {
			l.note(b.failed(err))
			return
		}
		l.note(b.answered())
	}
}

// wait blocks until the hold h may have ended: its store's generation
// for k moved past h.Gen, the instant until passed, or ctx ended. timer is
// reused across calls.
func (b *Budget) wait(ctx context.Context, k budgetKey, h hold, until time.Time, timer **time.Timer) (storeNote, error) {
	switch {
	case b.mem != nil:
		return storeNote{}, b.mem.wait(ctx, k.m, h.Gen, h.Born(), until, timer, true)
	case h.local:
		now := time.Now()
		if until.IsZero() {
			if !b.useExt(now) {
				// Woken when the Store answers again (see answered).
				return storeNote{}, b.fallback.wait(ctx, k.m, h.Gen, h.Born(), until, timer, true)
			}
			// Look again when the Store may answer again.
			return storeNote{}, b.fallback.wait(ctx, k.m, h.Gen, h.Born(), time.Unix(0, b.retryAt()), timer, true)
		}
		// A pause: woken when a request finds the Store answering again
		// (see answered), or sooner, to find it so, by one request held
		// here at each instant the Store may be tried again (the first
		// to claim it; the others look again a second on, should its
		// call fail): the key's state there decides from then on, and
		// another process may have cleared the pause (Budget.Forget),
		// which wakes only the Store's waiters. Every request held so
		// at once called a Store that was down, once a second each.
		for {
			at := until
			r := b.retryAt()
			if r == 0 {
				return storeNote{}, nil // the Store answers: the key's state there decides
			}
			if r < until.UnixNano() {
				if n := now.UnixNano(); r > n {
					at = time.Unix(0, r)
				} else {
					// The second since r that now falls in: one request
					// claims each (a claimer whose call outlasts its
					// second, or ended with its context and recorded
					// no failure, leaves r as it was).
					c := r + (n-r)/int64(storeRetry)*int64(storeRetry)
					if b.claimRetry(c) {
						return storeNote{}, nil
					}
					if next := time.Unix(0, c+int64(storeRetry)); next.Before(until) {
						at = next // after now: the loop never spins
					}
				}
			}
			if err := b.fallback.wait(ctx, k.m, h.Gen, h.Born(), at, timer, true); err != nil || at.Equal(until) {
				return storeNote{}, err
			}
			if now = time.Now(); now.Before(at) {
				return storeNote{}, nil // woken: the state changed, or the Store answers
			}
		}
	}
	err := b.ext.Wait(ctx, k.m.String(), h.Gen, until)
	switch {
	case err == nil:
		return storeNote{}, nil
	case ctx.Err() != nil:
		// ctx.Err() itself, as Store asks: a driver's error may name the
		// key, which no error shows.
		return storeNote{}, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded) && deadlinePassed(ctx):
		// A Store whose wait ended at ctx's deadline a moment before
		// ctx says so: ctx's end, not the Store failing (which would
		// report EventStoreDown and pace on memory for a second).
		return storeNote{}, deadlineErr(ctx)
	}
	return b.failed(err), nil
}

// deadlinePassed reports whether ctx has a deadline, and it has passed.
func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// outlasted reports whether err, the error of a Store call that returned
// after ctx ended, is the Store failing: not ctx's, and returned more than
// storeOutlast after ctx's deadline, as a timeout of the Store's own longer
// than the request's deadline ends its call. A Store may report the end of
// ctx in words of its own (a gRPC status, context.Cause), but does so as
// it comes: a request its caller cancelled, or whose deadline the Store
// answered at, is never the Store failing.
func outlasted(ctx context.Context, err error) bool {
	d, ok := ctx.Deadline()
	return ok && !errors.Is(err, ctx.Err()) && time.Since(d) > storeOutlast
}

// storeOutlast is how long after a request's deadline a Store call's
// error must come to be the Store's own (see outlasted): longer than a
// goroutine takes to run once the deadline's timer fires.
const storeOutlast = 25 * time.Millisecond

// deadlineWait bounds how long deadlineErr waits for a context to say
// that its deadline, passed, ended it.
const deadlineWait = 10 * time.Millisecond

// deadlineErr returns ctx's error once ctx says it ended, its deadline
// passed, or context.DeadlineExceeded after deadlineWait: a context whose
// Done closes late, or never (one that reports a deadline over
// context.Background), does not hold the request.
func deadlineErr(ctx context.Context) error {
	t := time.NewTimer(deadlineWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return context.DeadlineExceeded
	}
}

// display returns how k is shown in events, logs, errors and Inspect: an
// origin as it is, a custom key as its fingerprint.
func (b *Budget) display(k budgetKey) string {
	if k.custom {
		b.init()
		return fingerprint(b.secret[:], k.m.String())
	}
	return k.m.String()
}

// Forget clears what b knows of key: a URL or an origin (normalised as
// for a request: "http://API.example:80/x" names "http://api.example"), or
// a custom key. A custom key shaped like a URL ("https://api.example/a"
// returned by Transport.Key) is itself when b holds a state for it, and
// only then the origin it names. Its next request starts fresh, with a
// probe; requests waiting on it look again at once. Requests in flight
// on it still count against MaxConcurrency until they end, and the next
// start MaxRate allows stays: those are b's own ceilings, not what the
// key taught. With a Store, Forget
// clears the stored state too, on a best-effort basis: an error of the
// Store is ignored.
func (b *Budget) Forget(key string) {
	b.init()
	origin, raw, isOrigin := lookupKey(key)
	if !b.forget(raw) && isOrigin && origin != raw {
		b.forget(origin)
	}
}

// forget clears k, and reports whether b held a state for it, as Inspect
// judges it: one idle past its expiry is none, so that Forget of a URL
// goes on to the origin Inspect names for it.
func (b *Budget) forget(k memKey) bool {
	now := time.Now()
	if b.mem != nil {
		return b.mem.forget(k, now, &b.cfg)
	}
	found := b.fallback.forget(k, now, &b.cfg)
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	b.ext.Update(ctx, k.String(), func(s *KeyState) {
		if !s.c.IsZero() {
			// A state an earlier Forget left (see control.State.Blank)
			// is none, as MemoryStore, which drops it, judges; it is
			// forgotten again all the same, so that waiters wake.
			found = found || !s.c.Blank() && !forgettable(s, control.Instant(now))
			s.c.Forget(now, &b.cfg)
		}
	})
	return found
}
