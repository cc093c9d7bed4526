package polite_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A refused request waits what its refusal asks even if its key is
// forgotten meanwhile (TestRetryWaitOutlivesForget), a probe whose wait
// was lengthened (DESIGN.md §6) too: a server that states nothing accepts
// 10 and then refuses (bare 429) for a minute; the 11th request is the
// learner's probe, and Budget.Forget comes during its wait. A new state
// measures nothing, which ends the lengthened wait, but not its least,
// the key's pause at its refusal (EventRetry.Wait). Before, the whole
// wait was dropped, and the retry went at the Forget.
func TestProbeWaitOutlivesForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		start := time.Now()
		var mu sync.Mutex
		var sends []time.Time
		n := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			n++
			i := n
			sends = append(sends, time.Now())
			mu.Unlock()
			if i <= 10 || time.Since(start) > time.Minute {
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		type retry struct {
			at      time.Time
			wait    time.Duration
			attempt int
		}
		retries := make(chan retry, 16)
		b := &polite.Budget{}
		tr := &polite.Transport{Base: base, Budget: b, OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventRetry {
				retries <- retry{e.Time, e.Wait, e.Attempt}
			}
		}}
		get := func() int {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Errorf("RoundTrip: %v", err)
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		for range 10 {
			get()
		}
		done := make(chan int)
		go func() { done <- get() }()
		// Wait for the retry of the 4th attempt: a probe of a measurement
		// some seconds long, its wait lengthened.
		var last retry
		for last = range retries {
			if last.attempt >= 4 {
				break
			}
		}
		synctest.Wait()
		mu.Lock()
		before := len(sends)
		mu.Unlock()
		b.Forget("http://api.test")
		synctest.Wait()
		mu.Lock()
		var next time.Time
		if len(sends) > before {
			next = sends[before]
		}
		mu.Unlock()
		if !next.IsZero() {
			if d := next.Sub(last.at); d < last.wait {
				t.Errorf("attempt %d refused at +%v with a least wait of %v (EventRetry.Wait); its retry went %v after, at the Forget", last.attempt, last.at.Sub(start), last.wait, d)
			}
		}
		t.Logf("status %d", <-done)
	})
}
