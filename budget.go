package polite

import (
	"container/list"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/politehttp/polite/parse"
	"golang.org/x/time/rate"
)

// Budget holds the pacing state of every origin (more exactly, every budget
// key) that one or more Transports talk to: the quotas the servers stated,
// the last observation of each, pauses, the requests in flight and the
// ramp-up after a pause. Transports that share a Budget share what they learn
// and pace together, as one client.
//
// The zero value is ready to use. A Budget is safe for concurrent use by
// multiple goroutines. Its fields must not be changed after first use.
//
// Memory is bounded: a key unused for IdleTTL is forgotten (its next request
// starts fresh, with a probe), and at most MaxKeys keys are kept, the least
// recently used going first. No goroutine runs in the background; expired
// keys are dropped lazily as new requests arrive.
type Budget struct {
	// MaxKeys is the most budget keys kept at once. If zero, 65536.
	MaxKeys int

	// IdleTTL is how long a key may go unused before it is forgotten,
	// measured from its last request or the end of its last pause, whichever
	// is later. If zero, 10 minutes.
	IdleTTL time.Duration

	once sync.Once
	st   store
}

func (b *Budget) store() store {
	b.once.Do(func() {
		if b.st == nil {
			b.st = newMemStore(b.MaxKeys, b.IdleTTL)
		}
	})
	return b.st
}

// store is the seam between a Transport and the state it paces by. The
// in-memory store below is the only implementation today; a store shared
// across processes replaces it without the Transport noticing.
type store interface {
	// acquire asks to start one request under key at now. It either grants
	// it, or says how long to hold and why; a holder also wakes when
	// changed is closed (some response updated the key's state).
	acquire(key originKey, now time.Time, c ceilings) (grant, hold)
	// release reports the end of a granted request. For a refusal the
	// Transport wants to retry, it reports whether the origin allows a
	// retry (and takes it from the retry budget), or why not.
	release(g grant, now time.Time, o outcome) (retry bool, denied Reason)
}

// originKey identifies a budget: the request's origin by default.
type originKey struct{ scheme, host string }

func (k originKey) String() string {
	if k.scheme == "" {
		return k.host
	}
	return k.scheme + "://" + k.host
}

// ceilings are the local limits of the Transport asking; no header raises them.
type ceilings struct {
	maxRate float64 // requests per second; 0 means none
	maxConc int     // requests in flight; 0 means none
}

// grant is a started request, handed back to release.
type grant struct {
	o     *origin
	seq   uint64
	probe bool
	epoch uint64 // the origin's pause count when the request started
	cost  int64  // content bytes charged to content-bytes policies

	// skew estimates the server's clock minus ours: the highest Date minus
	// receive time seen so far (see parse.HeaderAt); skewOK when known.
	skew   time.Duration
	skewOK bool

	cycle uint64 // the learner's cycle it started in
	// measuring is when the cycle whose refusal the learner is measuring
	// began; zero when no measurement is pending, or when that cycle had
	// nothing accepted (an outage, not a window).
	measuring time.Time
	// window reports that the cycle had requests accepted: a refusal now
	// is the end of a window, not an outage.
	window bool
}

// hold tells a request to wait: until wait has passed, or changed is closed.
// A zero wait means only changed (or the context) ends it.
type hold struct {
	wait    time.Duration
	reason  Reason
	changed <-chan struct{}
}

// outcome is what a finished request teaches the budget.
type outcome struct {
	failed  bool          // no response (transport error)
	quotas  []parse.Quota // nil for responses from a cache
	refused bool          // 429 or 503
	pause   time.Duration // the wait a refusal asks of the whole origin
	reason  Reason        // why, when pause > 0
	bytes   int64         // response content length; -1 when unknown
	skew    time.Duration // Date minus receive time, when dated
	dated   bool          // the response had a valid Date

	first     bool     // the request's first attempt
	wantRetry bool     // a refusal the Transport would retry
	stop      bool     // the server reported abnormal usage
	violated  []string // policies a quota-exceeded problem named
}

// Tuning of the mechanism itself; these are not server hints.
const (
	maxPolicies     = 8           // policies kept per key; more are ignored
	maxKeyLen       = 128         // bytes of a policy name or partition key kept
	maxLog          = 4096        // start times kept for a q-per-w policy
	rampCap         = 4096        // cwnd past which ramp-up no longer limits
	zeroBackoffBase = time.Second // D7: r=0 with no t
	zeroBackoffMax  = time.Minute //
	pauseJitterMax  = 10 * time.Millisecond
	defaultMaxKeys  = 1 << 16          //
	defaultIdleTTL  = 10 * time.Minute //
)

// origin is the state behind one budget key.
type origin struct {
	key      originKey
	elem     *list.Element // in memStore.lru
	lastUsed time.Time

	inflight int
	seq      uint64 // grants handed out so far
	epoch    uint64 // pauses so far: observations from before a pause are superseded

	pauseUntil  time.Time
	pauseReason Reason
	probing     bool // the next request is a lone probe
	probeOut    bool // the probe is in flight
	cwnd        int  // ramp-up: most requests in flight; 0 means no limit
	zeroStreak  int  // consecutive r=0 observations without t (D7)
	skew        time.Duration
	skewOK      bool

	policies []*policy
	learn    learner
	limiter  *rate.Limiter // the Transport's MaxRate, when set
	changed  chan struct{} // closed and cleared when state changes; nil when nobody waits
}

// policy is one quota of an origin, keyed by name, partition and unit.
type policy struct {
	name, pk, unit string
	seen           time.Time

	q int64         // quota per window; 0 when unknown
	w time.Duration // window; 0 when unknown

	// The live observation (RateLimit r and t, or a dialect's remaining
	// and reset). Responses to concurrent requests come back in any order,
	// so within one effective window the lowest r reported is the latest
	// state of the server; the requests still in flight may not be
	// counted in it yet, so they are subtracted from it.
	live     bool
	epoch    uint64    // origin epoch of the request that reported it
	mark     uint64    // grants started before it was received
	minR     int64     // lowest r reported in this effective window
	deadline time.Time // end of the effective window; zero when t was not given
	cost     float64   // content-bytes: bytes expected per request

	log []time.Time // start times within w, oldest first (q-per-w pacing)
}

func (p *policy) limitsRequests() bool { return p.unit == unitRequests }

const (
	unitRequests   = "requests"
	unitBytes      = "content-bytes"
	unitConcurrent = "concurrent-requests"
)

// memStore keeps budgets in this process.
type memStore struct {
	mu      sync.Mutex
	m       map[originKey]*origin
	lru     list.List // front: most recently used
	maxKeys int
	idleTTL time.Duration
}

func newMemStore(maxKeys int, idleTTL time.Duration) *memStore {
	if maxKeys <= 0 {
		maxKeys = defaultMaxKeys
	}
	if idleTTL <= 0 {
		idleTTL = defaultIdleTTL
	}
	return &memStore{m: make(map[originKey]*origin), maxKeys: maxKeys, idleTTL: idleTTL}
}

// lookup returns key's origin, creating it (cold: the first request probes).
// It also forgets a few idle origins from the back of the LRU list.
func (s *memStore) lookup(key originKey, now time.Time) *origin {
	for i := 0; i < 2; i++ {
		e := s.lru.Back()
		if e == nil {
			break
		}
		o := e.Value.(*origin)
		if o.key == key || !s.idle(o, now) {
			break
		}
		s.forget(o)
	}
	if o, ok := s.m[key]; ok {
		s.lru.MoveToFront(o.elem)
		return o
	}
	for len(s.m) >= s.maxKeys {
		s.forget(s.lru.Back().Value.(*origin))
	}
	o := &origin{key: key, probing: true}
	o.elem = s.lru.PushFront(o)
	s.m[key] = o
	return o
}

func (s *memStore) idle(o *origin, now time.Time) bool {
	if o.inflight > 0 || o.changed != nil {
		return false
	}
	last := o.lastUsed
	if o.pauseUntil.After(last) {
		last = o.pauseUntil
	}
	return now.Sub(last) >= s.idleTTL
}

func (s *memStore) forget(o *origin) {
	s.lru.Remove(o.elem)
	delete(s.m, o.key)
	o.broadcast() // wake any holder so that it starts over on a fresh origin
}

func (o *origin) broadcast() {
	if o.changed != nil {
		close(o.changed)
		o.changed = nil
	}
}

func (o *origin) hold(wait time.Duration, why Reason) hold {
	if o.changed == nil {
		o.changed = make(chan struct{})
	}
	return hold{wait: wait, reason: why, changed: o.changed}
}

func (o *origin) pause(until time.Time, why Reason) {
	if until.After(o.pauseUntil) {
		o.pauseUntil, o.pauseReason = until, why
	}
	if !o.probing {
		o.epoch++
	}
	o.probing, o.cwnd = true, 1
}

func (s *memStore) acquire(key originKey, now time.Time, c ceilings) (grant, hold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.lookup(key, now)
	o.lastUsed = now

	if now.Before(o.pauseUntil) {
		return grant{}, o.hold(o.pauseUntil.Sub(now), o.pauseReason)
	}
	// An observation past its effective window is stale: it says nothing
	// about what is available now and must not be read as a refill
	// (draft-11 §4.1.2). The next request probes instead.
	for _, p := range o.policies {
		if p.live && !p.deadline.IsZero() && !now.Before(p.deadline) {
			p.live = false
			o.probing, o.cwnd = true, 1
		}
	}
	if o.probing && o.probeOut {
		return grant{}, o.hold(0, ReasonProbe)
	}
	if (o.cwnd > 0 && o.inflight >= o.cwnd) || (c.maxConc > 0 && o.inflight >= c.maxConc) {
		return grant{}, o.hold(0, ReasonConcurrency)
	}

	var cost int64
	for _, p := range o.policies {
		switch p.unit {
		case unitConcurrent:
			if p.q > 0 && int64(o.inflight) >= p.q {
				return grant{}, o.hold(0, ReasonConcurrency)
			}
		case unitRequests, unitBytes:
			need := int64(1)
			if p.unit == unitBytes {
				need = p.need()
				cost = max(cost, need)
			}
			if p.live && p.minR-int64(o.inflight)*need < need {
				if !p.deadline.IsZero() {
					return grant{}, o.hold(p.deadline.Sub(now), ReasonQuota)
				}
				if o.inflight > 0 {
					return grant{}, o.hold(0, ReasonQuota)
				}
				// r was spent with no t and nothing in flight will
				// refresh it (D7): fall back to a probe.
				p.live = false
				o.probing, o.cwnd = true, 1
			}
			if p.limitsRequests() && p.q > 0 && p.w > 0 {
				if d := p.paceWait(now); d > 0 {
					return grant{}, o.hold(d, ReasonPace)
				}
			}
		}
	}
	if o.learn.active(o, now) {
		if d := o.learn.quota.paceWait(now); d > 0 {
			o.learn.binding, o.learn.held = true, true
			return grant{}, o.hold(d, ReasonAdaptive)
		}
	}
	if c.maxRate > 0 {
		if o.limiter == nil || float64(o.limiter.Limit()) != c.maxRate {
			o.limiter = rate.NewLimiter(rate.Limit(c.maxRate), 1)
		}
		r := o.limiter.ReserveN(now, 1)
		if d := r.DelayFrom(now); d > 0 {
			r.CancelAt(now)
			return grant{}, o.hold(d, ReasonPace)
		}
	}

	o.inflight++
	o.seq++
	g := grant{o: o, seq: o.seq, epoch: o.epoch, cost: cost, skew: o.skew, skewOK: o.skewOK}
	if o.probing {
		o.probeOut, g.probe = true, true
	}
	for _, p := range o.policies {
		if p.limitsRequests() && p.q > 0 && p.w > 0 {
			p.logStart(now)
		}
	}
	g.cycle = o.learn.started(o, now)
	switch {
	case o.learn.pending && o.learn.pendQ > 0:
		g.measuring = o.learn.pendFrom
	case o.learn.cycleOK > 0:
		g.window = true
	}
	return g, hold{}
}

// need returns the bytes one request is expected to cost a content-bytes policy.
func (p *policy) need() int64 { return max(1, int64(math.Ceil(p.cost))) }

// logStart records a start for q-per-w pacing.
func (p *policy) logStart(now time.Time) {
	if len(p.log) >= maxLog {
		p.log = p.log[1:] // quotas beyond maxLog rest on the live r
	}
	p.log = append(p.log, now)
}

// paceWait returns how long a start must wait so that no more than q
// requests start in any span of w. This is also what defuses the ratio trap
// of draft-11 §8.5: r=10000;t=10 under q=10000;w=1000 never leads to a
// sustained 1000 requests a second, since the next 10000 can start only
// 1000 seconds after the first.
func (p *policy) paceWait(now time.Time) time.Duration {
	p.trim(now)
	if n := int64(len(p.log)); n >= p.q {
		return p.log[n-p.q].Add(p.w).Sub(now)
	}
	return 0
}

// trim drops start times that left the window.
func (p *policy) trim(now time.Time) {
	i := 0
	for i < len(p.log) && !p.log[i].Add(p.w).After(now) {
		i++
	}
	if i > 0 {
		p.log = append(p.log[:0], p.log[i:]...)
	}
}

func (s *memStore) release(g grant, now time.Time, out outcome) (bool, Reason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := g.o
	defer o.broadcast()
	o.inflight--
	if g.probe {
		o.probeOut = false
	}
	if s.m[o.key] != o {
		return false, "" // forgotten while in flight
	}
	if out.first {
		o.learn.deposit(now)
	}
	if out.failed {
		return false, "" // a probe that failed leaves the origin probing
	}
	if out.dated {
		// Date has whole seconds, so Date minus receive time falls short
		// of the true offset by up to a second: the highest sample is the
		// best estimate, and never too high. A much lower one means the
		// server's clock moved: start over.
		if !o.skewOK || out.skew > o.skew || out.skew < o.skew-2*time.Second {
			o.skew, o.skewOK = out.skew, true
		}
	}

	// Before reading a refusal: did the budget think quota was left?
	hinted := false
	for _, p := range o.policies {
		if out.refused && p.unit != unitConcurrent && p.live && p.minR > int64(o.inflight) {
			hinted = true
			break
		}
	}
	// A refusal is foreseen when a quota of the response, in any unit, is
	// spent: OpenAI's and Anthropic's token quotas refuse while requests
	// are left, and that is not a lie.
	foreseen := false
	for i := range out.quotas {
		q := &out.quotas[i]
		if q.Remaining == 0 {
			foreseen = true
		}
		if s.observe(o, g, q, now, out.bytes) && q.Remaining > 0 {
			hinted = true
		}
	}
	if !out.refused {
		o.learn.accepted(o, g, now)
		if g.probe && !now.Before(o.pauseUntil) {
			// The probe came back and the origin is not paused again
			// (its own answer may have spent the quota): ramp up.
			o.probing = false
			o.cwnd = 2
			if o.learn.hinted {
				o.cwnd = 4 // the fresh response says what is left
			}
		} else {
			o.learn.ramp(o)
		}
		return false, ""
	}

	o.learn.refused(o, g, now, foreseen, hinted)
	if out.stop {
		o.learn.noRetryUntil = now.Add(stopRetrying)
	}
	until := now.Add(max(out.pause, 0))
	o.pause(until, out.reason)
	for _, name := range out.violated {
		for _, p := range o.policies {
			if p.name == name && p.unit != unitConcurrent {
				p.live, p.epoch, p.minR, p.deadline = true, o.epoch, 0, o.pauseUntil
			}
		}
	}
	if !out.wantRetry {
		return false, ""
	}
	return o.learn.allowRetry(now)
}

// observe applies one quota from a response to o. It reports whether the
// quota is one that paces requests.
func (s *memStore) observe(o *origin, g grant, q *parse.Quota, now time.Time, bytes int64) bool {
	unit := q.Unit
	switch unit {
	case "", "request":
		unit = unitRequests
	case unitRequests, unitBytes, unitConcurrent:
	default:
		return false // tokens, points...: exposed by parse, not used to pace requests
	}
	o.learn.hinted = true
	p := o.policy(q.Policy, q.Partition, unit, now)
	if p == nil {
		return false
	}
	p.seen = now
	if unit == unitConcurrent {
		// At most q in flight; without q, r is the free slots at the
		// server besides the requests it was serving.
		switch {
		case q.Limit > 0:
			p.q = q.Limit
		case q.Remaining >= 0:
			p.q = max(1, q.Remaining+int64(o.inflight)+1)
		}
		return true
	}
	if q.Limit >= 0 && q.Window > 0 {
		if p.q == 0 && unit == unitRequests {
			// A quota heard of for the first time: the requests that
			// already went count against it too.
			for range min(int64(o.inflight)+1, q.Limit) {
				p.logStart(now)
			}
		}
		p.q, p.w = q.Limit, q.Window
	}
	if unit == unitBytes && bytes >= 0 {
		if p.cost == 0 {
			p.cost = float64(bytes)
		} else {
			p.cost = 0.75*p.cost + 0.25*float64(bytes)
		}
	}
	if q.Remaining < 0 {
		return true
	}
	stale := !p.live || (!p.deadline.IsZero() && !now.Before(p.deadline))
	if !stale && g.epoch <= p.epoch && g.seq <= p.mark && q.Remaining > p.minR {
		// A higher r from a request sent before the current observation
		// came back: an answer overtaken by a later one. (A request sent
		// after it reached the server after it, so its r is newer.)
		return true
	}
	p.live, p.epoch, p.mark, p.minR = true, g.epoch, o.seq, q.Remaining
	if p.q > 0 && p.minR > p.q {
		p.minR = p.q // r is never trusted above the quota the policy states
	}
	p.deadline = time.Time{}
	if q.Reset > 0 {
		p.deadline = now.Add(q.Reset)
	}
	if q.Remaining > 0 {
		o.zeroStreak = 0
		return true
	}
	// The quota is spent: pause the whole origin until the effective
	// window has passed, then probe (draft-11 §7).
	switch {
	case q.Reset > 0:
		o.pause(p.deadline.Add(jitter(q.Reset/50)), ReasonQuota)
	case q.Reset < 0:
		// D7: r=0 and no t: exponential fallback before the next request.
		d := zeroBackoffBase << min(o.zeroStreak, 6)
		o.zeroStreak++
		o.pause(now.Add(min(d, zeroBackoffMax)+jitter(d/10)), ReasonBackoff)
	default:
		p.live = false // r=0;t=0: the window ends now
	}
	return true
}

// policy returns o's policy with that identity, adding it if there is room.
func (o *origin) policy(name string, pk []byte, unit string, now time.Time) *policy {
	if len(name) > maxKeyLen {
		name = name[:maxKeyLen]
	}
	if len(pk) > maxKeyLen {
		pk = pk[:maxKeyLen]
	}
	for _, p := range o.policies {
		if p.name == name && p.unit == unit && p.pk == string(pk) {
			return p
		}
	}
	if len(o.policies) >= maxPolicies {
		// Replace the policy heard of least recently, unless it is live.
		old := 0
		for i, p := range o.policies {
			if p.seen.Before(o.policies[old].seen) {
				old = i
			}
		}
		if o.policies[old].live && !o.policies[old].seen.Before(now.Add(-time.Minute)) {
			return nil
		}
		o.policies = append(o.policies[:old], o.policies[old+1:]...)
	}
	p := &policy{name: name, pk: string(pk), unit: unit}
	o.policies = append(o.policies, p)
	return p
}

// jitter returns a random duration in [0, d]; 0 when d <= 0. It is added to
// waits and never subtracted: a wait the server gave is a floor.
func jitter(d time.Duration) time.Duration {
	d = min(d, pauseJitterMax)
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}
