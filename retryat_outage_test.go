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

// A refusal answered while the Store was down pauses the key in the
// fallback, and the key's next request carries that pause into the Store
// (DESIGN.md §3). Until that request, RetryAt and Inspect read the Store
// alone, which never heard of the pause: once the Store answered again,
// RetryAt of the very 429 that paused the key said "now", Inspect showed
// no pause, and the next request was held for the whole Retry-After.
func TestRetryAtAfterOutageSeesCarriedPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, c, resp := refusedInOutage(t)
		refused := time.Now()
		time.Sleep(2 * time.Second) // the Store answers again; the Budget tries it again after 1s

		at, _ := tr.RetryAt(resp)
		s, _ := tr.Inspect("http://api.test", time.Now())
		t.Logf("RetryAt: refusal+%v; Inspect: PauseUntil %v, Probing %v", at.Sub(refused), s.PauseUntil, s.Probing)

		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		r2, err := c.Do(req)
		if err == nil {
			r2.Body.Close()
			return // not held: RetryAt was right
		}
		var we *polite.WaitError
		if !errors.As(err, &we) {
			t.Fatalf("next request: %v, want a WaitError or a response", err)
		}
		if we.Until.After(at.Add(time.Second)) {
			t.Errorf("RetryAt said refusal+%v (Inspect: no pause), but the next request was held until refusal+%v (reason %q): the pause learned during the outage",
				at.Sub(refused), we.Until.Sub(refused), we.Reason)
		}
	})
}
