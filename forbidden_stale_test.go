package polite_test

import (
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// staleSpent403 answers every request but /ok with a "forbidden" 403 (no
// access, say) that carries GitHub-style fields of a quota spent long ago:
// X-RateLimit-Remaining 0 and a reset an hour before its own Date. No
// server rounding its resets down states a reset an hour past: nothing in
// it says "rate" (DESIGN.md §1.10: "a real 'forbidden' is not retried,
// and no wait is invented for it").
func staleSpent403(sent *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			return
		}
		sent.Add(1)
		w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("X-RateLimit-Limit", "60")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10))
		w.WriteHeader(http.StatusForbidden)
	})
}

// A GET answered so is sent once and handed back at once, and the origin
// is not paused (read as a refusal, as any 403 stating a spent quota and a
// known reset was for a while, it was sent 8 times over about 2 minutes,
// and the origin paused about a minute).
func TestForbiddenStaleResetIsAnAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		toNow()
		var sent atomic.Int64
		c, tr := politeOver(staleSpent403(&sent))
		start := time.Now()
		resp, err := c.Get("http://api.test/repos/o/private")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		took := time.Since(start)
		if n := sent.Load(); n != 1 || took > time.Second {
			t.Errorf("a forbidden 403 (reset an hour past its Date): sent %d times over %v; want once, at once", n, took)
		}
		if at, ok := tr.RetryAt(resp); ok {
			t.Errorf("RetryAt = %v (in %v), true; want false", at, time.Until(at))
		}
		start = time.Now()
		resp, err = c.Get("http://api.test/ok")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if d := time.Since(start); d > time.Second {
			t.Errorf("the next request to the origin waited %v; want none", d)
		}
	})
}

// robots.txt answered with such a 403 is unavailable (RFC 9309 §2.3.1.3:
// every path allowed), not unreachable (every path disallowed for a
// minute, when it was read as a refusal).
func TestRobotsForbiddenStaleResetIsUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		toNow()
		var sent atomic.Int64
		inner := staleSpent403(&sent)
		c, pages := robotsSite(inner)
		resp, err := c.Get("http://site.test/page")
		if err == nil {
			resp.Body.Close()
		}
		var rerr *polite.RobotsError
		if errors.As(err, &rerr) || pages.Load() != 1 {
			t.Errorf("robots.txt forbidden (403, reset an hour past): page fetched %d times, err %v; want robots.txt unavailable, the page fetched once", pages.Load(), err)
		}
	})
}
