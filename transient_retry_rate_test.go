package polite_test

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A Budget over a Store, MaxRate 2 (a start every 500 ms), RetryTransient.
// The first request is answered by a 502 whose body trickles, so that
// draining it before the retry takes drainTime (1 s; the body's Close
// interrupts its Read, as net/http's does). The retry's first ask went to
// the Store at the instant of the failure, a second in the past, and the
// Budget's Bound took that instant for "now": MaxRate's next start was cut
// back to one spacing after the failure, and the next request to ask
// started at once, 100 ms after the one before (at 1.0 s and 1.1 s). The
// retry asks at the present now; its wait and MaxWait still count from
// the failure.
func TestTransientRetryKeepsBudgetMaxRateWithStore(t *testing.T) {
	for range 8 {
		synctest.Test(t, func(t *testing.T) {
			// A 502 whose body has not arrived: a drain reads it until it
			// is cut, a second later.
			base, starts := failFirst(polite.NewStuckBody())
			tr := &polite.Transport{
				Base:           base,
				Budget:         &polite.Budget{Store: newBytesStore(), MaxRate: 2},
				RetryTransient: true,
			}
			t0 := time.Now()
			sendSpaced(t, tr)
			checkSpaced(t, starts(), t0)
		})
	}
}

// blockingBody yields its one byte after delay, whatever Close does: a
// body behind an io.NopCloser, whose drain lasts until its Read returns.
type blockingBody struct {
	delay time.Duration
	done  bool
}

func (b *blockingBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	time.Sleep(b.delay)
	b.done = true
	p[0] = 'x'
	return 1, nil
}

func (b *blockingBody) Close() error { return nil }

// The same on the in-memory store: once the drain of the 502 lasted more
// than a second (a body whose Close does not interrupt its Read), the
// retry's ask at the failure's instant was taken for the clock stepping
// back, and the state cut MaxRate's next start to one spacing after that
// instant: starts at 1.5 s and 1.6 s.
func TestTransientRetryKeepsBudgetMaxRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, starts := failFirst(&blockingBody{delay: 1500 * time.Millisecond})
		tr := &polite.Transport{Base: base, Budget: &polite.Budget{MaxRate: 2}, RetryTransient: true}
		t0 := time.Now()
		sendSpaced(t, tr)
		checkSpaced(t, starts(), t0)
	})
}

func newGet(t *testing.T) *http.Request {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// sendSpaced sends 9 GETs through tr from 3 workers.
func sendSpaced(t *testing.T, tr *polite.Transport) {
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 3 {
				resp, err := tr.RoundTrip(newGet(t))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// checkSpaced fails t unless the starts (from t0) are 1/Budget.MaxRate,
// 500ms, apart at least.
func checkSpaced(t *testing.T, starts []time.Time, t0 time.Time) {
	t.Helper()
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < 500*time.Millisecond {
			var s []string
			for _, st := range starts {
				s = append(s, st.Sub(t0).String())
			}
			t.Fatalf("starts %v and %v only %v apart, want at least 1/Budget.MaxRate = 500ms (all starts: %v)",
				starts[i-1].Sub(t0), starts[i].Sub(t0), d, s)
		}
	}
}

// failFirst returns a Base whose first answer, 100ms after it was sent, is
// a 502 with body, and every later one a 200, and the instants it was
// sent requests at.
func failFirst(body io.ReadCloser) (roundTripFunc, func() []time.Time) {
	var (
		mu     sync.Mutex
		starts []time.Time
	)
	base := func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		starts = append(starts, time.Now())
		first := len(starts) == 1
		mu.Unlock()
		if first {
			time.Sleep(100 * time.Millisecond)
			return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, ContentLength: -1, Body: body, Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	return base, func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(starts)
	}
}
