package control

import (
	"bytes"
	"testing"
	"time"
)

// A server that limits no rate and refuses a share of requests at random,
// bare (8 workers, 20ms answers, 300s, 20 seeds): each refusal cut the
// learned quota or measured it again, and the quota shrank for good, the
// key served a few percent of what its workers asked by the end. The
// share refused stays the same as the learned pace falls, which no limit
// does (see shares.go): the learned quota is forgotten, and from then on
// only the refused request waits. At one in a hundred, 19 of 20 seeds get
// the verdict (18 within 30s; one at 2m3s, where the learned quota's
// window had grown a third at each refusal); the one left had its quota
// cut a request at a time, 10 to 6 per 1.3s over a minute, slower than the
// test needs. At one in 20, all 20 do. With the verdict, the key is served
// in the last 30s what its workers ask, less the refusal floor each
// refused request waits (0.87 to 1.07 of that, at one in 20 or one in 100).
func TestSharesShedLoadIsNoRate(t *testing.T) {
	const workers, lat = 8, 20 * time.Millisecond
	for _, shed := range []int64{100, 20} {
		verdicts := 0
		for seed := range uint64(20) {
			r := &limiterSim{rnd: 88172645463325252 + seed*7919, jitter: int64(lat / 4), latency: int64(lat), refLat: int64(lat),
				q: 1 << 40, w: int64(time.Second), bucket: true, shed: shed}
			r.run(workers, 300*time.Second)
			if !r.s.shares.none {
				continue
			}
			verdicts++
			// A worker's cycle: shed-1 acceptances at its own pace, an
			// answer each 20-25ms, then a refusal and the refusal floor.
			cycle := time.Duration(shed)*(lat+lat/8) + RefusalFloor
			last, most := r.acceptedIn(270*time.Second, 300*time.Second), int(30*time.Second/cycle)*int(shed-1)*workers
			if r.s.learn.quota != nil || last < most*3/4 {
				t.Errorf("1 in %d shed, seed %d: a learned quota (%v) or %d accepted in the last 30s, want none and at least %d (3/4 of %d)",
					shed, seed, r.s.learn.quota != nil, last, most*3/4, most)
			}
		}
		if verdicts < 18 {
			t.Errorf("1 in %d shed: %d of 20 seeds read as of no rate, want 18 at least", shed, verdicts)
		}
	}
}

// A verdict of no rate is never given against the rate limiters of
// TestShedCostsRateLimitersLittle, over their 20 seeds of 120s each: a
// limit refuses no pace well below one it let through at a low share.
func TestSharesRateLimitersKeepTheirRate(t *testing.T) {
	if raceEnabled {
		t.Skip("a simulation on one goroutine, ten times slower under the race detector: run without it")
	}
	for _, c := range rateLimiters {
		for seed := range uint64(20) {
			r := c.mk(88172645463325252 + seed*7919)
			verdicts := 0
			r.trace = func(int64, *simReq, Plan) {
				if r.s.shares.none {
					verdicts++
				}
			}
			r.run(c.workers, 120*time.Second)
			if verdicts > 0 {
				t.Errorf("%s, seed %d: %d answers read with a verdict of no rate", c.name, seed, verdicts)
			}
		}
	}
}

// A verdict revoked: a limit that refuses a share of sharesMost in a
// block of sharesBlock answers or more is read as a rate again, from
// that refusal on: the learner measures from it.
func TestSharesVerdictRevoked(t *testing.T) {
	k := acceptedKey(t, 40) // a retry budget for the refused requests
	k.s.shares = shares{none: true}
	for i := range sharesMost {
		for range 2 {
			k.answered(5 * time.Millisecond)
		}
		x := k.grant()
		k.now += int64(5 * time.Millisecond)
		p := k.release(&x, shedRefused)
		if i < sharesMost-1 && (!k.s.shares.none || p.Pause != 0 || k.now < k.s.pauseUntil || k.s.learn.pending) {
			t.Fatalf("refusal %d of a block: verdict %v, pause %v, measuring %v", i+1, k.s.shares.none, p.Pause, k.s.learn.pending)
		}
		if i == sharesMost-1 && (k.s.shares.none || !k.s.learn.pending) {
			t.Fatalf("refusal %d of a block: verdict %v, measuring %v", i+1, k.s.shares.none, k.s.learn.pending)
		}
	}
}

// The test's tail reads back, and one no controller writes is rejected.
func TestSharesTail(t *testing.T) {
	s := State{seq: 9, epoch: 4}
	s.touch(instant(t0))
	for _, good := range []shares{{fast: 7 * int64(time.Millisecond), run: 3}, {none: true, run: sharesRun, ok: 20, no: 3}, {run: 1}} {
		s.shares = good
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back State
		if err := back.UnmarshalBinary(b); err != nil || back.shares != good {
			t.Errorf("%+v read back as %+v (%v)", good, back.shares, err)
		}
	}
	for _, bad := range []shares{{run: sharesRun + 1}, {none: true, fast: 5}, {none: true, no: sharesMost}, {none: true, ok: sharesBlock - 2, no: 2}, {ok: 1}, {no: 1, run: 2}, {fast: int64(MaxPause) + 1}} {
		s.shares = bad
		b, _ := s.MarshalBinary()
		var back State
		if err := back.UnmarshalBinary(b); err == nil {
			t.Errorf("%+v was read back", bad)
		}
	}
	s.shares = shares{}
	b, _ := s.MarshalBinary()
	var back State
	if err := back.UnmarshalBinary(append(bytes.Clone(b), tailShares, 0, 0, 0, 0, 0)); err == nil {
		t.Errorf("an empty test was read back")
	}
}
