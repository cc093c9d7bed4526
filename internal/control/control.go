// Package control is the per-key controller of package polite: everything
// one budget key knows (the policies its server stated, the live
// observations, the pause, the probe and ramp-up, the learned quota, the
// retry budget, the leases of the requests in flight), as one plain value
// that changes only through [State.Acquire] and [State.Release], at instants
// the caller passes in.
//
// Nothing here locks, blocks, starts a goroutine, reads a clock or draws a
// random number: jitter comes in as a value ([Outcome.Rand]). A store keeps
// the State (in memory, or serialised with [State.MarshalBinary] anywhere
// else) and runs these two methods atomically per key; the waiting happens
// outside, in the store and the Transport. DESIGN.md at the module root
// describes the rules; the package documentation of polite states them for
// users.
package control

import (
	"math"
	"math/bits"
	"time"

	"github.com/politehttp/polite/parse"
)

// Reason says why a request waits, or why a retry was denied. Package polite
// maps it to its exported string Reason.
type Reason uint8

// The reasons, in the order of polite's Reason constants.
const (
	ReasonNone        Reason = iota
	ReasonPace               // a policy's q per w, the learned quota's, or MaxRate
	ReasonQuota              // the live quota r is spent
	ReasonRetryAfter         // Retry-After
	ReasonBackoff            // a refusal that gave no wait
	ReasonAdaptive           // the learned quota
	ReasonRetryBudget        // retries used up their share
	ReasonStopped            // abnormal usage reported
	ReasonConcurrency        // too many requests in flight
	ReasonProbe              // a probe is out
	ReasonTransient          // a transient failure retried by backoff
	numReasons
)

// Config is what a Budget sets for all its keys. It is not part of the
// state: every call passes it.
type Config struct {
	// MaxRate is the most requests per second started under one key, by
	// all Transports together; 0: no ceiling.
	MaxRate float64
	// MaxConcurrency is the most requests in flight under one key, by all
	// Transports together; 0: no ceiling.
	MaxConcurrency int
	// IdleTTL is how long a state is kept after its last request and the
	// end of its pause; 0: DefaultIdleTTL.
	IdleTTL time.Duration
	// Lease is the longest a request counts as in flight; 0: DefaultLease.
	Lease time.Duration
}

// Defaults of Config.
const (
	DefaultIdleTTL = 10 * time.Minute
	DefaultLease   = 10 * time.Minute
)

func (c *Config) idleTTL() int64 {
	if c.IdleTTL > 0 {
		return int64(min(c.IdleTTL, maxSpan))
	}
	return int64(DefaultIdleTTL)
}

func (c *Config) lease() int64 {
	if c.Lease > 0 {
		return int64(min(c.Lease, maxSpan))
	}
	return int64(DefaultLease)
}

// paceSpan returns the spacing of starts MaxRate (positive) sets, in
// nanoseconds: a MaxRate so small that the spacing would overflow spaces
// starts by maxSpan.
func (c *Config) paceSpan() int64 {
	return int64(max(1, min(float64(time.Second)/c.MaxRate, float64(maxSpan))))
}

// holdSpan returns the longest any hold of a state may last from the
// instant it is read: MaxPause, or the longest lease when longer (see
// State.bound). Without a division for a Lease of a day or less.
func (c *Config) holdSpan() int64 {
	if c.Lease <= 22*time.Hour {
		return int64(MaxPause) // a lease of 22h and its slot end within it
	}
	l := c.lease()
	return max(int64(MaxPause), l+l/leaseSlots)
}

// Ask is what a request brings to Acquire.
type Ask struct {
	// Until is when its lease should end at the latest: the request's
	// context deadline. Zero: now plus Config.Lease. It is capped at
	// now plus Config.Lease.
	Until time.Time
	// Custom reports that the key came from a custom key function: it is
	// shown only as a fingerprint, from now on.
	Custom bool
	// After is when the request may start at the earliest: a retry's
	// wait, which the retry budget may have lengthened past the key's
	// pause (see Plan.Wait). Zero: no such bound.
	After time.Time
	// AfterReason is what After is for: the reason of the plan that set
	// it (ReasonBackoff for the refusal floor of a request whose key is
	// not paused). ReasonNone: ReasonRetryBudget.
	AfterReason Reason
	// Probed is Plan.Probed of the plan that set After: once the
	// measurement the request probed has ended (the key accepted again,
	// or forgotten), After is Least instead. Zero: After holds.
	Probed int64
	// Least is the end of the least wait of the plan that set After
	// (Plan.Least), when Probed is set.
	Least time.Time
	// Turns reports that the request takes turns with the key's other
	// held requests: held to an instant, it claims a start, in the order
	// of its first ask (see turn.go). Without it, it claims nothing.
	Turns bool
	// Since is when the request first asked, for one that takes turns and
	// asks again after a hold: its place in line. Zero: it asks for the
	// first time, now (or at First).
	Since time.Time
	// First is when a retry's first attempt first asked, for one that
	// takes turns: its place in line, which a retry keeps (it asks again
	// with Since set to it). Zero: a first attempt, whose place is when
	// it asks. It is never after the instant the retry first asks at.
	First time.Time
	// Claimed reports that the request is counted in the claim of its
	// place, Since: the last Hold it got said so (Hold.Claimed). A
	// request that never claimed, or whose claim ended, is not, and its
	// grant or Leave must not count it off another request's claim of the
	// same instant.
	Claimed bool
	// Placed reports that the request has a place among those waiting
	// for a slot in flight: the last Hold it got said so (Hold.Placed). A
	// request that has none must not drop, at its grant or Leave, the
	// place of another request that first asked at the same instant.
	Placed bool
	// Grow is how many of the request's refusals said the server counted
	// it as more than the room a cost quota stated (Plan.Short): it starts
	// only once each cost quota has room for its cost doubled so many
	// times (at most maxGrow), or for as much as the quota can hold beside
	// the requests in flight, if less (never less than its cost). Its
	// reservation is its
	// cost: only the room it waits for grows. (A retry admitted at the
	// room for its estimate was refused again and again while the scale
	// (see costUnit) was learned short: each refusal raised it only to
	// the bound it proved, and MaxAttempts failed the request.)
	Grow uint8
	// Shared reports that the state is a Store's, which other processes
	// write with clocks of their own: a latest use later than now by no
	// more than skewMax may be theirs, and is no step back of this
	// process's clock (see acquireAt).
	Shared bool
}

// place returns the instant a request that takes turns holds its place
// in line by, asking at now.
func (a *Ask) place(now int64) int64 {
	switch {
	case !a.Since.IsZero():
		return instant(a.Since)
	case !a.First.IsZero():
		return instant(a.First)
	}
	return now
}

// Lease is a started request, handed back to Release. A Lease whose state
// was forgotten, or whose slot expired, releases nothing. Before Acquire,
// SetCost declares what the request will cost; the lease Acquire grants
// keeps it.
type Lease struct {
	// custom reports a grant under a custom key (Ask.Custom): a state
	// its release makes anew, the key's forgotten meanwhile, is marked so.
	custom bool

	born  int64  // the incarnation of the state that granted it
	end   int64  // when it expires: the end of its expiry slot
	seq   uint64 // grants before it and itself
	epoch uint64 // the key's pause count when it started
	cycle uint64 // the learner's cycle it started in
	cost  int64  // content bytes charged to content-bytes policies
	skew  int64  // the key's estimate of the server's clock minus ours
	start int64  // when it was granted

	// tested is the stated reset of the window whose phase the request
	// tests (see phase.go); zero when it tests none.
	tested int64

	// measuring is when the cycle whose refusal the learner is measuring
	// began; zero when no measurement is pending, or when that cycle had
	// nothing accepted (an outage, not a window).
	measuring int64

	others int32 // other requests in flight at its grant, bodies still arriving included, up to rampCap (see shed.go)
	probe  bool
	// hinted reports that the state granting it knew a quota the server
	// stated (see Hinted).
	hinted bool
	// logged reports that its start was logged for a stated quota's pace
	// (q per w): an answer from a cache takes it back (Outcome.Cached).
	logged bool
	skewOK bool
	// window reports that the cycle had requests accepted: a refusal now
	// is the end of a window, not an outage.
	window bool
	// unrefused reports that no flight was refused since the key's last
	// acceptance when it was granted (see leastWait).
	unrefused bool
	// late reports that it was granted at the end of a probe's wait
	// lengthened for the measurement still pending (see stretch): its
	// acceptance bounds the window from above only.
	late bool

	want Cost // the request's cost (see SetCost)
}

// Skew returns the key's estimate, when the request started, of the
// server's clock minus ours (see parse.HeaderAt), and whether it has one.
func (l *Lease) Skew() (time.Duration, bool) { return time.Duration(l.skew), l.skewOK }

// Hinted reports whether the state that granted the request knew a quota
// its server stated that still paces it: false once the key was forgotten
// (idle, evicted, Forget), never heard of one, or what it heard paces
// nothing now (an observation past its reset, a limit with no window:
// see State.statedPaces).
func (l *Lease) Hinted() bool { return l.hinted }

// Probe reports whether the request probes alone.
func (l *Lease) Probe() bool { return l.probe }

// Logged reports whether the request's start was logged for the pace of a
// quota its server stated: only then does an answer from a cache change
// anything (see Outcome.Cached), and only then need the Transport look for
// one.
func (l *Lease) Logged() bool { return l.logged }

// Expiry returns when the lease stops counting as in flight.
func (l *Lease) Expiry() time.Time { return at(l.end) }

// Foreign returns l as a lease no state granted: a state it is released
// to reads its answer as the latest one, outside any cycle, and frees no
// slot of its own. A store that answers for another's lease (the fallback
// of a Store that failed) releases it so: the identities of two stores'
// states may be equal (first used at the same instant).
func (l Lease) Foreign() Lease {
	l.born = 0
	return l
}

// Hold tells a request to wait and look again.
type Hold struct {
	until, wake int64
	Reason      Reason
	// Never reports that the request can never start: it costs more than
	// a whole quota (State.Excess says which). Hold stays small: it is
	// returned on every request's path.
	Never bool
	// Gen is the state's Generation when it said to hold: a change
	// beyond it may end the wait.
	Gen     uint64
	born    int64 // the state's identity when it said to hold (see State.Begin)
	own     bool  // held for what is the request's own (its cost): it claims no turn
	cost    bool  // held for its cost long enough to claim a turn of the requests that cost (see admitCost)
	claimed bool  // the request is counted in the claim of its place (see Claimed)
	placed  bool  // the request has a place among those waiting for a slot (see Placed)
}

// Claimed reports that the request held is counted in the claim of its
// place in line: it asks again with Ask.Claimed set, and, should it stop
// waiting, leaves (State.Leave).
func (h Hold) Claimed() bool { return h.claimed }

// Placed reports that the request held has a place among those waiting
// for a slot in flight (see handoff.go): it asks again with Ask.Placed
// set, and, should it stop waiting, leaves (State.Leave).
func (h Hold) Placed() bool { return h.placed }

// Born returns the identity of the state that said to hold (see
// State.Begin): a state of the key born otherwise since is another
// incarnation, whose Generation counts from its own start, and may have
// reached Gen again; 0 when unknown.
func (h Hold) Born() int64 { return h.born }

// Until returns when the wait ends at the earliest: no request starts
// before. Zero when only a change to the key (Gen) ends it.
func (h Hold) Until() time.Time { return at(h.until) }

// Wake returns when to look again at the latest even if nothing changed
// (a lease in flight may expire then); zero: no such time.
func (h Hold) Wake() time.Time { return at(h.wake) }

// Outcome is what a finished request teaches the key.
type Outcome struct {
	Failed  bool          // no response (transport error, or the request ended)
	Unsent  bool          // with Failed: the request was never sent (a retry that could not rewind its body): nothing is charged for it, and its start is taken back
	First   bool          // the request's first attempt
	Quotas  []parse.Quota // the response's quotas; nil for a response from a cache
	Bytes   int64         // the response's content length; -1 when unknown
	Skew    time.Duration // the response's Date minus its receive time, when Dated
	Dated   bool
	Refused bool // 429 or 503
	// Served reports a 2xx answer: the server did the request. Only such
	// an answer shows that a cost it counted fits its quota (see
	// costUnit.fits).
	Served bool
	// Unavailable reports that the refusal is a 503, not a 429: the
	// service unavailable (an outage, a load balancer shedding load,
	// maintenance; RFC 9110 §15.6.4), which says nothing of the stated
	// quotas: it pauses the key, and does not make it distrust them.
	Unavailable bool
	// Rejected reports that the refusal is a 429 (Too Many Requests): the
	// server turned the request away for its rate (RFC 6585 §4), and its
	// cost is charged to no cost quota. A 503 or a 403 may come after the
	// server counted it (DESIGN.md §1.10), and is charged as an answer
	// stating nothing is.
	Rejected bool
	// Cached reports that the answer, accepted, came from a cache (an Age
	// above 0; DESIGN.md §1.5): the origin did not see the request, so
	// its start is taken back from the starts the stated quotas' paces
	// logged (see Lease.Logged). Its fields are not in Quotas.
	Cached  bool
	Refusal Refusal // when Refused
	Rand    uint64  // a uniformly random value: the source of every jitter
	// Transient reports a transient failure (Failed, or a 502 or 504) the
	// Transport would retry: Refusal describes the retry, and Release
	// returns the plan of DecideTransient.
	Transient bool
	// Keep keeps the request in flight after Release has applied the
	// outcome: its response body is still arriving (a stream, a
	// download), and the server still serves it. [State.End] ends it.
	// Ignored for a refusal or a failure.
	Keep bool
}

// Refusal is what the Transport knows of a refused response and of the
// request, for the refusal decision.
type Refusal struct {
	// Wait is the wait the server gave (Retry-After, else the reset of a
	// spent quota), when Given; Reason is then ReasonRetryAfter or
	// ReasonQuota.
	Wait   time.Duration
	Given  bool
	Reason Reason
	// Backoff is the request's next fallback interval, randomised, used
	// when the server gave no wait; a transient failure's may be
	// shortened to the request's deadline (see the Transport's
	// retryBackoff).
	Backoff time.Duration
	// Retryable reports that the request has attempts left and may be
	// sent again (its body can be replayed, its method allows it).
	Retryable bool
	// Left is how many times the request may still be sent after this
	// refusal, when Retryable; zero: unknown (not counted).
	Left int
	// Since is when the request was first refused; zero: now. How long
	// it has been refused is the scale its attempts left are spread on
	// (see stretch).
	Since    time.Time
	MaxWait  time.Duration // the longest wait the Transport honours
	Deadline time.Time     // the request's context deadline; zero: none
	// Held is when what the state does not keep (the Transport's own
	// MaxRate, a Crawl-delay) lets the request's next attempt start; zero:
	// nothing holds it. A retry that could go no sooner must fit MaxWait
	// and the deadline too.
	Held     time.Time
	Stop     bool     // the server reported abnormal usage
	Violated []string // the policies a quota-exceeded problem named
}

// Plan is the refusal decision: what the Transport does next.
type Plan struct {
	Wait   time.Duration // the wait before the next attempt, as given or backed off
	Pause  time.Duration // how long the key pauses: Wait, lengthened by jitter, at most MaxPause
	Reason Reason        // what Wait is for
	Retry  bool          // send the request again once the key allows it
	Stop   bool          // the server reported abnormal usage: stop, do not retry
	// Denied is why a retry the request could take was refused by the
	// key (ReasonRetryBudget or ReasonStopped); ReasonNone otherwise.
	Denied Reason
	// Probed is the measurement the refused request probed (when it
	// began, on the controller's clock), when Wait was lengthened so that
	// its attempts left reach as far as it may wait (see stretch): the
	// wait ends early once that measurement has (Ask.Probed), down to
	// Least: the wait before it was lengthened, or, when longer, until the
	// attempts it has left after this one, spread so over its own time
	// refused, would still reach as far (all of Wait for its last). Zero:
	// the wait is what it is.
	Probed int64
	Least  time.Duration
	// Short reports that the refusal (a 429) showed the server counted
	// the request as more than a cost quota's stated room, which it had
	// for the request's cost as estimated, and nothing else explains it
	// (see costs.learnRefused): its retry asks for more room (Ask.Grow).
	Short bool
}

// Tuning of the mechanism itself; these are not server hints.
const (
	maxPolicies     = 8   // policies kept per key; more are ignored
	maxGrow         = 2   // Ask.Grow's doublings: four times a cost, as maxScale
	maxKeyLen       = 128 // bytes of a policy name or partition key kept (see partition)
	rampCap         = 4096
	zeroBackoffBase = int64(time.Second) // r=0 with no t (DESIGN.md §1.7)
	zeroBackoffMax  = int64(time.Minute)
	jitterMax       = int64(10 * time.Millisecond)
	costLimitFresh  = int64(CostLimitFresh)
	statedFresh     = int64(time.Minute) // a stated quota keeps the learner off for this long, or its window
	// MaxPause is the longest a key pauses on one answer: a Retry-After
	// of a century or a reset measured from a year-old Date must not lock
	// the key for the life of the process.
	MaxPause = 24 * time.Hour
	// maxSpan bounds every duration the state keeps (windows, learned
	// windows, distrust), so that sums of instants and spans never
	// overflow.
	maxSpan = 400 * 24 * time.Hour
	// maxInstant bounds every instant: nanoseconds since 1970, up to 2116.
	maxInstant = int64(1) << 62
)

// BackoffInitial and BackoffMax frame the fallback backoff (1s doubling to
// 1m): the Transport draws the intervals, the refusal decision shortens
// them while the learner measures a window.
const (
	BackoffInitial = time.Second
	BackoffMax     = time.Minute
)

// instant converts t to the state's clock: nanoseconds since 1970, within
// [1, maxInstant].
func instant(t time.Time) int64 {
	sec := t.Unix()
	switch {
	case sec < 0:
		return 1
	case sec >= maxInstant/int64(time.Second):
		return maxInstant
	}
	// t.UnixNano, from the seconds already read.
	return max(sec*int64(time.Second)+int64(t.Nanosecond()), 1)
}

// at converts an instant back; zero stays the zero time.
func at(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// window clamps the window of a quota a server states, or that its
// answers show, to [0, MaxPause]: a policy of one request a year, stated
// once, must not hold its key for a year, no more than a pause may
// (DESIGN.md §5). A window that long paces as one of MaxPause: past it a
// request goes, and a server that still refuses pauses the key again.
func window(d time.Duration) int64 { return int64(min(max(d, 0), MaxPause)) }

// addSat returns a+b for non-negative a and b, saturating.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// rng draws the jitters of one call from its Rand, deterministically: the
// first draw is Rand itself, the next ones follow by splitmix64. A Rand of
// 0 makes the first jitter 0, which tables at fixed instants rely on.
type rng uint64

func (r *rng) next() uint64 {
	v := uint64(*r)
	z := v + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	*r = rng(z ^ (z >> 31))
	return v
}

// jitter returns a duration in [0, min(d, jitterMax)], uniform for a
// uniform draw; 0 when d <= 0. It is added to waits and never subtracted:
// a wait the server gave is a floor.
func (r *rng) jitter(d int64) int64 {
	d = min(d, jitterMax)
	if d <= 0 {
		return 0
	}
	hi, _ := bits.Mul64(r.next(), uint64(d+1))
	return int64(hi)
}
