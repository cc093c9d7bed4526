package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// States a hostile or broken process may write to a shared Store, each
// with an instant 50 years ahead that no controller writes: decoded and
// Bound (as a Budget bounds every state it reads from a Store), the key
// holds its requests no longer than MaxPause, and distrusts stated quotas
// no longer than distrustMax.

// A learned quota at its even pace whose log holds a start 50 years ahead:
// Bound cut the stated quotas' logs but not the learned one's, and the
// next Acquire was held until 2076.
func TestBoundLearnedStartFar(t *testing.T) { boundHoldsNoLonger(t, learnedStartFar()) }

// learnedStartFar returns the state of TestBoundLearnedStartFar, at t0.
func learnedStartFar() *State {
	now := instant(t0)
	var s State
	s.touch(now)
	s.used, s.expiry, s.seq, s.gen = now, now+int64(time.Hour), 5, 3
	q := &policy{name: "", unit: unitRequests, q: 10, w: int64(time.Minute), seen: now}
	q.log.push(start{at: now + 50*365*24*int64(time.Hour), n: 1}, 0)
	q.log.total = 1
	s.learn.quota = q
	s.learn.smooth = smoothOn
	return &s
}

// A live observation whose stated reset (the one a test of a late reset
// goes at: phase.go) is 50 years ahead, its window's end near: Bound cut
// the window's end but not the stated reset, and every hold said 2076.
func TestBoundStatedResetFar(t *testing.T) { boundHoldsNoLonger(t, statedResetFar()) }

// statedResetFar returns the state of TestBoundStatedResetFar, at t0.
func statedResetFar() *State {
	now := instant(t0)
	var s State
	s.touch(now)
	s.used, s.expiry, s.seq, s.gen = now, now+int64(time.Hour), 5, 3
	s.ramp.open, s.ramp.cwnd = true, 4
	s.policies = []policy{{name: "p", unit: unitRequests, q: 10, w: int64(time.Minute), seen: now, live: true, minR: 1,
		deadline: now + int64(time.Minute), stated: now + 50*365*24*int64(time.Hour), skips: true}}
	return &s
}

// A learned quota's distrust of stated quotas 50 years ahead (a state
// this code writes distrusts them distrustMax at most): decoded unbounded,
// the learned quota of one request an hour held a key whose server states
// 990 of 1000 left, ten days on.
func TestBoundDistrustFar(t *testing.T) {
	now := instant(t0)
	var s State
	s.touch(now)
	s.used, s.expiry, s.seq, s.gen = now, now+int64(time.Hour), 5, 3
	s.ramp.open, s.ramp.cwnd = true, 0
	s.learn.quota = &policy{unit: unitRequests, q: 1, w: int64(time.Hour), seen: now}
	s.learn.distrustUntil = now + 50*365*24*int64(time.Hour)
	s.learn.distrustFor = distrustMax
	b, _ := s.MarshalBinary()
	var d State
	if err := d.UnmarshalBinary(b); err != nil {
		t.Fatalf("rejected: %v", err)
	}
	cfg := Config{}
	d.Bound(t0, &cfg)
	later := t0.Add(10 * 24 * time.Hour)
	held := 0
	for i := range 5 {
		at := later.Add(time.Duration(i) * time.Second)
		var l Lease
		h, ok := d.Acquire(at, &cfg, Ask{}, &l)
		if !ok {
			held++
			t.Logf("held at %v until %v reason %v", at, h.Until(), h.Reason)
			continue
		}
		d.Release(at, &cfg, &l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: []parse.Quota{{Policy: "p", Unit: "requests", Limit: 1000, Window: time.Hour, Remaining: 990, Reset: time.Hour, Dialect: "ietf"}}})
	}
	if held > 0 {
		t.Errorf("10 days after a decode, a key whose server states 990 of 1000 left is still held %d times of 5 by its learned quota: distrustUntil %v decoded unbounded", held, at(d.learn.distrustUntil))
	}
}

// boundHoldsNoLonger writes s as a Store keeps it, reads it back, bounds it
// at t0 as a Budget bounds a state it reads from a Store, and asks it for
// a request at t0: held, the request must be held no longer than MaxPause.
func boundHoldsNoLonger(t *testing.T, s *State) {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d State
	if err := d.UnmarshalBinary(b); err != nil {
		t.Fatalf("form %x rejected: %v", b, err)
	}
	cfg := Config{}
	d.Bound(t0, &cfg)
	var l Lease
	if h, ok := d.Acquire(t0, &cfg, Ask{}, &l); !ok && h.Until().Sub(t0) > MaxPause {
		t.Errorf("decoded and Bound at %v, the key holds its next request until %v (reason %v): past MaxPause (%v)", t0, h.Until(), h.Reason, MaxPause)
	}
}
