package polite_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// An origin that is down: every dial refused, or a gateway answering 502
// to everything. 50 callers loop on GETs (a second of work between two)
// through one Transport with RetryTransient and the default MaxAttempts
// and MaxWait, each request with no deadline or a 30 s one, for 2
// minutes. Retries may use a fifth of the first attempts, with a floor of
// two a second (doc.go, "Retries"), 20 banked and 20 owed: over a span T,
// 40 + 2/s*T + firsts/5 at most. Transient failures counted toward no
// outage, and a retry past the 20 owed waited as long as the 20th, so
// that none was dropped: with deadlines of 30 s, 646 retries in 2m28s
// where the budget allows 395, and 417 requests in the second minute.
// Their flights now count, one a second at most, and in the outage each
// flight's failure pauses the origin, doubled up to a minute: its
// requests probe it one a pause, and a retry the budget cannot afford
// goes back to the caller.
func TestTransientOutageRetriesWithinBudget(t *testing.T) {
	for _, tt := range []struct {
		name    string
		code    int // 0: the dial is refused
		timeout time.Duration
	}{
		{"refused/no deadline", 0, 0},
		{"refused/30s deadline", 0, 30 * time.Second},
		{"502/no deadline", http.StatusBadGateway, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sent atomic.Int64
				var mu sync.Mutex
				perSec := map[int64]int{}
				start := time.Now()
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					sent.Add(1)
					mu.Lock()
					perSec[int64(time.Since(start)/time.Second)]++
					mu.Unlock()
					return downAnswer(r, tt.code)
				})
				tr := &polite.Transport{Base: base, RetryTransient: true}
				const span = 2 * time.Minute
				stop := start.Add(span)
				var firsts atomic.Int64
				var wg sync.WaitGroup
				for range 50 {
					wg.Go(func() {
						for time.Now().Before(stop) {
							firsts.Add(1)
							ctx, cancel := context.Background(), context.CancelFunc(func() {})
							if tt.timeout > 0 {
								ctx, cancel = context.WithTimeout(ctx, tt.timeout)
							}
							req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://down.test/", nil)
							resp, err := tr.RoundTrip(req)
							if err == nil {
								resp.Body.Close()
							}
							cancel()
							time.Sleep(time.Second)
						}
					})
				}
				wg.Wait()
				el := time.Since(start)
				f, s := firsts.Load(), sent.Load()
				retries := s - f
				allowed := 40 + 2*el.Seconds() + 0.2*float64(f)
				busiest := 0
				for sec, n := range perSec {
					if sec > 0 { // the first second holds the first attempts
						busiest = max(busiest, n)
					}
				}
				late := 0
				for sec, n := range perSec {
					if sec >= 60 && sec < 120 {
						late += n
					}
				}
				t.Logf("over %v: %d first attempts, %d sent, %d retries (%.1f/s, up to %d in one second); budget allows about %.0f (%.1f/s); %d sent from 60s to 120s",
					el.Round(time.Second), f, s, retries, float64(retries)/el.Seconds(), busiest, allowed, allowed/el.Seconds(), late)
				if late > 60 {
					t.Errorf("%d requests to a down origin from 60s to 120s, want one a second at most: in the outage, its requests probe it one a pause of a second or more", late)
				}
				if float64(retries) > allowed {
					t.Errorf("%d transient retries to a down origin in %v, want at most ~%.0f (40 + 2/s + a fifth of %d first attempts): %.1f sends per request, retries multiplied the outage",
						retries, el.Round(time.Second), allowed, f, float64(s)/float64(f))
				}
			})
		})
	}
}

// downAnswer is what an origin that is down answers r with: a response of
// status code from its gateway, or, for a code of 0, a refused dial.
func downAnswer(r *http.Request, code int) (*http.Response, error) {
	if code != 0 {
		return &http.Response{StatusCode: code, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}
