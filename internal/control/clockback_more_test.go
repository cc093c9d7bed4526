package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// TestClockBackMaxRate: MaxRate one an hour; a start at t0
// sets the next at t0+1h. The clock steps back two days: capping only
// the pause and the live windows, the next start waited until t0+1h, 49
// hours from the new now. A Store's state (Bound) cuts it to one spacing
// (1h), and so does a step back now.
func TestClockBackMaxRate(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{MaxRate: 1.0 / 3600}
	var s State
	var l Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
		t.Fatal("first request held")
	}
	s.Release(t0, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true})
	back := t0.Add(-48 * time.Hour)
	var st State
	b, _ := s.MarshalBinary()
	if err := st.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	l = Lease{}
	h, ok := s.Acquire(back, &cfg, Ask{}, &l)
	if ok {
		return
	}
	st.Bound(back, &cfg)
	var l2 Lease
	h2, ok2 := st.Acquire(back, &cfg, Ask{}, &l2)
	if hold := h.Until().Sub(back); hold > MaxPause {
		t.Errorf("after a 48h step back, MaxRate of one an hour held the key %v (until %v); through a Store: granted %v, held until %v (%v)",
			hold, h.Until(), ok2, h2.Until(), h2.Until().Sub(back))
	}
}

// TestClockBackStartLog: a quota of 1 a minute (the server
// says 1 left, the reset a minute away); a start is logged at t0+1s. The
// clock steps back two days. The start, logged two days ahead, stayed in
// the minute's window until the clock caught up: every Acquire waited up
// to a minute, again and again, for 48 hours. Through a Store, Bound
// reads the start as made now and the key is free a minute later, and so
// is it now.
func TestClockBackStartLog(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	qs := []parse.Quota{{Policy: "m", Unit: "requests", Limit: 1, Remaining: 1, Window: time.Minute, Reset: time.Minute, Dialect: "ietf"}}
	cfg := Config{}
	var s State
	var l Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
		t.Fatal("first request held")
	}
	s.Release(t0, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true, Quotas: qs})
	at := t0.Add(2 * time.Minute)
	l = Lease{}
	if _, ok := s.Acquire(at, &cfg, Ask{}, &l); !ok {
		t.Fatal("second request held")
	}
	s.Release(at, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true, Quotas: qs})

	back := at.Add(-48 * time.Hour)
	st := storedBound(t, &s, back, &cfg)
	mem, store := firstGrant(&s, &cfg, back, Cost{}), firstGrant(st, &cfg, back, Cost{})
	if mem < 0 {
		t.Errorf("a quota of 1 a minute held the key more than 30 minutes after a 48h step back (the start logged 48h ahead stays counted until %v); through a Store the next start went after %v",
			at.Add(time.Minute), store)
	}
}

// TestClockBackStopRetries: a stop of retries (abnormal usage
// reported: ten minutes) set at t0; the clock steps back two days.
// Retries were refused for 48h10m. Through a Store (Bound), and now, the
// stop ends by MaxPause (the longest hold) from the new now.
func TestClockBackStopRetries(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{}
	var s State
	var l Lease
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &l); !ok {
		t.Fatal("first request held")
	}
	s.Release(t0, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true})
	s.retry.stopUntil = addSat(Instant(t0), int64(stopRetrying)) // as Release sets it on Plan.Stop
	back := t0.Add(-48 * time.Hour)
	l = Lease{}
	if _, ok := s.Acquire(back, &cfg, Ask{}, &l); !ok {
		t.Fatal("held after the step back")
	}
	s.Release(back, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true})
	later := back.Add(MaxPause + time.Hour)
	if n := s.retry.left(Instant(later)); n == 0 {
		t.Errorf("a stop of retries of %v set before a 48h step back still refuses every retry %v after it (stop ends %v from the step)",
			stopRetrying, later.Sub(back), at(s.retry.stopUntil).Sub(back))
	}
}

// TestClockBackCostQuota: a token quota of 1000, spent, whole
// again in 10 s, observed at t0. The clock steps back two days: capping
// only the pause and the live windows left the cost quotas' instants
// (observed, reset) two days ahead.
func TestClockBackCostQuota(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{}
	q := []parse.Quota{{Unit: "tokens", Limit: 1000, Remaining: 0, Reset: 10 * time.Second, Dialect: "openai"}}
	var s State
	var p Lease
	p.SetCost(Cost{Tokens: 1000})
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &p); !ok {
		t.Fatal("first not granted")
	}
	s.Release(t0, &cfg, &p, &Outcome{First: true, Bytes: -1, Served: true, Quotas: q})
	back := t0.Add(-48 * time.Hour)
	st := storedBound(t, &s, back, &cfg)
	mem, store := firstGrant(&s, &cfg, back, Cost{Tokens: 1000}), firstGrant(st, &cfg, back, Cost{Tokens: 1000})
	if mem < 0 {
		t.Errorf("a token quota whole again in 10s held a 1000-token request more than 30 min after a 48h step back (%v); through a Store granted after %v", mem, store)
	}
}

// storedBound returns s as a Store gives it back at now: through its
// binary form, then bounded (State.Bound).
func storedBound(t *testing.T, s *State, now time.Time, cfg *Config) *State {
	t.Helper()
	var st State
	b, _ := s.MarshalBinary()
	if err := st.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	st.Bound(now, cfg)
	return &st
}

// firstGrant returns how long after from s first grants a request of
// cost c, asking again a second after each hold (or at its end, if
// sooner than an hour from from); -1 if not within 30 minutes, -2 if
// never.
func firstGrant(s *State, cfg *Config, from time.Time, c Cost) time.Duration {
	now := from
	for now.Sub(from) < 30*time.Minute {
		var l Lease
		l.SetCost(c)
		h, ok := s.Acquire(now, cfg, Ask{}, &l)
		if ok {
			return now.Sub(from)
		}
		if h.Never {
			return -2
		}
		now = now.Add(time.Second)
		if u := h.Until(); u.After(now) && u.Sub(from) < time.Hour {
			now = u
		}
	}
	return -1
}
