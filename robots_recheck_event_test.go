package polite

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// An attempt refused by the robots.txt in force after its wait gives up
// with the *RobotsError. A request whose context ended while that file
// was fetched is not refused by it, yet it gave up with the context's
// error, which no other wait ended by its context reports, and an
// instrumented client counted it in its give-ups.
func TestRecheckContextEndGivesNothingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var fetches atomic.Int64
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			if req.URL.Path == "/robots.txt" {
				if fetches.Add(1) > 1 {
					// The file in force is slow to come (within 30 s).
					select {
					case <-req.Context().Done():
						return nil, req.Context().Err()
					case <-time.After(20 * time.Second):
					}
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nCrawl-delay: 600\n")), Request: req}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		})
		var mu sync.Mutex
		var giveUps []Event
		tr := &Transport{Base: base, Robots: &Robots{}, MaxWait: time.Hour, OnEvent: func(e Event) {
			if e.Kind == EventGiveUp {
				mu.Lock()
				giveUps = append(giveUps, e)
				mu.Unlock()
			}
		}}
		get := func(ctx context.Context, path string) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.example"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := get(t.Context(), "/first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(24*time.Hour - 5*time.Minute - time.Since(start))
		if err := get(t.Context(), "/a"); err != nil {
			t.Fatal(err)
		}
		// /b is held by the Crawl-delay until 24h5m, past the file's
		// end; its context ends 5 s into the fetch of the file in force.
		ctx, cancel := context.WithDeadline(t.Context(), start.Add(24*time.Hour+5*time.Minute+5*time.Second))
		defer cancel()
		err := get(ctx, "/b")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("/b: %v, want the context's deadline", err)
		}
		time.Sleep(30 * time.Second) // the fetch goes on for the others, and ends
		mu.Lock()
		defer mu.Unlock()
		for _, e := range giveUps {
			if re := (*RobotsError)(nil); !errors.As(e.Err, &re) {
				t.Errorf("EventGiveUp for %s (attempt %d) with Err %v: no response was refused, and robots.txt refused nothing; its context ended while it waited", e.Request.URL.Path, e.Attempt, e.Err)
			}
		}
		if st, ok := tr.Inspect("http://a.example", time.Now()); ok && st.InFlight != 0 {
			t.Errorf("%d in flight after /b ended", st.InFlight)
		}
	})
}
