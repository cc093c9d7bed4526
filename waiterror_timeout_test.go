package polite_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A *WaitError that the context's deadline cut short matched
// context.DeadlineExceeded but had no Timeout method, so the *url.Error
// an http.Client returned said Timeout false, as net/http's own timeouts
// do not; one cut short by MaxWait is no timeout.
func TestWaitErrorTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := false
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !refused {
				refused = true
				w.Header().Set("Retry-After", "60")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1, MaxWait: 30 * time.Second}}
		resp, err := c.Get("http://api.example/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, tc := range []struct {
			timeout time.Duration
			want    bool
		}{{5 * time.Second, true}, {0, false}} {
			ctx := t.Context()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/", nil)
			_, err := c.Do(req)
			var we *polite.WaitError
			var ue *url.Error
			if !errors.As(err, &we) || !errors.As(err, &ue) {
				t.Fatalf("deadline %v: %v, want a *WaitError in a *url.Error", tc.timeout, err)
			}
			if ue.Timeout() != tc.want || we.Timeout() != we.Deadline {
				t.Errorf("deadline %v: %v: Timeout %v (WaitError %v, Deadline %v), want %v", tc.timeout, err, ue.Timeout(), we.Timeout(), we.Deadline, tc.want)
			}
		}
	})
}
