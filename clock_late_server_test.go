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
// 429 (30 of 50 handed back a 403 at once). Read as due while up to a
// minute past by the caller's clock, 9 refusals, seven in a row that could
// fall on one request, its retries spaced by its own backoff while the
// pace held the others minutes away: once in some hundred runs, that
// request spent its 8 attempts and was handed back its refusal. A reset
// more than 2 s before the request was sent is read from the Date: 3
// refusals, all tasks served.
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
				// so, then at the first steps of the doubling floor, until
				// the reset is more than 2 s before a request went.
				if statuses[http.StatusOK] != tasks || s.Refused > 4 {
					t.Errorf("statuses %v, %d refused: want %d OK, at most 4 refused", statuses, s.Refused, tasks)
				}
			})
		})
	}
}

// A server whose clock is right but whose Date lies five hours behind (its
// local time under "GMT", a case parse/doc.go names), behind a limiter
// that sets its fields when it admits a request (as middleware does), in
// front of a handler that takes 30 s (an LLM's answer). The request that
// takes the window's last slot states remaining 0 and the window's end, 2 s
// after admission: by the caller's clock the reset is 28 s past when the
// answer arrives. Read from the lying Date once more than 5 s past by now,
// it was 4h59m32s away, and the next request failed at once with a
// WaitError. Up to a minute past, a reset under a Date that far behind is
// due.
func TestLyingDateSlowAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		toNow()
		var n atomic.Int64
		srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			admitted := time.Now()
			reset, rem := admitted.Add(2*time.Second), "0"
			if n.Add(1) > 1 {
				reset, rem = admitted.Add(time.Minute), "59"
			}
			time.Sleep(30 * time.Second)
			w.Header().Set("Date", time.Now().Add(-5*time.Hour).UTC().Format(http.TimeFormat))
			w.Header().Set("X-RateLimit-Limit", "60")
			w.Header().Set("X-RateLimit-Remaining", rem)
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
		})
		c, _ := politeOver(srv)
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		start := time.Now()
		resp, err = c.Get("http://api.test/")
		if err == nil {
			resp.Body.Close()
		}
		var werr *polite.WaitError
		if errors.As(err, &werr) {
			t.Fatalf("the request after a slow answer under a lying Date: %v; want it sent (the reset 28 s past by a right clock)", err)
		}
		if d := time.Since(start) - 30*time.Second; d > time.Second {
			t.Errorf("the request after waited %v; want none", d)
		}
	})
}

// A server whose clock is right but whose Date lies five hours behind,
// whose handler takes 90 s, and which asks on its failure for a retry at
// an HTTP-date stated as it admitted the request (2 s after). The date is
// past by the caller's clock by 88 s when the answer comes, but after the
// request was sent: due, for a 429 and for a 504 retried with
// RetryTransient alike. The 504's date was read from the lying Date,
// 4h58m32s, and the failure handed back instead of retried.
func TestLyingDateSlowRetryAfter(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusGatewayTimeout} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toNow()
				var n atomic.Int64
				srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					admitted := time.Now()
					first := n.Add(1) == 1
					if first {
						time.Sleep(90 * time.Second)
					}
					w.Header().Set("Date", time.Now().Add(-5*time.Hour).UTC().Format(http.TimeFormat))
					if first {
						w.Header().Set("Retry-After", admitted.Add(2*time.Second).UTC().Format(http.TimeFormat))
						w.WriteHeader(status)
					}
				})
				c, tr := politeOver(srv)
				tr.RetryTransient = true
				var waits []time.Duration
				tr.OnEvent = func(e polite.Event) {
					if e.Kind == polite.EventRetry || e.Kind == polite.EventGiveUp {
						waits = append(waits, e.Wait)
					}
				}
				resp, err := c.Get("http://api.test/")
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || n.Load() != 2 {
					t.Errorf("status %d after %d attempts (event waits %v); want 200 after 2", resp.StatusCode, n.Load(), waits)
				}
			})
		})
	}
}
