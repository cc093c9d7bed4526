package polite_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A request held by its key's pause, whose Budget.MaxRate spacing (known
// since the last start) holds it past MaxWait or its deadline once the
// pause ends, fails with a *WaitError at once: the hold reports the later
// of the two, as MaxWait promises a *WaitError "as soon as that is known"
// (TestLocalCeilingHoldsNoKnownPauseBack is the mirror case, a local
// ceiling's hold over a known pause). It slept out a 2 s pause first.
// Its Reason is the pace, what the wait is for: it read "retry-after", as
// if the server had asked for the 20 s.
func TestPauseHoldCoversBudgetMaxRate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline bool
	}{
		{"MaxWait", false},
		{"deadline", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				tr := &polite.Transport{
					Budget:      &polite.Budget{MaxRate: 0.05}, // one start per 20 s
					MaxWait:     10 * time.Second,
					MaxAttempts: 1,
					Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						n++
						if n == 1 {
							// Refused: the key pauses 2 s; the refusal goes
							// back to the caller (MaxAttempts 1).
							return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"2"}}, Body: http.NoBody, Request: r}, nil
						}
						return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
					}),
				}
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()

				ctx := t.Context()
				if tc.deadline {
					tr.MaxWait = time.Hour
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
					defer cancel()
				}
				// The next start Budget.MaxRate allows is 20 s after the
				// first: past MaxWait (10 s) / the 10 s deadline. Known
				// now, behind a pause of 2 s.
				req2, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
				start := time.Now()
				resp2, err := tr.RoundTrip(req2)
				if resp2 != nil {
					resp2.Body.Close()
				}
				d := time.Since(start)
				var we *polite.WaitError
				if !errors.As(err, &we) || we.Deadline != tc.deadline || d != 0 {
					t.Fatalf("RoundTrip = %v after %v; want a *WaitError (Deadline %v) at once: Budget.MaxRate's next start, 20 s away, is known behind the 2 s pause", err, d, tc.deadline)
				}
				if we.Reason != polite.ReasonPace {
					t.Errorf("WaitError.Reason = %q for a wait MaxRate's spacing sets (the server asked for 2 s), want %q, as Transport.MaxRate reports it: %v", we.Reason, polite.ReasonPace, err)
				}
			})
		})
	}
}

// A refusal whose retry a MaxRate's next start puts past MaxWait goes back
// to the caller unread, as one past a pause does (DESIGN.md §2): the
// Budget's MaxRate is in the key's state, the Transport's own is known
// to the Transport, both when the refusal arrives. It was retried, its
// body drained, and the caller got a *WaitError a second later instead of
// the server's 429.
func TestRefusalRetryPastMaxRateGoesBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget bool // MaxRate on the Budget, else on the Transport
	}{
		{"Budget.MaxRate", true},
		{"Transport.MaxRate", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				body := &countedBody{Reader: strings.NewReader("refused")}
				tr := &polite.Transport{MaxWait: 10 * time.Second, MaxRate: 0.05} // one start per 20 s
				if tc.budget {
					tr.MaxRate, tr.Budget = 0, &polite.Budget{MaxRate: 0.05}
				}
				tr.Base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
					n++
					if n == 1 {
						return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, Body: body, ContentLength: 7, Request: r}, nil
					}
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				if resp != nil {
					defer resp.Body.Close()
				}
				if err != nil || resp.StatusCode != http.StatusTooManyRequests || body.closes.Load() != 0 {
					t.Errorf("RoundTrip = %v, %v (refusal body closed %d times, %d sends); want the 429 back, unread: its retry could start no sooner than MaxRate's 20 s, past MaxWait (10 s)", resp, err, body.closes.Load(), n)
				}
			})
		})
	}
}

// countedBody counts its Closes.
type countedBody struct {
	*strings.Reader
	closes atomic.Int32
}

func (b *countedBody) Close() error { b.closes.Add(1); return nil }

// A transient failure (a 502, with RetryTransient) whose retry a MaxRate's
// next start (the Budget's or the Transport's), 4 s on, puts past the
// context's deadline at 3 s goes back to the caller at once, unread, as a
// refusal does: it was retried, and failed with a *WaitError once its body
// was drained.
func TestTransientRetryPastKnownHoldGoesBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget bool // MaxRate on the Budget, else on the Transport
	}{
		{"Budget.MaxRate", true},
		{"Transport.MaxRate", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					n++
					if n == 1 {
						time.Sleep(100 * time.Millisecond)
						return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, ContentLength: -1,
							Body: &blockingBody{delay: 2 * time.Second}, Request: r}, nil
					}
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})
				tr := &polite.Transport{Base: base, MaxRate: 0.25, RetryTransient: true} // one start per 4 s
				if tc.budget {
					tr.MaxRate, tr.Budget = 0, &polite.Budget{MaxRate: 0.25}
				}
				t0 := time.Now()
				ctx, cancel := context.WithDeadline(t.Context(), t0.Add(3*time.Second))
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil || resp.StatusCode != http.StatusBadGateway || n != 1 || time.Since(t0) != 100*time.Millisecond {
					t.Fatalf("RoundTrip = %v, %v after %v, %d sends; want the 502 back at once, after one send", resp, err, time.Since(t0), n)
				}
				resp.Body.Close()
			})
		})
	}
}
