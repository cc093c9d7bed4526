package polite

import (
	"context"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// A request held by Transport.MaxConcurrency on a key whose server states
// a quota (Restraint lifted: reserve does not call Restraint.limit, so the
// gradient is neither expired nor sampled) while the adaptive gradient it
// kept from before is in a drain whose end has passed: reserve's hold
// woke at the drain's end, an instant in the past, so waitLocal returned
// at once (d <= 0), the request reserved again, was held again with the
// same past wake, and spun on a CPU until the slot freed (up to the
// lease, 10 minutes, or a stream's end).
func TestQuotedStaleDrainWakesAhead(t *testing.T) {
	tr := &Transport{MaxConcurrency: 1, Restraint: &Restraint{Adaptive: true}}
	k := originKey("http", "a.test").m
	t0 := time.Unix(1_700_000_000, 0)
	var tk uint64
	if _, _, ok := tr.ceil.reserve(k, t0, 0, tr.MaxConcurrency, tr.Restraint, 0, &tk, time.Time{}, 0, 0); !ok {
		t.Fatal("setup: first request not granted")
	}
	sh := tr.ceil.shard(k)
	sh.mu.Lock()
	e := sh.m[k]
	g := e.grad
	// The gradient's own samples, at fixed instants: a first measurement
	// of 64 answers of 100 ms, then one more 6 minutes on, which starts a
	// drain (re-measurement).
	now := t0
	for range gradMeasureN {
		now = now.Add(100 * time.Millisecond)
		g.observe(now, 100*time.Millisecond, 1)
	}
	now = now.Add(6 * time.Minute)
	g.observe(now, 100*time.Millisecond, 1)
	if !g.mDrain {
		sh.mu.Unlock()
		t.Fatalf("setup: no drain (last %v, mEnd %v)", g.last, g.mEnd)
	}
	// The next answer states a quota (update's paces case): Restraint no
	// longer applies, and nothing samples or expires the gradient.
	e.stated, e.said = now.UnixNano(), now.UnixNano()
	end := g.mEnd
	sh.mu.Unlock()

	// The one slot is still held (its lease ends 10 minutes after t0).
	// A second request asks after the drain's end.
	at := end.Add(time.Second)
	var tk2 uint64
	_, h, ok := tr.ceil.reserve(k, at, 0, tr.MaxConcurrency, tr.Restraint, 0, &tk2, time.Time{}, 0, 0)
	if ok {
		t.Fatal("setup: second request granted beyond MaxConcurrency 1")
	}
	if !h.wake.IsZero() && !h.wake.After(at) {
		// Ask again at the wake, as hold's loop does: the same hold.
		_, h2, _ := tr.ceil.reserve(k, h.wake.Add(time.Nanosecond), 0, tr.MaxConcurrency, tr.Restraint, 0, &tk2, time.Time{}, 0, 0)
		t.Errorf("held at %v with wake %v before it (then again with wake %v): waitLocal returns at once for a wake past, and hold reserves again in a loop that never sleeps; want the slot's lease end %v", at.Sub(t0), h.wake.Sub(at), h2.wake.Sub(at), t0.Add(10*time.Minute).Sub(at))
	}
}

// errCounter counts the calls of Err, which hold's loop makes once a wait.
type errCounter struct {
	context.Context
	n atomic.Int64
}

func (c *errCounter) Err() error { c.n.Add(1); return c.Context.Err() }

// The same through RoundTrip: the held request, which must sleep until
// the slot frees, spun.
func TestQuotedStaleDrainDoesNotSpin(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	tr := &Transport{MaxConcurrency: 1, Restraint: &Restraint{Adaptive: true}, Base: roundTripper(func(r *http.Request) (*http.Response, error) {
		if first {
			first = false
			close(entered)
			<-release
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})}
	done1 := make(chan struct{})
	go func() {
		defer close(done1)
		req, _ := http.NewRequest(http.MethodGet, "http://a.test/1", nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	// The gradient reached a drain that ended a second ago (its samples
	// at fixed instants in the past), and a quota stated since lifted
	// Restraint.
	k := originKey("http", "a.test").m
	sh := tr.ceil.shard(k)
	sh.mu.Lock()
	e := sh.m[k]
	g := e.grad
	real := time.Now()
	at := real.Add(-7 * time.Minute)
	for range gradMeasureN {
		at = at.Add(100 * time.Millisecond)
		g.observe(at, 100*time.Millisecond, 1)
	}
	at = at.Add(6 * time.Minute)
	g.observe(at, 100*time.Millisecond, 1)
	ok := g.mDrain && g.mEnd.Before(real)
	e.stated, e.said = real.UnixNano(), real.UnixNano()
	sh.mu.Unlock()
	if !ok {
		close(release)
		t.Fatal("setup: no drain ended before now")
	}
	base, cancel := context.WithCancel(context.Background())
	ctx := &errCounter{Context: base}
	done2 := make(chan struct{})
	go func() {
		defer close(done2)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/2", nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}()
	for i := 0; i < 2_000_000 && ctx.n.Load() < 10_000; i++ {
		runtime.Gosched()
	}
	n := ctx.n.Load()
	cancel()
	<-done2
	close(release)
	<-done1
	if n >= 10_000 {
		t.Errorf("the request held by MaxConcurrency's slot looked at its context %d times while the slot stayed held: its hold's wake (the drain's end) is in the past, and it reserves again without sleeping; want it asleep until the slot frees", n)
	}
}
