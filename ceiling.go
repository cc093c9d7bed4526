package polite

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// ceilings keeps a Transport's local ceilings per key: MaxRate and
// MaxConcurrency bound the Transport's own requests, whatever other
// Transports on the same Budget do, and are never stored in the Budget.
// Entries live in a sharded map, and are dropped lazily once idle.
type ceilings struct {
	once   sync.Once
	seed   maphash.Seed
	floors atomic.Bool // some key has a floor: every request looks here
	// shards and readers are set up at the first use, behind pointers
	// that fmt prints as addresses: they hold the keys (a custom key may
	// hold a credential) and what their servers sent, which a Transport
	// printed by value, in a struct of the caller's, showed whole.
	shards *[ceilingShards]ceilingShard
	// readers read the responses of keys whose state a Store other than
	// a MemoryStore keeps, a key's by its hash (see reader): a fixed few,
	// whatever the number of keys.
	readers *[storeReaders]parse.Reader
}

// storeReaders is the number of ceilings.readers. Each remembers at most
// two field values of 4 KiB and their policies; keys that share one (by
// their hash) only read their policies again when they differ.
const storeReaders = 64

const (
	ceilingShards = 16
	// ceilingSweep is the size of a shard beyond which each new key
	// looks for idle entries to drop; ceilingHard the size beyond which
	// it drops one whose stated quota still lifts Restraint too.
	ceilingSweep = 1024
	ceilingHard  = 4 * ceilingSweep
)

type ceilingShard struct {
	mu sync.Mutex
	m  map[memKey]*ceiling
	_  [40]byte // keeps shards on separate cache lines
}

// ceiling is one key's local state.
type ceiling struct {
	next int64 // when the next start may go (Unix nanoseconds)
	seen int64 // the latest instant a start was asked for (Unix nanoseconds), to tell the clock stepping back
	// inflight counts the key's requests in flight, each until it ends
	// or its lease (Budget.Lease, or its context's deadline) does: a
	// request whose Base never returns holds its slot no longer than it
	// holds the Budget's.
	inflight control.InFlight
	// floor is the least time between two starts, beyond 1/MaxRate: the
	// interval the robots.txt of the key's origin asks for (Crawl-delay,
	// Request-rate), set before each request (see setFloor) and carried
	// by it to an entry made anew (see reserve), applied like a local
	// ceiling.
	floor time.Duration
	// crawl reports that the floor, not MaxRate, spaced the last start.
	crawl bool
	// stated is when the key's server last stated a quota, or a request
	// to it last started since (Unix nanoseconds; 0: never). Restraint
	// does not apply to the key until it has gone unused for idle (the
	// Budget's IdleTTL) from then, or the longest window stated, win, if
	// longer, when the budget forgets the quota and nothing paces the key
	// again (see quoted).
	stated  int64
	said    int64         // when a response last stated a quota (Unix nanoseconds; 0: never)
	idle    int64         // the Budget's IdleTTL, as the latest reserve gave it
	win     int64         // the longest window a quota of the key stated, at most a day
	grad    *gradient     // Restraint.Adaptive's limit; nil until needed
	changed chan struct{} // closed when a slot frees or a turn passes; nil when nobody waits
	// Requests the pace holds (MaxRate, the floor) start in the order
	// they were first held: each takes a ticket, tail the next to hand
	// out, and head is the one whose turn it is; head == tail when none
	// is held. wait[off:] holds the tickets of the requests in line, in
	// order (head first); those that stopped waiting before their turn
	// are marked (gaveUp), and no more than the ones still waiting (see
	// drop). (Kept apart, their tickets grew with every request that gave
	// up while one waited a minute's pace, and passing a turn over them
	// took the square of their number.)
	head, tail uint64
	wait       []uint64
	off, dead  int // wait[off:] is the line, dead of it given up (see drop)
}

// reservation is one start the local ceilings let go, until the budget
// confirms it; once it does, the request's lease keeps it until the
// request ends.
type reservation struct {
	prev, next int64
	ok         bool      // a start was reserved
	start      time.Time // when, with its monotonic reading (Restraint.Adaptive's latency, whatever the wall clock does meanwhile)
	end        int64     // when its lease ends (see ceiling.inflight)
	inflight   int       // the key's requests in flight then, itself included
	answer     int       // how its answer samples the latency: sampleAnswer, sampleError for a 5xx (see gradient.observeError), sampleNone for a cache's
	quoted     bool      // Restraint did not apply: a quota stated still paced the key (see forgot)
	floor      floorReservation
}

// floorReservation is one start under the floor of an origin whose
// requests are kept under another key (see reserveFloor).
type floorReservation struct {
	origin     memKey
	prev, next int64
	ok         bool
}

func (c *ceilings) shard(k memKey) *ceilingShard {
	c.once.Do(func() {
		c.seed = maphash.MakeSeed()
		c.shards, c.readers = new([ceilingShards]ceilingShard), new([storeReaders]parse.Reader)
		for i := range c.shards {
			c.shards[i].m = make(map[memKey]*ceiling)
		}
	})
	return &c.shards[maphash.String(c.seed, k.host)%ceilingShards]
}

// quoted reports that a quota the key's server stated still paces it at
// n: Restraint does not apply.
func (e *ceiling) quoted(n int64) bool {
	return e.stated != 0 && n-e.stated <= max(e.idle, e.win)
}

// forgot records that k's budget granted a request at now from a state
// that knew no quota stated: it forgot the quota (Budget.Forget, eviction
// past MaxKeys, a Store's expiry) unless a response stated one since
// (after now). Restraint applies again: kept lifted on the Transport's
// memory alone, 16 requests were in flight to an origin its budget paced
// by nothing.
func (c *ceilings) forgot(k memKey, now time.Time) {
	sh := c.shard(k)
	sh.mu.Lock()
	if e := sh.m[k]; e != nil && e.said < now.UnixNano() {
		e.stated, e.win = 0, 0
	}
	sh.mu.Unlock()
}

// ceilingHold is a wait the local ceilings ask for: until an instant, or
// until changed is closed.
type ceilingHold struct {
	until   time.Time
	wake    time.Time // when to look again at the latest; zero: none
	changed <-chan struct{}
	reason  Reason
}

// reserve takes one start for k at now within maxRate (requests per
// second; 0: none), maxConc (0: none), k's floor and, while k's server has
// stated no quota, rs (nil: none), or says how long to hold and why. The
// start counts in flight until the request ends, or until its lease ends:
// lease (0: control.DefaultLease) from now, or its context's deadline,
// until (zero: none), if sooner. floor
// is the floor the request found when it began (see setFloor): an entry
// made anew takes it, so that an entry dropped while the request waited
// (see sweep) does not lose it. An entry kept keeps its own, which the
// latest request set: a request that read a robots.txt since refreshed
// does not bring back a floor lifted meanwhile. *tk is the
// request's ticket in the line of those the pace holds (0: none): a
// request the pace holds takes one, and one behind another's ticket waits
// for its turn; the start granted ends it. A request that stops waiting
// with a ticket gives it up (see leave).
func (c *ceilings) reserve(k memKey, now time.Time, maxRate float64, maxConc int, rs *Restraint, floor time.Duration, tk *uint64, until time.Time, lease, idle time.Duration) (reservation, ceilingHold, bool) {
	sh := c.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[k]
	if e == nil {
		if len(sh.m) >= ceilingSweep {
			sh.sweep(now.UnixNano())
		}
		e = &ceiling{floor: max(floor, 0)}
		sh.m[k.clone()] = e
	}
	n := now.UnixNano()
	inst := control.Instant(now)
	if e.inflight.Reap(inst) {
		e.wake() // slots of leases ended are free
	}
	if idle <= 0 {
		idle = control.DefaultIdleTTL
	}
	e.idle = int64(idle)
	quoted := e.quoted(n)
	if rs != nil && !quoted {
		maxConc = rs.limit(e, maxConc, now)
	}
	if maxConc > 0 && e.inflight.N() >= maxConc {
		if e.changed == nil {
			e.changed = make(chan struct{})
		}
		// In line, as for the pace (see line): the slot that frees goes
		// to the request held longest, not to whichever wakes first,
		// which left some waiting for a minute while 16 workers shared 4
		// slots of a second each.
		e.take(tk)
		// Until a slot frees: a request ends, or the earliest lease,
		// or the adaptive limit's drain ends, which doubles it.
		h := ceilingHold{changed: e.changed, reason: ReasonConcurrency}
		if next := e.inflight.Next(); next != 0 {
			h.wake = time.Unix(0, next)
		}
		// (Only while Restraint applies, which ended a drain past its
		// end: a key stating a quota keeps its gradient as it was, and
		// a drain's end long past woke its requests at once, again and
		// again, while MaxConcurrency held them.)
		if g := e.grad; rs != nil && !quoted && g != nil && g.mDrain && g.mEnd.After(now) && (h.wake.IsZero() || g.mEnd.Before(h.wake)) {
			h.wake = g.mEnd
		}
		return reservation{}, h, false
	}
	why := ReasonPace
	if e.crawl {
		why = ReasonCrawlDelay
	}
	e.stepBack(n)
	if h, held := e.line(n, tk, why); held {
		return reservation{}, h, false
	}
	interval := e.floor
	e.crawl = interval > 0
	if maxRate > 0 {
		if d := rateInterval(maxRate); d >= interval {
			interval, e.crawl = d, false
		}
	}
	end := e.inflight.Start(inst, until, lease)
	r := reservation{prev: e.next, next: addSat(max(e.next, n), int64(interval)), ok: true, start: now, end: end, inflight: e.inflight.N(), quoted: quoted && rs != nil}
	e.next = r.next
	if quoted {
		e.stated = n // used: the budget keeps the quota as long again
	}
	return r, ceilingHold{}, true
}

// maxInterval bounds the time between two starts a MaxRate asks for: a
// century, far beyond any MaxWait, so that a rate too small for its
// interval to fit a Duration (or for the next start to fit an int64)
// still spaces starts rather than overflowing to none.
const maxInterval = 100 * 365 * 24 * time.Hour

// rateInterval returns the time between two starts at rate requests per
// second (rate > 0), at most maxInterval.
func rateInterval(rate float64) time.Duration {
	d := float64(time.Second) / rate
	if !(d < float64(maxInterval)) {
		return maxInterval
	}
	return time.Duration(d)
}

// addSat returns a+b for b >= 0, saturating at the largest int64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// reserveFloor takes one start at now under the floor of the origin o (a
// robots.txt Crawl-delay), when requests to o are kept under another key
// (Transport.Key): the floor paces the origin, whatever keys its requests
// have, one a key or one for many origins. It returns the start reserved
// (ok false when o has no floor), or how long to hold; *tk is the
// request's ticket in o's line, as in reserve. floor is the floor the
// request found when it began, which an entry of o made anew takes, as in
// reserve.
func (c *ceilings) reserveFloor(o memKey, now time.Time, floor time.Duration, tk *uint64) (floorReservation, ceilingHold, bool) {
	sh := c.shard(o)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[o]
	if e == nil && floor > 0 {
		if len(sh.m) >= ceilingSweep {
			sh.sweep(now.UnixNano())
		}
		e = &ceiling{floor: floor}
		sh.m[o.clone()] = e
	}
	if e == nil || e.floor <= 0 {
		if e != nil {
			e.drop(*tk) // the floor was lifted: no line
		}
		*tk = 0
		return floorReservation{}, ceilingHold{}, true
	}
	n := now.UnixNano()
	e.stepBack(n)
	if h, held := e.line(n, tk, ReasonCrawlDelay); held {
		return floorReservation{}, h, false
	}
	r := floorReservation{origin: o, prev: e.next, next: addSat(n, int64(e.floor)), ok: true}
	e.next = r.next
	return r, ceilingHold{}, true
}

// cancelFloor gives back a start reserveFloor took, unless a later one
// was taken since.
func (c *ceilings) cancelFloor(r floorReservation) {
	if !r.ok {
		return
	}
	sh := c.shard(r.origin)
	sh.mu.Lock()
	if e := sh.m[r.origin]; e != nil && e.next == r.next {
		e.next = r.prev
		e.wake() // the line looks again: the start is back
	}
	sh.mu.Unlock()
}

// reader returns the parse.Reader of k's responses, for a key whose state a
// Store other than a MemoryStore keeps: one of c.readers, which k may share
// with other keys. A Reader shared reads the policies of each server that
// states other policies than the last again, and reads them right; an entry
// of k's own would keep what it remembers, up to two values of 4 KiB and
// their policies, for every key seen (the entries are not bounded by
// Budget.MaxKeys).
func (c *ceilings) reader(k memKey) *parse.Reader {
	c.shard(k) // sets the seed
	return &c.readers[maphash.String(c.seed, k.host)%storeReaders]
}

// nextStart returns when the local pace lets the next request under k
// start (Unix nanoseconds); 0 when k has no entry.
func (c *ceilings) nextStart(k memKey) int64 {
	sh := c.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.m[k]; e != nil {
		return e.next
	}
	return 0
}

// setFloor sets the least time between two starts under k, beyond
// 1/MaxRate (0: none), such as a robots.txt Crawl-delay: a floor no
// header can lower, kept by this Transport like its own MaxRate. It is
// set before each request, so that an entry dropped while idle gets it
// back.
func (c *ceilings) setFloor(k memKey, d time.Duration) {
	d = max(d, 0)
	sh := c.shard(k)
	sh.mu.Lock()
	e := sh.m[k]
	switch {
	case e != nil:
		e.floor = d
	case d > 0:
		if len(sh.m) >= ceilingSweep {
			sh.sweep(time.Now().UnixNano())
		}
		sh.m[k.clone()] = &ceiling{floor: d}
	}
	sh.mu.Unlock()
	if d > 0 && !c.floors.Load() {
		c.floors.Store(true)
	}
}

// cancel gives back a reservation the budget did not confirm.
func (c *ceilings) cancel(k memKey, r reservation) {
	c.cancelFloor(r.floor)
	sh := c.shard(k)
	sh.mu.Lock()
	if e := sh.m[k]; e != nil {
		if e.next == r.next {
			e.next = r.prev // no later start was reserved: undo this one
		}
		e.done(r.end)
	}
	sh.mu.Unlock()
}

// done ends the request r started under k, at now, with outcome out,
// the request costing cost (see learn).
func (c *ceilings) done(k memKey, r *reservation, now time.Time, out *control.Outcome, cost control.Cost) {
	c.update(k, r, now, out, cost, true)
}

// learn learns from the outcome out of the request r started under k,
// which stays in flight (its body streams; end ends it) and costs cost: a
// quota it states that paces the request lifts Restraint from k (see
// paces); the latency of a response served (from r's start to its
// headers, or to now when its body came with them) feeds
// Restraint.Adaptive's limit.
func (c *ceilings) learn(k memKey, r *reservation, now time.Time, out *control.Outcome, cost control.Cost) {
	c.update(k, r, now, out, cost, false)
}

// paces reports whether a quota of qs paces a request costing cost, so
// that a key stating it is paced by what it states: a quota of requests,
// of requests in flight or of content bytes (which every request counts
// against), or one in a unit the request costs something in. A quota in
// another unit ("widgets"; "tokens" for a request that declares none)
// bounds nothing the request sends until it is spent: lifting Restraint
// for it left the key paced by nothing, and a stray header could do so
// on a whole site. And it must bound something alone: a remaining count,
// or a positive limit of requests with its window (of requests in flight,
// a positive limit alone), which the budget paces by (other units only by
// what is left). A
// limit with no window and nothing left stated (X-RateLimit-Limit without
// its fellows, a RateLimit-Policy with no w), or one of content bytes
// with no remaining count, paces nothing, and lifted Restraint for good
// from an origin that sent it on every answer.
func paces(qs []parse.Quota, cost control.Cost) bool {
	for i := range qs {
		q := &qs[i]
		u := q.Unit
		if costUnit(u) && cost.In(u) <= 0 {
			continue
		}
		switch {
		case q.Remaining >= 0:
			return true
		case q.Limit <= 0:
			// None (a limit of 0 with nothing left stated paces
			// nothing either: the budget paces by a positive q).
		case u == "concurrent-requests":
			return true
		case q.Window > 0 && (u == "" || u == "requests"):
			return true
		}
	}
	return false
}

// end ends the request r started under k, whose outcome learn took.
func (c *ceilings) end(k memKey, r *reservation) {
	sh := c.shard(k)
	sh.mu.Lock()
	if e := sh.m[k]; e != nil {
		e.done(r.end)
	}
	sh.mu.Unlock()
}

func (c *ceilings) update(k memKey, r *reservation, now time.Time, out *control.Outcome, cost control.Cost, end bool) {
	sh := c.shard(k)
	sh.mu.Lock()
	if e := sh.m[k]; e != nil {
		// Requests held by Restraint look again when it lifts, or when
		// its limit rises, as they do when a slot frees.
		wake := false
		switch {
		case paces(out.Quotas, cost):
			n := now.UnixNano()
			wake = !e.quoted(n)
			e.stated, e.said = max(n, 1), max(n, 1)
			for i := range out.Quotas {
				// A budget keeps a key while a start its quota counts
				// is within the quota's window: as long as that, and
				// so does Restraint's lifting.
				e.win = max(e.win, int64(min(out.Quotas[i].Window, 24*time.Hour)))
			}
		case e.grad != nil && r.answer == sampleNone:
			// A cache's answer samples nothing, but ends a measurement
			// past its end.
			lim := e.grad.limit()
			e.grad.expire(now)
			wake = e.grad.limit() > lim
		case e.grad != nil && !e.quoted(now.UnixNano()) && !out.Failed && !out.Refused && !out.Transient:
			lim := e.grad.limit()
			e.grad.sample(now, now.Sub(r.start), r.inflight, r.answer)
			wake = e.grad.limit() > lim
		}
		if end {
			e.done(r.end)
		}
		if wake {
			// Restraint lifted, or the adaptive limit raised: a change
			// its waiters wait for, whether or not the end freed a slot
			// (a request whose lease ended before its answer frees
			// none, and the lift its answer brought woke no one).
			e.wake()
		}
	}
	sh.mu.Unlock()
}

// done ends the request in flight whose lease ends at end, which frees
// a slot, unless its lease freed it already.
func (e *ceiling) done(end int64) {
	if e.inflight.End(end) {
		e.wake()
	}
}

// wake wakes the requests held by e's concurrency limits.
func (e *ceiling) wake() {
	if e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
}

// clockStep is how far before the latest the instant of a reserve must be
// for stepBack to take it for the wall clock stepping back. An instant
// read before the lock, or a retry's taken at its failure (a second of
// draining before), is not so old.
const clockStep = time.Minute

// stepBack moves the next start back with the wall clock when n, the
// instant of a reserve, is more than clockStep before the latest one: a
// start reserved before the clock stepped back (an NTP correction) held
// the key for the whole step (48 hours after a step of two days), where
// control.State bounds its own. What was left of the spacing is kept.
func (e *ceiling) stepBack(n int64) {
	if e.seen != 0 && n < e.seen-int64(clockStep) {
		if e.next > n {
			e.next = max(n, e.next-(e.seen-n))
		}
		e.seen = n
		return
	}
	e.seen = max(e.seen, n)
}

// line takes a start at n for the request whose ticket is *tk, in the
// order requests the pace held were first held, or says how long to hold
// (why: what for): until e.next, or while it is another's turn (see
// reserve). The start taken ends the ticket.
func (e *ceiling) line(n int64, tk *uint64, why Reason) (ceilingHold, bool) {
	mine := *tk != 0 && *tk-1 == e.head // tickets are held plus one: 0 is none
	if n < e.next || e.head != e.tail && !mine {
		e.take(tk) // in line, behind those held before
		// Until the next start, or a change before it (a start given
		// back, the turn passed): the line looks again.
		if e.changed == nil {
			e.changed = make(chan struct{})
		}
		h := ceilingHold{changed: e.changed, reason: why}
		if n < e.next {
			h.until = time.Unix(0, e.next)
		} // else the start is free, but it is another's turn
		return h, true
	}
	if mine {
		e.pass()
	}
	*tk = 0
	return ceilingHold{}, false
}

// take gives a request held a ticket in line, unless it has one (*tk
// not 0).
func (e *ceiling) take(tk *uint64) {
	if *tk != 0 {
		return
	}
	if e.off > 0 && e.off >= len(e.wait)/2 {
		e.compact() // the array's front, passed, serves again
	}
	e.wait = append(e.wait, e.tail)
	e.tail++
	*tk = e.tail // tickets are held plus one: 0 is none
}

// maxIdleLine is the most tickets the array of an empty line keeps room
// for.
const maxIdleLine = 64

// gaveUp marks a ticket of wait whose request stopped waiting: it stays,
// in its place, until the turn passes it or the line is compacted.
const gaveUp = 1 << 63

// pass passes the turn on to the next ticket still waiting, and wakes the
// requests held for it: in constant time, but for the tickets given up it
// passes over, each passed once.
func (e *ceiling) pass() {
	if e.off < len(e.wait) && e.wait[e.off] == e.head {
		e.off++
	}
	for e.off < len(e.wait) && e.wait[e.off]&gaveUp != 0 {
		e.off++
		e.dead--
	}
	if e.off < len(e.wait) {
		if e.dead > (len(e.wait)-e.off)/2 {
			e.compact() // no more given up than waiting, after a turn as after a drop
		}
		e.head = e.wait[e.off]
	} else {
		e.head, e.off, e.dead = e.tail, 0, 0
		e.wait = e.wait[:0]
		if cap(e.wait) > maxIdleLine {
			e.wait = nil // a crowd's array goes with it
		}
	}
	e.wake()
}

// compact moves the tickets still waiting to the front of wait.
func (e *ceiling) compact() {
	n := 0
	for _, t := range e.wait[e.off:] {
		if t&gaveUp == 0 {
			e.wait[n] = t
			n++
		}
	}
	clear(e.wait[n:])
	e.wait, e.off, e.dead = e.wait[:n], 0, 0
}

// leave gives up the ticket tk (0: none; see reserve) of a request under k
// that stopped waiting before its turn.
func (c *ceilings) leave(k memKey, tk uint64) {
	if tk == 0 {
		return
	}
	sh := c.shard(k)
	sh.mu.Lock()
	if e := sh.m[k]; e != nil {
		e.drop(tk)
	}
	sh.mu.Unlock()
}

// drop gives up the ticket tk (0: none) of a request that will not take
// its turn.
func (e *ceiling) drop(tk uint64) {
	switch {
	case tk == 0 || tk-1 < e.head || tk-1 >= e.tail:
	case tk-1 == e.head:
		e.pass()
	default:
		live := e.wait[e.off:]
		i, ok := slices.BinarySearchFunc(live, tk-1, func(t, target uint64) int { return cmp.Compare(t&^gaveUp, target) })
		if !ok || live[i]&gaveUp != 0 {
			return
		}
		live[i] |= gaveUp
		e.dead++
		// The last ones go at once: a request that gives up as soon as
		// it is held (its deadline, MaxWait) is most often the last.
		for n := len(e.wait); n > e.off && e.wait[n-1]&gaveUp != 0; n-- {
			e.wait, e.dead = e.wait[:n-1], e.dead-1
		}
		if e.dead > (len(e.wait)-e.off)/2 {
			e.compact()
		}
	}
}

// sweep drops a few entries that hold nothing: no request in flight,
// nobody waiting, no start reserved ahead, and no stated quota that still
// lifts Restraint (see quoted). A floor comes back with the next
// reservation, which carries it (see reserve); what Restraint learned of
// a key is learned again. Dropped while its quota lifted it, an origin
// that stated its quota once was held to Restraint's limit again within
// two seconds, once thousands of other origins were seen.
//
// Once the shard holds ceilingHard entries, a quota that lifts
// Restraint no longer keeps an entry, and if none of those it looked at
// could go so, it drops the one whose next start is the latest, though
// ahead: a start reserved up to a day ahead (a Crawl-delay, a tiny
// MaxRate) otherwise kept an entry a day for every origin seen, one per
// origin of a crawl through a server's subdomains each asking a day. That
// origin's next request may start early, once. The latest, not the
// soonest: dropping the soonest dropped an origin asking an hour each
// time a sweep looked at it, among a flood asking a day, and its requests
// went minutes apart; the latest is a flood's own, and to drop another's
// a server must ask less than it.
func (sh *ceilingShard) sweep(now int64) {
	seen, hard, dropped := 0, len(sh.m) >= ceilingHard, false
	var latest *ceiling
	var latestKey memKey
	for k, e := range sh.m {
		if e.inflight.N() == 0 && e.changed == nil && e.head == e.tail {
			switch {
			case e.next <= now && (hard || !e.quoted(now)):
				delete(sh.m, k)
				dropped = true
			case hard && (latest == nil || e.next > latest.next):
				latest, latestKey = e, k
			}
		}
		if seen++; seen >= 4 {
			break
		}
	}
	if !dropped && latest != nil {
		delete(sh.m, latestKey)
	}
}
