package polite

import (
	"testing"
	"time"
	"unsafe"

	"github.com/politehttp/polite/internal/control"
)

// Restraint.Adaptive's latency is the time from a request's start to its
// answer. Taken as the difference of two wall-clock readings
// (now.UnixNano() - reservation.start), a request in flight while the wall
// clock stepped forward (an NTP step, a VM or laptop resumed) read the step
// as its latency (clamped to 10 minutes). Here the origin answers in
// 50ms, one request of its first measurement (a page every 4s) is in
// flight across a step of a minute, and the baseline came out at 987ms:
// when the origin then queued (500ms, ten times its latency), nothing
// looked slow, and the limit held at 4 until the next measurement. The
// instants the gradient compares carry Go's monotonic reading; the
// latency must too.
func TestAdaptiveLatencyAcrossWallClockStep(t *testing.T) {
	var c ceilings
	rs := &Restraint{MaxConcurrency: 16, Adaptive: true}
	k := originKey("https", "app.test").m
	now := time.Now()      // with a monotonic reading, as the Transport's instants have
	var wall time.Duration // how far the wall clock stepped forward so far
	one := func(rtt, step, gap time.Duration) {
		t.Helper()
		var tk uint64
		r, _, ok := c.reserve(k, wallStepped(t, now, wall), 0, 0, rs, 0, &tk, time.Time{}, 0, 0)
		if !ok {
			t.Fatal("reserve held one request at a time")
		}
		// The wall clock steps forward by step while the request is
		// in flight: the answer's wall time is rtt+step after the
		// start's, its monotonic time rtt after.
		wall += step
		now = now.Add(rtt)
		c.done(k, &r, wallStepped(t, now, wall), &control.Outcome{}, control.Cost{})
		now = now.Add(gap)
	}
	// A crawler fetching a page every 4s: the first measurement takes
	// four minutes, and the wall clock steps forward a minute during its
	// 50th request.
	for i := range gradMeasureN {
		step := time.Duration(0)
		if i == 50 {
			step = time.Minute
		}
		one(50*time.Millisecond, step, 4*time.Second)
	}
	sh := c.shard(k)
	e := sh.m[k]
	t.Logf("baseline after the first measurement: %v", e.grad.base)
	// The origin now queues: 500ms, ten times its baseline, for two
	// minutes (the next measurement is due at five).
	for end := now.Add(2 * time.Minute); now.Before(end); {
		one(500*time.Millisecond, 0, 0)
	}
	if got := e.grad.limit(); got >= restraintInitial {
		t.Errorf("after 2 minutes at 10 times the origin's latency: limit %d (baseline %v, smoothed %v), want it below %d: a wall-clock step of a minute during one request was read as its latency", got, e.grad.base, e.grad.srtt, restraintInitial)
	}
}

// wallStepped returns t, which has a monotonic reading, as time.Now
// returns it once the wall clock stepped forward by step (whole seconds):
// its wall reading step later, its monotonic reading the same. No API
// makes one: it sets the seconds of time.Time's wall field, which holds
// them from 1885 in bits 30-62 when the monotonic bit is set. Should
// time.Time's layout change, the result is checked and the test skipped.
func wallStepped(tb testing.TB, t time.Time, step time.Duration) time.Time {
	tb.Helper()
	type layout struct {
		wall uint64
		ext  int64
		loc  *time.Location
	}
	if unsafe.Sizeof(t) != unsafe.Sizeof(layout{}) {
		tb.Skip("time.Time is not laid out as wallStepped expects")
	}
	s := t
	l := (*layout)(unsafe.Pointer(&s))
	if l.wall>>63 == 0 {
		tb.Fatal("wallStepped: no monotonic reading")
	}
	l.wall += uint64(step/time.Second) << 30
	if s.Sub(t) != 0 || s.Unix()-t.Unix() != int64(step/time.Second) {
		tb.Skip("time.Time is not laid out as wallStepped expects")
	}
	return s
}
