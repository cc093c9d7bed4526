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
// does (see shares.go): the learned quota stops pacing, and from then on
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
			if now := instant(t0) + int64(300*time.Second); r.s.learnPaces(now) || last < most*3/4 {
				t.Errorf("1 in %d shed, seed %d: the learned quota paces (%v), or %d accepted in the last 30s, want it not to and at least %d (3/4 of %d)",
					shed, seed, r.s.learnPaces(now), last, most*3/4, most)
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
			if n := sharesVerdicts(r, c.workers, 120*time.Second); n > 0 {
				t.Errorf("%s, seed %d: %d verdicts of no rate", c.name, seed, n)
			}
		}
	}
}

// sharesVerdicts runs r and counts the verdicts of no rate it gave.
func sharesVerdicts(r *limiterSim, workers int, d time.Duration) int {
	n, was := 0, false
	r.trace = func(int64, *simReq, Plan) {
		if r.s.shares.none && !was {
			n++
		}
		was = r.s.shares.none
	}
	r.run(workers, d)
	return n
}

// fixedWin is a fixed window of q per w from the run's start.
type fixedWin struct{ q, w, start, used int64 }

// take admits a request arriving since after the run began.
func (f *fixedWin) take(since int64) bool {
	for since >= f.start+f.w {
		f.start, f.used = f.start+f.w, 0
	}
	if f.used < f.q {
		f.used++
		return true
	}
	return false
}

// Limits that do give a verdict, wrongly: two at once (20 a second and 300
// a minute), the second refusing a pace the first let through; a token
// bucket 200 deep refilled at 2 a second, whose depth let the steps of
// growth pass at many times its rate; one of 40 a second shared with a
// client that takes 35 of it every other 30s; one of 100 a second lowered
// to 10 at 60s. Each verdict is revoked by the refusals it lets through,
// the learned quota pacing again as it was, and the next needs twice the
// fall: over 5 seeds of 300s each, a key gives sharesStrikes verdicts at
// most, and is refused no more than sharesMost and its flight at each,
// accepted as much within 5%, against the same key with the test off.
func TestSharesLimitsCostLittle(t *testing.T) {
	if raceEnabled {
		t.Skip("a simulation on one goroutine, ten times slower under the race detector: run without it")
	}
	const workers, lat = 8, 20 * time.Millisecond
	sim := func(seed uint64, admit func(since int64) bool) *limiterSim {
		return &limiterSim{rnd: 88172645463325252 + seed*7919, jitter: int64(lat / 4), latency: int64(lat), refLat: int64(lat), custom: admit}
	}
	for _, c := range []struct {
		name string
		mk   func(seed uint64) *limiterSim
	}{
		{"two limits, 20/1s and 300/1m", func(seed uint64) *limiterSim {
			a, b := &fixedWin{q: 20, w: int64(time.Second)}, &fixedWin{q: 300, w: int64(time.Minute)}
			return sim(seed, func(since int64) bool {
				if !a.take(since) {
					return false
				}
				if !b.take(since) {
					a.used-- // counted by neither
					return false
				}
				return true
			})
		}},
		{"token bucket 200 deep, 2/s", func(seed uint64) *limiterSim {
			const lat = 50 * time.Millisecond
			return &limiterSim{rnd: 88172645463325252 + seed*7919, jitter: int64(lat / 4), latency: int64(lat), refLat: int64(lat),
				q: 200, w: int64(100 * time.Second), bucket: true}
		}},
		{"40/1s shared every other 30s", func(seed uint64) *limiterSim {
			f := &fixedWin{q: 40, w: int64(time.Second)}
			return sim(seed, func(since int64) bool {
				for since >= f.start+f.w {
					f.start, f.used = f.start+f.w, 0
					if f.start/int64(30*time.Second)%2 == 1 {
						f.used = 35
					}
				}
				return f.take(since)
			})
		}},
		{"100/1s lowered to 10/1s at 60s", func(seed uint64) *limiterSim {
			f := &fixedWin{q: 100, w: int64(time.Second)}
			return sim(seed, func(since int64) bool {
				if since >= int64(time.Minute) {
					f.q = 10
				}
				return f.take(since)
			})
		}},
	} {
		var acc, ref, accOff, refOff, most int
		for seed := range uint64(5) {
			r := c.mk(seed)
			n := sharesVerdicts(r, workers, 300*time.Second)
			off := c.mk(seed)
			off.s.shares.strikes = sharesStrikes // the test off
			if m := sharesVerdicts(off, workers, 300*time.Second); m != 0 {
				t.Fatalf("%s, seed %d: %d verdicts with the test off", c.name, seed, m)
			}
			acc, ref, accOff, refOff, most = acc+r.accepted, ref+r.refused, accOff+off.accepted, refOff+off.refused, max(most, n)
		}
		t.Logf("%s: %d accepted, %d refused, at most %d verdicts a seed; with the test off %d and %d", c.name, acc, ref, most, accOff, refOff)
		if bound := refOff + 5*sharesStrikes*(sharesMost+workers); most > sharesStrikes || ref > bound || acc < accOff*95/100 {
			t.Errorf("%s: %d accepted, %d refused, %d verdicts in a seed; want at least %d accepted (95%% of %d with the test off), at most %d refused (%d, and %d a verdict) and %d verdicts",
				c.name, acc, ref, most, accOff*95/100, accOff, bound, refOff, sharesMost+workers, sharesStrikes)
		}
	}
}

// A verdict revoked: a limit that refuses a share of sharesMost in a
// block of sharesBlock answers or more is read as a rate again, from
// that refusal on: by the learned quota kept through the verdict, which
// paces the key again, the shed rule's mark left alone; one strike more.
func TestSharesVerdictRevoked(t *testing.T) {
	const lat = 20 * time.Millisecond
	r := &limiterSim{rnd: 88172645463325252, jitter: int64(lat / 4), latency: int64(lat), refLat: int64(lat),
		q: 1 << 40, w: int64(time.Second), bucket: true, shed: 100}
	r.run(8, 60*time.Second)
	if !r.s.shares.none || r.s.learn.quota == nil {
		t.Fatalf("no verdict after 60s of one request in 100 shed (verdict %v, learned quota %v)", r.s.shares.none, r.s.learn.quota != nil)
	}
	k := &shedKey{t: t, s: r.s, now: instant(t0) + int64(61*time.Second)}
	k.s.shares.ok, k.s.shares.no = 0, 0
	for i := range sharesMost {
		for range 2 {
			k.answered(5 * time.Millisecond)
		}
		x := k.grant()
		k.now += int64(5 * time.Millisecond)
		p := k.release(&x, shedRefused)
		if i < sharesMost-1 && (!k.s.shares.none || p.Pause != 0 || k.s.learnPaces(k.now)) {
			t.Fatalf("refusal %d of a block: verdict %v, pause %v, learned quota pacing %v", i+1, k.s.shares.none, p.Pause, k.s.learnPaces(k.now))
		}
		if i == sharesMost-1 && (k.s.shares.none || k.s.shares.strikes != 1 || !k.s.learnPaces(k.now) || k.s.shed.seq != 0) {
			t.Fatalf("refusal %d of a block: verdict %v, strikes %d, learned quota pacing %v, shed mark %v", i+1, k.s.shares.none, k.s.shares.strikes, k.s.learnPaces(k.now), k.s.shed.seq != 0)
		}
	}
}

// The test's tail reads back, and one no controller writes is rejected.
func TestSharesTail(t *testing.T) {
	s := State{seq: 9, epoch: 4}
	s.touch(instant(t0))
	for _, good := range []shares{{fast: 7 * int64(time.Millisecond), run: 3}, {none: true, run: sharesRun, ok: 20, no: 3, strikes: 2}, {run: 1}, {strikes: sharesStrikes}} {
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
	for _, bad := range []shares{{run: sharesRun + 1}, {none: true, fast: 5}, {none: true, no: sharesMost}, {none: true, ok: sharesBlock - 2, no: 2}, {ok: 1}, {no: 1, run: 2}, {fast: int64(MaxPause) + 1}, {strikes: sharesStrikes + 1}, {none: true, strikes: sharesStrikes}} {
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
	if err := back.UnmarshalBinary(append(bytes.Clone(b), tailShares, 0, 0, 0, 0, 0, 0)); err == nil {
		t.Errorf("an empty test was read back")
	}
}
