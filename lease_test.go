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
)

func TestStuckRequestFreesItsSlotAtLeaseEnd(t *testing.T) {
	// The first request to a key probes, and its Base hangs for a minute
	// (a request that never ends, like one of a process that died). The
	// next request goes when the probe has held the key for the probe
	// timeout (3s for a key that never answered), well before the probe's
	// lease of 16s ends or it answers.
	synctest.Test(t, func(t *testing.T) {
		var (
			mu   sync.Mutex
			sent []time.Time
		)
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, time.Now())
			first := len(sent) == 1
			mu.Unlock()
			if first {
				time.Sleep(time.Minute)
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		c := &http.Client{Transport: &polite.Transport{Base: base, Budget: &polite.Budget{Lease: 16 * time.Second}}}
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { get(t, c, "http://api.test/") })
		synctest.Wait()
		get(t, c, "http://api.test/")
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("second request sent after %v, want when the stuck probe timed out (3s)", d)
		}
		wg.Wait()
		// The stuck request's late answer frees nothing twice.
		get(t, c, "http://api.test/")
		if n := len(sent); n != 3 {
			t.Errorf("%d requests sent, want 3", n)
		}
	})
}

// A request whose Base never returns holds the Transport's local slots
// (MaxConcurrency, Restraint's limit) no longer than the Budget's: until
// its context's deadline, or Budget.Lease from its start, whichever comes
// first (and up to Lease/16 after, as leases are kept by slot). Before, they were held for ever, and every later request to the
// key waited out MaxWait and failed.
func TestStuckRequestFreesLocalSlot(t *testing.T) {
	for _, tt := range []struct {
		name     string
		deadline time.Duration // of the stuck request; 0: none
		want     time.Duration // when the next one goes
	}{
		{"lease", 0, 16 * time.Second},
		{"deadline", 5 * time.Second, 5 * time.Second},
		{"lease before deadline", time.Minute, 16 * time.Second},
	} {
		for _, limit := range []string{"MaxConcurrency", "Restraint"} {
			t.Run(tt.name+"/"+limit, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var n atomic.Int32
					base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
						if n.Add(1) == 1 {
							time.Sleep(time.Hour) // ignores its context
						}
						return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
					})
					tr := &polite.Transport{Base: base, Budget: &polite.Budget{Lease: 16 * time.Second}, MaxWait: 5 * time.Minute}
					if limit == "MaxConcurrency" {
						tr.MaxConcurrency = 1
					} else {
						tr.Restraint = &polite.Restraint{MaxConcurrency: 1}
					}
					start := time.Now()
					var wg sync.WaitGroup
					wg.Go(func() {
						ctx := context.Background()
						if tt.deadline > 0 {
							var cancel context.CancelFunc
							ctx, cancel = context.WithTimeout(ctx, tt.deadline)
							defer cancel()
						}
						req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
						if resp, err := tr.RoundTrip(req); err == nil {
							resp.Body.Close()
						}
					})
					synctest.Wait()
					req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Fatalf("second request: %v; want it sent at %v", err, tt.want)
					}
					resp.Body.Close()
					// A lease ends up to Lease/16 after its deadline.
					if d := time.Since(start); d < tt.want || d > tt.want+time.Second {
						t.Errorf("second request sent after %v, want within a second after %v", d, tt.want)
					}
					wg.Wait()
				})
			})
		}
	}
}

// An OnEvent that panics between the send and the release (the caller
// recovers, as an http.Server handler does) leaves the request's local
// slot taken until its lease ends, not for ever.
func TestOnEventPanicFreesSlotAtLeaseEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var panicked atomic.Bool
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{
				"Ratelimit-Policy": {`"p";q=1000;w=1`},
				"Ratelimit":        {`"p";r=999;t=1`},
			}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{
			Base:           base,
			MaxConcurrency: 1,
			MaxWait:        time.Minute,
			Budget:         &polite.Budget{Lease: 16 * time.Second},
			OnEvent: func(e polite.Event) {
				if e.Kind == polite.EventObserve && panicked.CompareAndSwap(false, true) {
					panic("observer broke")
				}
			},
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic of OnEvent did not reach the caller")
				}
			}()
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			tr.RoundTrip(req)
		}()
		start := time.Now()
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("request after a panicking OnEvent: %v; want it sent once the lease ended", err)
		}
		resp.Body.Close()
		if d := time.Since(start); d > 17*time.Second {
			t.Errorf("sent after %v, want by the end of the lease (16s, and up to Lease/16 after)", d)
		}
	})
}
