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

// A transient 502 at 0.1 s whose body drains for 2 s; meanwhile, at
// 0.5 s, another request is refused with Retry-After: 10, which pauses the
// key past the context's deadline at 3 s. The retry asks at 2.1 s (after
// its backoff of at most 1.5 s), and its WaitError says how much was left
// before the deadline: 0.9 s, the wait failing at 2.1 s; its Delay, from
// then. Asked at the failure's instant, both were counted from the
// failure, at 0.1 s: 2.9 s "left", after "waiting 2.1s" of 3 s. (A hold
// already known at the failure, such as Budget.MaxRate's next start,
// hands the failure back instead: TestTransientRetryPastKnownHoldGoesBack.)
func TestTransientRetryDeadlineWaitErrorCountsFromNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n++
			switch n {
			case 1:
				time.Sleep(100 * time.Millisecond)
				return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, ContentLength: -1,
					Body: &blockingBody{delay: 2 * time.Second}, Request: r}, nil
			case 2:
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"10"}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, RetryTransient: true}
		t0 := time.Now()
		go func() {
			time.Sleep(500 * time.Millisecond)
			if resp, err := tr.RoundTrip(newGet(t)); err == nil {
				resp.Body.Close()
			}
		}()
		ctx, cancel := context.WithDeadline(t.Context(), t0.Add(3*time.Second))
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		_, err := tr.RoundTrip(req)
		failed := time.Since(t0)
		var we *polite.WaitError
		if !errors.As(err, &we) || !we.Deadline {
			t.Fatalf("err = %v, want a *WaitError against the deadline", err)
		}
		left := t0.Add(3 * time.Second).Sub(t0.Add(failed))
		wantDelay := we.Until.Sub(t0.Add(failed))
		if failed < 2*time.Second || we.Limit != left || we.Delay != wantDelay {
			t.Errorf("failed at %v: Limit %v, Delay %v; want the %v left before the deadline, and the %v wait from then\n%v",
				failed, we.Limit, we.Delay, left, wantDelay, err)
		}
	})
}

// A transient 502 whose body drains for 2 s, longer than any backoff
// (1 s ± 50%): the retry's wait, from the failure, is over when it asks.
// It still waited from the failure before it was sent, and its EventWait
// said so (Wait 2 s, ReasonTransient), as for a retry whose drain was
// shorter than its backoff. Asked at the present (as the fix of
// TestTransientRetryKeepsBudgetMaxRate first had it), it was granted at
// its first try and reported no wait at all.
func TestTransientRetryDrainedPastBackoffReportsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		var waits []polite.Event
		tr := &polite.Transport{
			RetryTransient: true,
			OnEvent: func(e polite.Event) {
				if e.Kind == polite.EventWait {
					waits = append(waits, e)
				}
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if n++; n == 1 {
					return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, ContentLength: -1,
						Body: &blockingBody{delay: 2 * time.Second}, Request: r}, nil
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}),
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(waits) != 1 || waits[0].Reason != polite.ReasonTransient || waits[0].Wait != 2*time.Second {
			t.Errorf("wait events %+v; want one of 2s (from the failure), reason %q", waits, polite.ReasonTransient)
		}
	})
}
