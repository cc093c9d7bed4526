package control

import (
	"math"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

var ht0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// hostile drives a State at instants from ht0, as a Transport would,
// through the answers of a server that states or does something a
// well-behaved one would not.
type hostile struct {
	t   *testing.T
	s   State
	cfg Config
}

func (d *hostile) acq(at time.Duration, ask Ask, c Cost) (Lease, Hold, bool) {
	var l Lease
	l.SetCost(c)
	h, ok := d.s.Acquire(ht0.Add(at), &d.cfg, ask, &l)
	return l, h, ok
}

func (d *hostile) rel(at time.Duration, l *Lease, out Outcome) Plan {
	return d.s.Release(ht0.Add(at), &d.cfg, l, &out)
}

// A learned window measured across an outage of 30 hours is capped at
// MaxPause (DESIGN.md §5): after it, the key is held a day at most.
func TestLearnedWindowCappedAtMaxPause(t *testing.T) {
	d := &hostile{t: t}
	now := time.Duration(0)
	// Two accepted.
	for i := 0; i < 2; i++ {
		l, h, ok := d.acq(now, Ask{}, Cost{})
		if !ok {
			t.Fatalf("held %v at %v", h, now)
		}
		d.rel(now, &l, Outcome{First: true, Bytes: -1})
		now += time.Second
	}
	// Then the server refuses everything, with no wait, for 30 hours.
	end := 30 * time.Hour
	refusals := 0
	for now < end {
		l, h, ok := d.acq(now, Ask{}, Cost{})
		if !ok {
			now = max(h.Until().Sub(ht0), now+time.Second)
			continue
		}
		d.rel(now, &l, Outcome{First: true, Bytes: -1, Refused: true,
			Refusal: Refusal{Backoff: time.Minute, MaxWait: 10 * time.Minute}})
		refusals++
		now += time.Second
	}
	// The server is back.
	for i := 0; i < 10; i++ {
		l, h, ok := d.acq(now, Ask{}, Cost{})
		if !ok {
			until := h.Until()
			if until.IsZero() {
				until = h.Wake()
			}
			wait := until.Sub(ht0.Add(now))
			v := d.s.View(ht0.Add(now))
			t.Logf("after %d refusals: held %v for %v (reason %d); learned %+v", refusals, i, wait, h.Reason, v.Learned)
			if wait > MaxPause {
				t.Fatalf("held %v > MaxPause %v after the outage: a learned window of %v", wait, MaxPause, v.Learned.Window)
			}
			now = until.Sub(ht0)
			continue
		}
		d.rel(now, &l, Outcome{First: true, Bytes: -1})
		now += time.Second
	}
}

// A key whose server stated RateLimit-Policy q=3;w=1h (no r) is paced 3 an
// hour: its state is not forgotten (IdleTTL after the last request) while
// the pace still holds, else a fresh state would let 3 more go at once.
func TestExpiryAwaitsStatedWindow(t *testing.T) {
	d := &hostile{t: t}
	pol := parse.Quota{Policy: "h", Dialect: "ietf", Limit: 3, Window: time.Hour, Remaining: -1, Reset: -1}
	now := time.Duration(0)
	granted := 0
	for i := 0; i < 6; i++ {
		l, h, ok := d.acq(now, Ask{}, Cost{})
		if !ok {
			t.Logf("held at %v until %v; state expires at %v", now, h.Until().Sub(ht0), d.s.Expiry().Sub(ht0))
			if d.s.Expiry().Before(h.Until()) {
				t.Fatalf("state may be forgotten at %v, before its pace lets the next start go at %v: a fresh state would let q more go within w",
					d.s.Expiry().Sub(ht0), h.Until().Sub(ht0))
			}
			break
		}
		granted++
		d.rel(now+10*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{pol}})
		now += time.Second
	}
}

// A server that states nine policies (RateLimit-Policy only, no r): each
// answer evicted one that was not live and added the ninth back, its start
// log reset, so that q per w no longer held (300 starts in a minute, where
// each policy allows 2 an hour). A policy whose starts still bind is not
// evicted: the ninth is ignored.
func TestNinthPolicyEvictsNoBindingQuota(t *testing.T) {
	d := &hostile{t: t}
	var qs []parse.Quota
	for i := 0; i < maxPolicies+1; i++ {
		qs = append(qs, parse.Quota{Policy: string(rune('a' + i)), Dialect: "ietf", Limit: 2, Window: time.Hour, Remaining: -1, Reset: -1})
	}
	now := time.Duration(0)
	granted := 0
	for now < time.Minute {
		l, h, ok := d.acq(now, Ask{}, Cost{})
		if !ok {
			until := h.Until()
			if until.IsZero() {
				until = h.Wake()
			}
			if until.Sub(ht0) > time.Minute {
				break
			}
			now = until.Sub(ht0)
			continue
		}
		granted++
		d.rel(now+100*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: qs})
		now += 200 * time.Millisecond
	}
	if granted > 2 {
		t.Fatalf("%d starts within a minute under nine policies of 2 per hour each", granted)
	}
}

// silentWindow is a server that accepts q per aligned window w and states
// nothing.
type silentWindow struct {
	q     int
	w     time.Duration
	win   time.Duration
	count int
}

func (f *silentWindow) serve(at time.Duration) bool {
	win := at / f.w * f.w
	if win != f.win {
		f.win, f.count = win, 0
	}
	f.count++
	return f.count <= f.q
}

// run drives one sequential worker from `from` to `to` against srv, with
// answers of latency lat; stated, when not nil, is stated on every accepted
// answer. It returns the accepted and refused counts.
func (d *hostile) run(from, to time.Duration, srv *silentWindow, stated []parse.Quota, lat time.Duration) (acc, ref int, now time.Duration) {
	now = from
	var after time.Duration
	for now < to {
		ask := Ask{}
		if after > now {
			ask.After = ht0.Add(after)
		}
		l, h, ok := d.acq(now, ask, Cost{})
		if !ok {
			until := h.Until()
			if until.IsZero() {
				until = h.Wake()
			}
			if until.IsZero() || !until.After(ht0.Add(now)) {
				d.t.Fatalf("hold without progress at %v: %+v", now, h)
			}
			now = until.Sub(ht0)
			continue
		}
		at := now + lat/2
		if srv.serve(at) {
			acc++
			var qs []parse.Quota
			if stated != nil {
				qs = stated
			}
			d.rel(now+lat, &l, Outcome{First: true, Bytes: -1, Quotas: qs})
			after = 0
		} else {
			ref++
			p := d.rel(now+lat, &l, Outcome{First: true, Bytes: -1, Refused: true, Rand: 1,
				Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: 10 * time.Minute}})
			after = now + lat + p.Wait
		}
		now += lat
	}
	return acc, ref, now
}

// A key whose server once stated a quota, then stops stating anything and
// refuses beyond a smaller limit, is learned as a key that never stated
// one: a quota not stated again for its window (a minute at least) no
// longer keeps the learned quota from pacing (learner.active). It kept it
// off for good: 567 refusals in 10 minutes, against 59.
func TestQuotaNoLongerStatedLetsLearnerPace(t *testing.T) {
	lat := 50 * time.Millisecond
	// A: a key that never stated anything.
	a := &hostile{t: t}
	accA, refA, _ := a.run(0, 10*time.Minute, &silentWindow{q: 10, w: time.Minute}, nil, lat)
	// B: the same server, after an hour of stating q=1000;w=60 with r.
	b := &hostile{t: t}
	stated := []parse.Quota{{Policy: "p", Dialect: "ietf", Limit: 1000, Window: time.Minute, Remaining: 900, Reset: 30 * time.Second}}
	_, _, now := b.run(0, 2*time.Second, &silentWindow{q: 1000, w: time.Minute}, stated, lat)
	now = max(now, 2*time.Minute) // the server changes, and stops stating anything
	accB, refB, _ := b.run(now, now+10*time.Minute, &silentWindow{q: 10, w: time.Minute}, nil, lat)
	v := b.s.View(ht0.Add(now + 10*time.Minute))
	t.Logf("never stated: %d accepted, %d refused; once stated: %d accepted, %d refused; learned %+v", accA, refA, accB, refB, v.Learned)
	// The minute the stated quota still holds, the learner off, costs
	// at most a refusal a second (this worker's backoff) over what the
	// key that never stated one is refused.
	if refB > refA+60+5 {
		t.Fatalf("a key that once stated a quota is refused %d times in 10 minutes, against %d for a key that never did", refB, refA)
	}
}

// One answer stating a small token limit (the server lowered it for a
// while, or misreported it) fails a later request that costs more, without
// sending it, for a minute (or the limit's window): then such a request
// goes, and its answer states the limit again. Nothing refreshed the limit
// before, and each ask kept the state from expiring.
func TestStaleCostLimitLetsRequestGo(t *testing.T) {
	d := &hostile{t: t}
	l, _, ok := d.acq(0, Ask{}, Cost{Tokens: 500})
	if !ok {
		t.Fatal("first request held")
	}
	d.rel(100*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{
		{Unit: "tokens", Limit: 400, Remaining: 0, Reset: time.Second, Dialect: "openai"},
	}})
	now := time.Duration(0)
	for now = time.Minute; now <= 24*time.Hour; now += 5 * time.Minute {
		_, h, ok := d.acq(now, Ask{}, Cost{Tokens: 500})
		if ok || !h.Never {
			t.Logf("at %v: granted %v hold %+v", now, ok, h)
			return
		}
	}
	t.Fatalf("every request costing 500 tokens failed as Never for 24h after one answer stated a limit of 400; state expires at %v", d.s.Expiry().Sub(ht0))
}

// A state decoded from a Store may hold what no controller here writes (a
// hostile or broken process wrote it): a pause, a probe or leases ending
// decades ahead, or the starts a process whose clock is decades ahead
// logged. Bound, which a Budget over a Store calls before each Acquire,
// brings them back within MaxPause (or the longest lease), so that one bad
// write cannot hold a key, nor keep its stored state, for longer. Before,
// starts logged in 2110 were kept, and the state with them (Expiry counts
// their windows), whatever the healthy processes did.
func TestStoredHoldsBounded(t *testing.T) {
	far := instant(time.Date(2110, 1, 1, 0, 0, 0, 0, time.UTC))
	now := instant(ht0)
	for _, tt := range []struct {
		name  string
		spoil func(s *State)
	}{
		{"a pause", func(s *State) { s.pauseUntil, s.pauseReason = far, ReasonRetryAfter }},
		{"a probe", func(s *State) { s.ramp.probeEnd = far; s.leases.b[0].end = far }},
		{"a lease", func(s *State) { s.leases.b[0].end = far }},
		{"a turn claim", func(s *State) {
			s.turns.c = []claim{{since: now - int64(time.Second), n: 1, until: far, reason: ReasonPace}}
			s.turns.held = true
		}},
		{"starts logged by a clock ahead", func(s *State) {
			q := []parse.Quota{{Policy: "p", Limit: 100, Window: time.Hour, Remaining: 90, Reset: 30 * time.Minute}}
			for i := range 3 {
				t := at(far + int64(i)*int64(time.Second))
				var l Lease
				if _, ok := s.Acquire(t, &Config{}, Ask{}, &l); ok {
					s.Release(t.Add(time.Millisecond), &Config{}, &l, &Outcome{First: true, Quotas: q, Bytes: -1})
				}
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cfg Config
			var s State
			var l Lease
			if _, ok := s.Acquire(ht0, &cfg, Ask{}, &l); !ok {
				t.Fatal("the first request held")
			}
			tt.spoil(&s)
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var got State
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			later := now + int64(time.Second)
			got.Bound(at(later), &cfg) // as a Budget over a Store does
			if b, err := got.MarshalBinary(); err != nil {
				t.Fatal(err)
			} else if err := new(State).UnmarshalBinary(b); err != nil {
				t.Fatalf("the bounded state does not decode: %v", err)
			}
			var l2 Lease
			h, ok := got.Acquire(at(later), &cfg, Ask{}, &l2)
			bound := later + int64(MaxPause)
			if end := max(instant(h.Until()), instant(h.Wake())); !ok && end > bound+turnGrace {
				t.Errorf("held until %v, beyond MaxPause", at(end))
			}
			if e := instant(got.Expiry()); e > bound+cfg.idleTTL() {
				t.Errorf("the state expires at %v, beyond MaxPause and IdleTTL", got.Expiry())
			}
		})
	}
}

// A custom key forgotten stays custom: the state a Store keeps for it
// (its generation) is inspected by the key's fingerprint, never verbatim.
func TestForgetKeepsCustom(t *testing.T) {
	var cfg Config
	var s State
	var l Lease
	s.Acquire(ht0, &cfg, Ask{Custom: true}, &l)
	s.Forget(ht0, &cfg)
	if !s.Custom() {
		t.Error("a custom key forgotten is no longer custom")
	}
}

// A MaxRate so small that its spacing overflows an int64 of nanoseconds
// still spaces starts: it let every request go.
func TestTinyMaxRateSpaces(t *testing.T) {
	cfg := Config{MaxRate: 1e-12}
	var s State
	var l Lease
	if _, ok := s.Acquire(ht0, &cfg, Ask{}, &l); !ok {
		t.Fatal("the first request held")
	}
	s.Release(ht0.Add(time.Millisecond), &cfg, &l, &Outcome{First: true, Bytes: -1})
	var l2 Lease
	if h, ok := s.Acquire(ht0.Add(time.Second), &cfg, Ask{}, &l2); ok || h.Until().Before(ht0.Add(MaxPause)) {
		t.Errorf("at a MaxRate of 1e-12/s, the second request: granted %v, held until %v", ok, h.Until())
	}
}

// The stop of retries a report of abnormal usage asks for keeps the state
// from being forgotten until it ends, even with a short IdleTTL.
func TestExpiryAwaitsRetryStop(t *testing.T) {
	cfg := Config{IdleTTL: time.Minute}
	var s State
	var l Lease
	s.Acquire(ht0, &cfg, Ask{}, &l)
	s.Release(ht0, &cfg, &l, &Outcome{First: true, Bytes: -1, Refused: true, Refusal: Refusal{Stop: true, Wait: time.Second, Given: true, Reason: ReasonRetryAfter, MaxWait: time.Hour}})
	if s.retry.stopUntil <= instant(ht0) {
		t.Fatal("no stop of retries recorded")
	}
	if e := instant(s.Expiry()); e < s.retry.stopUntil {
		t.Errorf("the state expires at %v, before its stop of retries ends at %v", s.Expiry(), at(s.retry.stopUntil))
	}
}

// A stored state's cost quotas and reservations are bounded too: a
// quota's reset in 2110 held every request of its unit until then; a
// quota stated in 2110 never went stale, and failed every request beyond
// its limit; a reservation ending in 2110 held its tokens until then.
func TestStoredCostHoldsBounded(t *testing.T) {
	far := instant(time.Date(2110, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tt := range []struct {
		name  string
		cost  int64
		spoil func(s *State)
	}{
		{"a reset", 100, func(s *State) { q := &s.costs.quotas[0]; q.r, q.deadline = 0, far }},
		{"a statement", 5000, func(s *State) { s.costs.quotas[0].seen = far }},
		{"an observation", 100, func(s *State) { q := &s.costs.quotas[0]; q.r, q.at, q.deadline = 0, far, far+1 }},
		{"a reservation", 100, func(s *State) {
			u := &s.costs.units[0]
			u.n += 1000 - u.res[0].n
			u.res[0].n, u.res[0].end = 1000, far
			s.leases.b[len(s.leases.b)-1].end = far
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &hostile{t: t}
			l, _, ok := d.acq(0, Ask{}, Cost{Tokens: 100})
			if !ok {
				t.Fatal("the first request held")
			}
			d.rel(100*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{
				{Unit: "tokens", Limit: 1000, Remaining: 900, Reset: 10 * time.Second},
			}})
			if _, _, ok := d.acq(200*time.Millisecond, Ask{}, Cost{Tokens: 100}); !ok {
				t.Fatal("the second request held")
			}
			tt.spoil(&d.s)
			b, err := d.s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var got State
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			// The Budget bounds a decoded state before each request. A
			// request is held at most MaxPause; a limit stated "now" at
			// most CostLimitFresh.
			now := ht0.Add(time.Second)
			got.Bound(now, &d.cfg)
			var l3 Lease
			l3.SetCost(Cost{Tokens: tt.cost})
			h, ok := got.Acquire(now, &d.cfg, Ask{}, &l3)
			switch {
			case ok:
			case h.Never:
				if h, ok = got.Acquire(now.Add(CostLimitFresh), &d.cfg, Ask{}, &l3); !ok {
					t.Errorf("a request of %d tokens still held a minute after the bound: %+v", tt.cost, h)
				}
			case h.Until().IsZero() || h.Until().Sub(now) > MaxPause:
				t.Errorf("a request of %d tokens held until %v", tt.cost, h.Until())
			}
		})
	}
}

// A request charged against a quota restored whole whose reset has passed
// (its answer states no quota) counts in the window after: it was charged
// to the spent window, whose level then read as the whole limit, and a
// second request overdrew the quota.
func TestChargeAfterResetCounts(t *testing.T) {
	for _, tt := range []struct {
		name string
		at   time.Duration // when the two requests of 600 go
		w    time.Duration // the window stated; 0 for none
	}{
		{"before the reset", time.Second, 0},
		{"after the reset", 11 * time.Second, 0},
		{"windows after the reset", 95 * time.Second, 0},
		{"after the reset, a window stated", 11 * time.Second, 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &hostile{t: t}
			l, _, _ := d.acq(0, Ask{}, Cost{Tokens: 1})
			d.rel(0, &l, Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{
				{Unit: "tokens", Limit: 1000, Remaining: 999, Reset: 10 * time.Second, Window: tt.w},
			}})
			a, _, ok := d.acq(tt.at, Ask{}, Cost{Tokens: 600})
			if !ok {
				t.Fatal("A held")
			}
			d.rel(tt.at+100*time.Millisecond, &a, Outcome{First: true, Bytes: -1}) // no fields
			_, h, ok := d.acq(tt.at+200*time.Millisecond, Ask{}, Cost{Tokens: 600})
			if ok {
				t.Fatal("B (600 tokens) went right after A (600), against a quota of 1000")
			}
			// Held until the window A counted in ends: the stated one, or
			// one no shorter than the reset stated, 10s.
			w := max(tt.w, 10*time.Second)
			if tt.at < 10*time.Second {
				w = 10 * time.Second
			}
			want := ht0.Add(10*time.Second + (tt.at-10*time.Second)/w*w + w)
			if tt.at < 10*time.Second {
				want = ht0.Add(10 * time.Second)
			}
			if !h.Until().Equal(want) {
				t.Errorf("B held until %v, want %v", h.Until().Sub(ht0), want.Sub(ht0))
			}
		})
	}
}

// Reservations merged beyond maxReservations keep their sum: the cap on
// the merged amount was not taken off the unit's total, and once every
// request had ended, tokens that no reservation held were still reserved
// and held every request of the unit.
func TestMergedReservationsKeepSum(t *testing.T) {
	d := &hostile{t: t}
	quotas := []parse.Quota{{Unit: "tokens", Limit: 1000, Remaining: 500, Reset: 10 * time.Second, Dialect: "openai"}}
	now := time.Duration(0)
	for range 6 { // open the ramp with requests that cost nothing
		var ls []Lease
		for len(ls) < 100 {
			l, _, ok := d.acq(now, Ask{}, Cost{})
			if !ok {
				break
			}
			ls = append(ls, l)
		}
		now += 10 * time.Millisecond
		for i := range ls {
			d.rel(now, &ls[i], Outcome{First: true, Bytes: -1, Quotas: quotas})
		}
	}
	now += 2 * time.Minute // the limit is stale: a request beyond it goes
	var big []Lease
	for range 70 {
		l, _, ok := d.acq(now, Ask{}, Cost{Tokens: math.MaxInt64})
		if !ok {
			t.Fatalf("request %d held", len(big))
		}
		big = append(big, l)
	}
	now += 10 * time.Millisecond
	for i := range big {
		d.rel(now, &big[i], Outcome{First: true, Bytes: -1, Quotas: quotas})
	}
	if u := &d.s.costs.units[0]; u.n != 0 || len(u.res) != 0 {
		t.Errorf("every request ended: %d tokens reserved in %d reservations", u.n, len(u.res))
	}
	if _, h, ok := d.acq(now+time.Minute, Ask{}, Cost{Tokens: 10}); !ok {
		t.Errorf("a request of 10 tokens held until %v", h.Until())
	}
}

// A quota refilled continuously whose reset is a year (one answer with
// r=0) holds a request that costs tokens a day at most, as a pause: its
// refill rate was read over the year, and the request waited months.
func TestRefillWaitWithinMaxPause(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reset time.Duration
	}{
		{"reset of a year", 365 * 24 * time.Hour},
		{"reset of 30 days", 30 * 24 * time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &hostile{t: t}
			l, _, ok := d.acq(0, Ask{}, Cost{Tokens: 10})
			if !ok {
				t.Fatal("first request held")
			}
			d.rel(100*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{
				{Unit: "tokens", Limit: 1000, Remaining: 0, Reset: tt.reset, Dialect: "openai"},
			}})
			at := time.Second
			_, h, ok := d.acq(at, Ask{}, Cost{Tokens: 500})
			if !ok && !h.Never {
				if wait := h.Until().Sub(ht0.Add(at)); wait > MaxPause {
					t.Errorf("a request of 500 tokens (of 1000) held %v, beyond MaxPause %v", wait, MaxPause)
				}
			}
		})
	}
}

// r=0 with no t backs off from 1s to a minute (DESIGN.md §1.7) however
// many other quotas of the same answer have room: each of them reset the
// streak, and the key was asked once a second.
func TestZeroStreakAcrossPolicies(t *testing.T) {
	day := parse.Quota{Policy: "day", Dialect: "ietf", Limit: -1, Remaining: 0, Reset: -1}
	minute := parse.Quota{Policy: "min", Dialect: "ietf", Limit: -1, Remaining: 50, Reset: 30 * time.Second}
	for _, tt := range []struct {
		name   string
		quotas []parse.Quota
	}{
		{"spent quota alone", []parse.Quota{day}},
		{"spent quota, then another", []parse.Quota{day, minute}},
		{"another, then spent quota", []parse.Quota{minute, day}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &hostile{t: t}
			now, sends := time.Duration(0), 0
			for now < 2*time.Minute {
				l, h, ok := d.acq(now, Ask{}, Cost{})
				if !ok {
					now = max(h.Until().Sub(ht0), h.Wake().Sub(ht0), now+time.Millisecond)
					continue
				}
				sends++
				now += 20 * time.Millisecond
				d.rel(now, &l, Outcome{First: true, Bytes: -1, Quotas: tt.quotas})
			}
			// 1+2+4+8+16+32+60 s: 8 requests in two minutes.
			if sends > 10 {
				t.Errorf("%d requests in 2 minutes to a key whose server says r=0 with no t on every answer; want the fallback doubling to a minute (8)", sends)
			}
		})
	}
}

// A pace hold, under a window capped at MaxPause, lasts MaxPause at most:
// a start counted at the end of its slot held a slot longer.
func TestPaceHoldWithinMaxPause(t *testing.T) {
	d := &hostile{t: t}
	pol := []parse.Quota{{Policy: "d", Dialect: "ietf", Limit: 200, Window: 48 * time.Hour, Remaining: -1, Reset: -1}}
	now := time.Duration(0)
	for range 1000 {
		var ls []Lease
		for {
			l, h, ok := d.acq(now, Ask{}, Cost{})
			if !ok {
				if h.Reason == ReasonPace {
					if wait := h.Until().Sub(ht0.Add(now)); wait > MaxPause {
						t.Errorf("held by the pace %v from now, beyond MaxPause %v", wait, MaxPause)
					}
					return
				}
				break
			}
			ls = append(ls, l)
		}
		now += 10 * time.Millisecond
		for i := range ls {
			d.rel(now, &ls[i], Outcome{First: true, Bytes: -1, Quotas: pol})
		}
	}
	t.Fatal("never held by the pace")
}

// Bound keeps the turn claims of holds its own rules give, however long:
// MaxRate's next start two days away, which Bound keeps. Cut to MaxPause
// (by a first fix of stored claims), the claimant lost its turn to a
// request that first asked two days later, and each cut woke the key's
// waiters.
func TestBoundKeepsLongClaim(t *testing.T) {
	cfg := Config{MaxRate: 1.0 / (2 * 86400)} // one start per two days
	var s State
	var l Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
		t.Fatal("first request not granted")
	}
	s.Release(t0, &cfg, &l, &Outcome{First: true})
	a := t0.Add(time.Millisecond)
	if h, ok := s.Acquire(a, &cfg, Ask{Turns: true}, &l); ok || !h.Until().Equal(t0.Add(48*time.Hour)) {
		t.Fatalf("a: granted %v, until %v", ok, h.Until())
	}
	gen := s.Generation()
	s.Bound(a.Add(time.Millisecond), &cfg) // the state read back from a Store
	if s.Generation() != gen {
		t.Errorf("Bound of a state it had nothing to cut moved the generation (waiters woken): %d -> %d", gen, s.Generation())
	}
	// b first asks at the pace's next start: a, older, holds its turn.
	next := t0.Add(48 * time.Hour)
	if _, ok := s.Acquire(next, &cfg, Ask{Turns: true}, &l); ok {
		t.Fatalf("b, first asking at %v, took the start a (first asked at %v) was held for: a's claim was cut by Bound; claims %+v", next, a, s.turns.c)
	}
}

// The same with a stated quota of one request per two days, no MaxRate.
func TestBoundKeepsLongPaceClaim(t *testing.T) {
	cfg := Config{}
	var s State
	s.policies = []policy{{name: "p", unit: unitRequests, q: 1, w: int64(48 * time.Hour)}}
	s.policies[0].log.add(instant(t0), 1, int64(48*time.Hour), 1)
	var l Lease
	a := t0.Add(time.Millisecond)
	if h, ok := s.Acquire(a, &cfg, Ask{Turns: true}, &l); ok || h.Until().Before(t0.Add(47*time.Hour)) {
		t.Fatalf("a: granted %v, until %v", ok, h.Until())
	}
	s.Bound(a.Add(time.Millisecond), &cfg)
	next := t0.Add(48 * time.Hour)
	if _, ok := s.Acquire(next, &cfg, Ask{Turns: true}, &l); ok {
		t.Fatalf("b took a's turn: a's claim was cut by Bound; claims %+v", s.turns.c)
	}
}
