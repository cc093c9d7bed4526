package polite_test

import (
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// serverClockOff wraps h as a server whose clock is off by d: its Date and
// the epoch seconds of its X-RateLimit-Reset, both read off that clock, as
// an honest server whose clock is wrong states them.
func serverClockOff(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&rewriter{ResponseWriter: w, fix: func(hd http.Header) {
			if t, err := http.ParseTime(hd.Get("Date")); err == nil {
				hd.Set("Date", t.Add(d).Format(http.TimeFormat))
			}
			if n, err := strconv.ParseInt(hd.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
				hd.Set("X-Ratelimit-Reset", strconv.FormatInt(n+int64(d/time.Second), 10))
			}
		}}, r)
	})
}

// A GitHub-style server of 20 requests an hour whose clock is truly 15
// minutes behind, its Date and epoch resets right by that clock, refusing
// with 429 or 403. A Date that far behind is doubted (DESIGN.md, "the
// server's clock"), and a reset read from the caller's clock, 15 minutes
// early: the key is refused at it. Each refusal states the same reset, past
// by the caller's clock; read as due while up to 10 minutes past, the key
// was refused again at each step of the doubling floor for the 15 minutes
// the window had left: 16 refused of 40 tasks and a task handed back its
// 429 (30 of 50 handed back a 403 at once). Past by more than 5 seconds, a
// reset is read from the Date again: a few refusals a window, all tasks
// served.
func TestServerClockBehindHourlyWindow(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusForbidden} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toNow()
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Policies:     []ratelimittest.Policy{{Name: "core", Algorithm: ratelimittest.FixedWindow, Quota: 20, Window: time.Hour}},
					Dialect:      ratelimittest.GitHub,
					Latency:      5 * time.Millisecond,
					RefuseStatus: status,
				})
				c, tr := politeOver(serverClockOff(h, -15*time.Minute))
				tr.MaxWait = 2 * time.Hour
				const tasks = 40
				statuses := run(t, c, "http://api.test/", tasks, 16)
				s := h.Stats()
				t.Logf("statuses %v, %d refused", statuses, s.Refused)
				// The first window read early: refused at the reset read
				// so, then 1, 2 and 4 s on (the floor), past 5 s by then.
				if statuses[http.StatusOK] != tasks || s.Refused > 6 {
					t.Errorf("statuses %v, %d refused: want %d OK, at most 6 refused", statuses, s.Refused, tasks)
				}
			})
		})
	}
}
