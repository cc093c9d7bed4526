package control

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// steadyOutcome draws an outcome as a server that states one quota of
// requests sends them: mostly an answer accepted with its quota (a limit
// small, exact or large, a window of a second or a minute, what is left
// and the reset), now and then nothing, a quota spent, another policy, a
// refusal or a failure; when calm, nearly always the quota.
func steadyOutcome(next func() byte, b byte, calm bool) Outcome {
	o := Outcome{First: b&8 != 0, Bytes: int64(next()) - 1, Rand: uint64(next()) << 40}
	if next()%4 == 0 {
		o.Dated, o.Skew = true, time.Duration(int64(next())-128)*time.Duration(10*time.Millisecond)
	}
	kind := next() % 16
	if calm && next()%8 != 0 || kind == 10 && next()%8 != 0 || kind == 11 && next()%8 != 0 ||
		kind >= 12 && kind <= 14 && next()%4 != 0 {
		kind = 0 // another policy, or a quota of tokens, stays; refusals and failures: seldom
	}
	limits := [...]int64{4, 100, 1000, 1_000_000_000}
	windows := [...]time.Duration{time.Second, time.Minute, 0, time.Hour}
	resets := [...]time.Duration{time.Second / 2, time.Minute, time.Hour, 0}
	q := parse.Quota{Policy: "api", Dialect: "ietf", Limit: limits[next()%4], Window: windows[next()%4],
		Remaining: int64(next() % 64), Reset: resets[next()%4]}
	if q.Limit > 1000 {
		q.Remaining = q.Limit - int64(next())
	}
	switch kind {
	case 0, 1, 2, 3, 4, 5, 6, 7: // the quota
		if next()%8 == 0 {
			q.Dialect = "github"
		}
		o.Quotas = []parse.Quota{q}
	case 8:
		// nothing stated
	case 9:
		q.Remaining = 0
		o.Quotas = []parse.Quota{q}
	case 10:
		q.Policy = "other"
		o.Quotas = []parse.Quota{q}
	case 11:
		q.Unit = "tokens"
		o.Quotas = []parse.Quota{q}
	case 12, 13:
		o.Refused = true
		o.Quotas = []parse.Quota{q}
		o.Refusal = Refusal{Given: next()%2 == 0, Wait: time.Duration(next()) * 10 * time.Millisecond, Reason: ReasonRetryAfter,
			Backoff: time.Duration(next()) * 10 * time.Millisecond, Retryable: next()%2 == 0, MaxWait: time.Minute}
	case 14:
		o.Failed = true
	case 15:
		o.Keep = true
		o.Quotas = []parse.Quota{q}
	}
	return o
}

// TestPacedPathMatchesFull runs the differential drive with the outcomes
// of a server that states one quota, and checks that the paced path was
// taken often: it must leave the States as the full path does.
func TestPacedPathMatchesFull(t *testing.T) {
	total, paced := 0, 0
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
		next := func() byte { return byte(r.Uint32()) }
		steps := 400
		_, p := drive(t, next, steps, steadyOutcome)
		paced += p
		total += steps
	}
	t.Logf("paced path eligible in %d of %d steps", paced, total)
	if paced < total/20 { // half the steps are Acquires
		t.Fatalf("paced path eligible in %d of %d steps, want at least a tenth of the Acquires: the test no longer exercises it", paced, total)
	}
}

// FuzzPacedPath runs the differential drive with the outcomes of a server
// that states one quota on any bytes.
func FuzzPacedPath(f *testing.F) {
	f.Add([]byte{})
	addRandomSeeds(f, 3, 4)
	f.Fuzz(func(t *testing.T, data []byte) {
		drive(t, byteReader(data), min(len(data), 2000), steadyOutcome)
	})
}

// Pacing: "no more than q starts in any span of w, for every
// RateLimit-Policy in unit requests". A probe accepted with less than
// half of q left marks the policy a sliding-window counter, "paced
// smoothly, one start per w/(q-1)", and the starts of the window before
// still count against q per w. Only the last start was read, at the short
// pace: q+2 started within w. (A sliding log, which the design says "reads
// the same, and paced at q-1 per w it is still within its rate", refused
// the extra starts.)
func TestSlidingSwitchKeepsStatedQuota(t *testing.T) {
	var s State
	cfg := Config{}
	quota := func(r int64, reset time.Duration) []parse.Quota {
		return []parse.Quota{{Policy: "p", Dialect: "ietf", Limit: 4, Window: 4 * time.Second, Remaining: r, Reset: reset}}
	}
	var starts []time.Duration
	acq := func(at time.Duration) (Lease, Hold, bool) {
		var l Lease
		h, ok := s.Acquire(rAt(at), &cfg, Ask{}, &l)
		if ok {
			starts = append(starts, at)
		}
		return l, h, ok
	}
	rel := func(at time.Duration, l *Lease, qs []parse.Quota) {
		s.Release(rAt(at), &cfg, l, &Outcome{First: true, Bytes: -1, Quotas: qs})
	}
	p, _, ok := acq(0)
	if !ok {
		t.Fatal("probe held")
	}
	rel(50*ms, &p, quota(3, 1150*ms)) // the window ends at 1.2s
	a, _, ok1 := acq(100 * ms)
	b, _, ok2 := acq(100 * ms)
	if !ok1 || !ok2 {
		t.Fatal("A or B held")
	}
	rel(150*ms, &a, quota(1, 1050*ms))
	rel(160*ms, &b, quota(0, 1040*ms)) // spent: the key pauses until 1.2s
	// The probe after the reset: 3 starts within 4s so far, q=4, so it goes.
	now := 1200 * ms
	l, h, ok := acq(now)
	if !ok {
		t.Fatalf("probe at 1.2s held %+v (until %v)", h, h.Until().Sub(rt0))
	}
	// Accepted with r=1 of 4 (a sliding counter): marked, paced q-1 per w.
	rel(1250*ms, &l, quota(1, 3950*ms))
	t.Logf("sliding=%v", s.policies[0].sliding)
	// Ask every 10ms until 4s: no more than 4 starts within any 4s.
	for now = 1260 * ms; now < 4*time.Second; now += 10 * ms {
		if l, _, ok := acq(now); ok {
			rel(now+10*ms, &l, quota(1, 5200*ms-now-10*ms))
		}
	}
	for i := range starts {
		n := 0
		for j := i; j < len(starts) && starts[j] < starts[i]+4*time.Second; j++ {
			n++
		}
		if n > 4 {
			t.Fatalf("%d starts within 4s from %v (q=4;w=4s): starts %v", n, starts[i], starts)
		}
	}
}

// The paced path reads a clock stepped back as acquire does: a key whose
// ramp was last heard from in what is now the future was heard from no
// later than now (see ramp.stallAt). Held by the pace, it kept the
// instant, and the two paths' states differed.
func TestPacedPathClockBack(t *testing.T) {
	var cfg Config
	var fast, full State
	now := instant(t0)
	q := parse.Quota{Policy: "api", Dialect: "ietf", Limit: 3, Window: 10 * time.Second, Remaining: 3, Reset: 10 * time.Second}
	step := func(what string) (ok bool) {
		var lf, ll Lease
		h1, ok1 := fast.acquireAt(now, &cfg, &Ask{}, &lf, true)
		h2, ok2 := full.acquireAt(now, &cfg, &Ask{}, &ll, false)
		if ok1 != ok2 || h1 != h2 || !reflect.DeepEqual(fast, full) {
			t.Fatalf("%s: Acquire: quiet path (%+v, %v), full path (%+v, %v)\nquiet %+v\nfull  %+v", what, h1, ok1, h2, ok2, fast, full)
		}
		if ok1 {
			o1, o2 := Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{q}}, Outcome{First: true, Bytes: -1, Quotas: []parse.Quota{q}}
			fast.releaseAt(at(now), now, &cfg, &lf, &o1, true)
			full.releaseAt(at(now), now, &cfg, &ll, &o2, false)
		}
		return ok1
	}
	for i := range 4 {
		step("start " + string(rune('1'+i)))
		now += int64(20 * time.Millisecond)
	}
	if fast.paced(now, &cfg) == nil || step("held by the pace") {
		t.Fatalf("setup: not held on the paced path")
	}
	now -= int64(5 * time.Second) // the clock steps back
	step("after the clock stepped back")
}
