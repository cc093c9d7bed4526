package polite_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A request whose wait the budget already knew to outlast its context
// deadline failed at once with a *WaitError only when no local ceiling
// held it: the Transport asks its local ceilings first and the budget
// only once they let the request go (Transport.try), so a request one of
// them held slept out that hold first, though the key's pause, known
// since the last answer, already ruled it out:
//
//   - MaxConcurrency 1 and a body still streaming: the request waited its
//     whole deadline for the slot and failed with the context's bare
//     context.DeadlineExceeded, not a *WaitError carrying Until;
//   - MaxRate 0.1: the request waited out the 10 s spacing, then failed
//     with the *WaitError it could have had at once.
func TestLocalCeilingHoldsNoKnownPauseBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		tr   func() *polite.Transport
		keep bool // the first response's body is left open
	}{
		{"MaxConcurrency slot held by a stream", func() *polite.Transport {
			return &polite.Transport{MaxConcurrency: 1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				// Accepted, its quota spent for an hour; the body
				// streams (no Content-Length), holding the slot.
				h := http.Header{"Ratelimit-Policy": {`"p";q=10;w=3600`}, "Ratelimit": {`"p";r=0;t=3600`}}
				return &http.Response{StatusCode: http.StatusOK, Header: h, Body: polite.NewStuckBody(), ContentLength: -1, Request: r}, nil
			})}
		}, true},
		{"MaxRate spacing", func() *polite.Transport {
			return &polite.Transport{MaxRate: 0.1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				// A refusal beyond MaxWait: back to the caller, the key
				// paused for an hour.
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
			})}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := tc.tr()
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/a", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				if tc.keep {
					defer resp.Body.Close()
				} else {
					resp.Body.Close()
				}

				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				req2, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/a", nil)
				start := time.Now()
				resp2, err := tr.RoundTrip(req2)
				if resp2 != nil {
					resp2.Body.Close()
				}
				var we *polite.WaitError
				if d := time.Since(start); !errors.As(err, &we) || !we.Deadline || d != 0 {
					t.Errorf("RoundTrip = %v after %v; want a *WaitError (Deadline) at once: the key is paused for an hour, past the 30s deadline", err, d)
				}
			})
		})
	}
}

// A request a local ceiling holds (MaxRate, as a Crawl-delay holds every
// request of a paced crawl) reads the budget's hold each time round the
// wait loop, which first built a whole State (the View's policies, the
// key's display string, for a custom key its HMAC fingerprint), all thrown
// away but three instants: 8, 11 and 16 allocations a request held, where
// a ceiling's hold alone costs 5, 6 and 6.
func TestHeldRequestAllocations(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  func(*http.Request) string
		hdr  http.Header
		want float64 // a ceiling's hold alone
	}{
		{"origin", nil, http.Header{}, 5},
		{"origin stating a quota", nil, http.Header{"Ratelimit-Policy": {`"p";q=1000000;w=1`}, "Ratelimit": {`"p";r=999999;t=1`}}, 6},
		{"custom key", func(r *http.Request) string { return "tenant-42:" + r.URL.Host }, http.Header{}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				resp := &http.Response{StatusCode: 200, Header: tc.hdr, Body: http.NoBody}
				tr := &polite.Transport{MaxRate: 1, Key: tc.key, Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })}
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				tr.RoundTrip(req)
				start := time.Now()
				allocs := testing.AllocsPerRun(100, func() {
					if _, err := tr.RoundTrip(req); err != nil {
						t.Fatal(err)
					}
				})
				if per := time.Since(start) / 101; per != time.Second {
					t.Fatalf("%v a request, want each held 1s by MaxRate", per)
				}
				if allocs > tc.want {
					t.Errorf("%v allocations per request held by MaxRate, want at most %v, as a ceiling's hold alone costs", allocs, tc.want)
				}
			})
		})
	}
}
