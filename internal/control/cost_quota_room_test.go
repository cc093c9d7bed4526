package control

import (
	"fmt"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

type fstep struct {
	at     time.Duration
	op     byte // 'a' acquire, 'r' release with quotas
	lease  string
	cost   Cost
	quotas []parse.Quota
	held   Reason
}

func runFSteps(t *testing.T, s *State, cfg *Config, steps []fstep) {
	t.Helper()
	leases := map[string]*Lease{}
	for i, st := range steps {
		now := t0.Add(st.at)
		if st.op == 'r' {
			s.Release(now, cfg, leases[st.lease], &Outcome{First: true, Served: true, Bytes: -1, Quotas: st.quotas})
			continue
		}
		l := new(Lease)
		l.SetCost(st.cost)
		h, ok := s.Acquire(now, cfg, Ask{}, l)
		if ok {
			leases[st.lease] = l
		}
		if ok && st.held != ReasonNone || !ok && h.Reason != st.held {
			t.Fatalf("step %d: Acquire of %s (%+v) at +%v: granted %v, held for %v; want held for %v (none: granted); policies %+v",
				i, st.lease, st.cost, st.at, ok, h.Reason, st.held, s.View(now).Policies)
		}
	}
}

// fillers are seven quotas of input-tokens, with plenty left, that a cost
// of Tokens alone never binds: they fill the key's cost quotas so that the
// quota stated after them is the ninth.
func fillers() []parse.Quota {
	var qs []parse.Quota
	for i := range 7 {
		qs = append(qs, parse.Quota{Policy: fmt.Sprint("in", i), Unit: "input-tokens", Limit: 1 << 40, Window: time.Minute, Remaining: 1 << 40, Reset: time.Minute, Dialect: "ietf"})
	}
	return qs
}

// A weekly tokens quota (100000 a week, 60000 left) and a daily one
// (50000 a day, its window ending in 30 s) stated ninth. The weekly window
// is kept as MaxPause (24h), cut: the daily quota does not make it
// redundant, and across the day's reset the key holds a request the week
// cannot pay for (read as 100000 a day, the week was dropped for the day,
// and 75000 went against the 60000 the week had left).
func TestWeeklyQuotaNotRedundant(t *testing.T) {
	const day = 24 * time.Hour
	ans := func(fill bool, wk, d int64, dReset time.Duration) []parse.Quota {
		qs := []parse.Quota{{Policy: "week", Unit: "tokens", Limit: 100000, Window: 7 * day, Remaining: wk, Reset: 5 * day, Dialect: "ietf"}}
		if fill {
			qs = append(qs, fillers()...)
		}
		return append(qs, parse.Quota{Policy: "day", Unit: "tokens", Limit: 50000, Window: day, Remaining: d, Reset: dReset, Dialect: "ietf"})
	}
	tok := Cost{Tokens: 25000}
	s1 := time.Second
	for _, fill := range []bool{false, true} {
		t.Run(fmt.Sprint("ninth=", fill), func(t *testing.T) {
			var s State
			runFSteps(t, &s, &Config{}, []fstep{
				{0, 'a', "A", tok, nil, ReasonNone},
				{s1, 'r', "A", tok, ans(fill, 60000, 25000, 29*s1), ReasonNone},
				{2 * s1, 'a', "B", tok, nil, ReasonNone},
				{3 * s1, 'r', "B", tok, ans(fill, 35000, 0, 27*s1), ReasonNone},
				{31 * s1, 'a', "C", tok, nil, ReasonNone}, // the day renewed at +30s
				{32 * s1, 'r', "C", tok, ans(fill, 10000, 25000, day-2*s1), ReasonNone},
				// the week has 10000 left: a request of 25000 must wait.
				{33 * s1, 'a', "D", tok, nil, ReasonQuota},
			})
		})
	}
}

// A tight daily quota stated ninth, after a weekly one and seven of
// input-tokens that no request declares a cost in, takes the place of one
// of the seven, which bind no request; and the first answer after a pause
// of over a minute keeps it: a quota the answer states is not the one
// heard of least recently that goes (the weekly quota, stated first, took
// the daily one's slot, all tied, and the daily quota, spent, was no
// longer read).
func TestNinthQuotaKeptAfterPause(t *testing.T) {
	const day = 24 * time.Hour
	ans := func(fill bool, wk, d int64) []parse.Quota {
		qs := []parse.Quota{{Policy: "week", Unit: "tokens", Limit: 100000, Window: 7 * day, Remaining: wk, Reset: 5 * day, Dialect: "ietf"}}
		if fill {
			qs = append(qs, fillers()...)
		}
		return append(qs, parse.Quota{Policy: "day", Unit: "tokens", Limit: 50000, Window: day, Remaining: d, Reset: 20 * time.Hour, Dialect: "ietf"})
	}
	tok := Cost{Tokens: 20000}
	s1 := time.Second
	for _, fill := range []bool{false, true} {
		t.Run(fmt.Sprint("ninth=", fill), func(t *testing.T) {
			var s State
			runFSteps(t, &s, &Config{}, []fstep{
				{0, 'a', "A", tok, nil, ReasonNone},
				{s1, 'r', "A", tok, ans(fill, 60000, 20000), ReasonNone},
				{2 * time.Minute, 'a', "B", tok, nil, ReasonNone},
				{2*time.Minute + s1, 'r', "B", tok, ans(fill, 40000, 0), ReasonNone},
				// the day is spent for 20 hours: a request must wait.
				{2*time.Minute + 2*s1, 'a', "C", tok, nil, ReasonQuota},
			})
		})
	}
}

// A fixed-window quota of 1000 a minute with 600 left (reset in 50 s) and
// one of 600 a minute stated ninth with 400 left (reset in 10 s): the
// second's window renews within the first's, so it allows 1000 within the
// first's window, and the first, with 600 left, binds and stays (taken as
// redundant, 600 >= 600·⌈60/60⌉, it was dropped, and 200 + 600 more went
// against its 600).
func TestFixedWindowQuotaNotRedundant(t *testing.T) {
	ans := func(fill bool, at time.Duration, o, n int64) []parse.Quota {
		qs := []parse.Quota{{Policy: "o", Unit: "tokens", Limit: 1000, Window: time.Minute, Remaining: o, Reset: 50*time.Second - at, Dialect: "ietf"}}
		if fill {
			qs = append(qs, fillers()...)
		}
		nr := 10*time.Second - at
		if nr <= 0 {
			nr += time.Minute
		}
		return append(qs, parse.Quota{Policy: "n", Unit: "tokens", Limit: 600, Window: time.Minute, Remaining: n, Reset: nr, Dialect: "ietf"})
	}
	tok := Cost{Tokens: 200}
	ms := time.Millisecond
	for _, fill := range []bool{false, true} {
		t.Run(fmt.Sprint("ninth=", fill), func(t *testing.T) {
			var s State
			runFSteps(t, &s, &Config{}, []fstep{
				{0, 'a', "A", tok, nil, ReasonNone},
				{100 * ms, 'r', "A", tok, ans(fill, 100*ms, 600, 400), ReasonNone},
				{time.Second, 'a', "B", tok, nil, ReasonNone},
				{time.Second + 100*ms, 'r', "B", tok, ans(fill, time.Second+100*ms, 400, 200), ReasonNone},
				{2 * time.Second, 'a', "C", tok, nil, ReasonNone},
				{2*time.Second + 100*ms, 'r', "C", tok, ans(fill, 2*time.Second+100*ms, 200, 0), ReasonNone},
				{11 * time.Second, 'a', "D", tok, nil, ReasonNone}, // n renewed at +10s
				{11*time.Second + 100*ms, 'r', "D", tok, ans(fill, 11*time.Second+100*ms, 0, 400), ReasonNone},
				// o has 0 left until +50s: E must wait.
				{12 * time.Second, 'a', "E", tok, nil, ReasonQuota},
			})
		})
	}
}
