package polite_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// peakOrigin answers 200 after the latency its function gives for the
// instant a request arrives, and keeps the most of its requests in
// flight at once, not counting those latency reports as stalled.
type peakOrigin struct {
	latency  func(now time.Time) (d time.Duration, stalled bool)
	in, peak atomic.Int64
	tr       *polite.Transport
}

func newPeakOrigin(latency func(now time.Time) (time.Duration, bool)) *peakOrigin {
	o := &peakOrigin{latency: latency}
	o.tr = &polite.Transport{Base: &ratelimittest.Transport{Handler: o}, Restraint: &polite.Restraint{Adaptive: true}}
	return o
}

func (o *peakOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d, stalled := o.latency(time.Now())
	if !stalled {
		n := o.in.Add(1)
		for p := o.peak.Load(); n > p && !o.peak.CompareAndSwap(p, n); p = o.peak.Load() {
		}
		defer o.in.Add(-1)
	}
	time.Sleep(d)
	w.WriteHeader(http.StatusOK)
}

// get sends one request to the origin through the adaptive Transport.
func (o *peakOrigin) get(ctx context.Context) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://site.example/page", nil)
	resp, err := o.tr.RoundTrip(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// A client that sends in bursts (a crawler fetching 6 pages of a site
// every 10 s) gives each 5-minute drain fewer than 8 answers. Each
// drain's answers used to be dropped, so the baseline was never measured
// again: once the origin slowed for good (50 ms, then 200 ms whatever
// its load, never queueing), every step read 4 times the old baseline,
// the limit fell to 1 and stayed there, bursts going one request at a
// time 40 minutes later. The drains' answers now add up.
func TestAdaptiveBurstyClientMeasuresAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		o := newPeakOrigin(func(now time.Time) (time.Duration, bool) {
			if now.Sub(start) < 10*time.Minute {
				return 50 * time.Millisecond, false
			}
			return 200 * time.Millisecond, false
		})
		most := int64(0)
		for i := 0; time.Since(start) < 60*time.Minute; i++ {
			time.Sleep(time.Until(start.Add(time.Duration(i) * 10 * time.Second)))
			o.peak.Store(0)
			var wg sync.WaitGroup
			for range 6 {
				wg.Go(func() {
					if err := o.get(context.Background()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if time.Since(start) > 50*time.Minute {
				most = max(most, o.peak.Load())
			}
		}
		if most < 4 {
			t.Errorf("50-60 minutes in, 40 after the origin settled at 200ms (never queueing), bursts of 6 peaked at %d in flight, want 4 (Restraint's cap): the baseline was not measured again", most)
		}
	})
}

// An origin that stalls once (requests sent in one second answered 4.5
// minutes later) inflates the smoothed latency to about 34 s. A drain
// that began as those answers came back started counting one smoothed
// round trip later, and so kept the limit of 4 halved for about 37 s
// while the origin answered in 50 ms. It now counts the answers to
// requests sent from its start at its own limit.
func TestAdaptiveDrainAfterStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		hangFrom, answerAt := start.Add(6*time.Minute), start.Add(10*time.Minute+30*time.Second)
		o := newPeakOrigin(func(now time.Time) (time.Duration, bool) {
			if !now.Before(hangFrom) && now.Before(hangFrom.Add(time.Second)) {
				return answerAt.Sub(now), true
			}
			return 50 * time.Millisecond, false
		})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for o.get(ctx) == nil {
				}
			})
		}
		// From 5 s after the stalled answers came back, for 25 s.
		time.Sleep(time.Until(answerAt.Add(5 * time.Second)))
		o.peak.Store(0)
		time.Sleep(25 * time.Second)
		got := o.peak.Load()
		cancel()
		wg.Wait()
		if got < 4 {
			t.Errorf("5-30 s after the stall ended (origin at 50 ms), at most %d in flight, want 4: a drain started as the stalled answers came back still held the limit halved", got)
		}
	})
}
