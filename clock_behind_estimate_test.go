package polite_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// clockOffBy returns the configuration of an honest fixed window of q per
// w, 20 ms to answer, in dialect d, and a wrapper making its Handler a
// server whose whole clock is off ours by o, fractions of a second
// included: its Date is the second its clock reads as it answers, its
// windows end on its whole seconds, and the instants it states (epoch or
// HTTP-date resets, Retry-After dates) are read off that clock. With
// undated, every other answer has no Date (a gateway, a cache that
// strips it).
func clockOffBy(o time.Duration, q int64, w time.Duration, d ratelimittest.Dialect, undated bool) (ratelimittest.Config, func(http.Handler) http.Handler) {
	cfg := ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: q, Window: w}},
		Dialect:  d,
		Latency:  20 * time.Millisecond,
	}
	// The Handler's windows end on our whole seconds, moved by Phase; its
	// instants are rounded up to a second. Its windows end on the whole
	// seconds of a clock o off ours at a fraction frac of our seconds, so
	// that its stated instants, rounded up, are shift off the server's.
	frac := (-o) % time.Second
	if frac < 0 {
		frac += time.Second
	}
	shift := o
	if frac != 0 {
		cfg.Phase = time.Second - frac
		shift = o - time.Second + frac
	}
	wrap := func(h http.Handler) http.Handler {
		var n atomic.Int64 // answers: the Handler serves requests at once
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			drop := undated && n.Add(1)%2 == 0
			h.ServeHTTP(&rewriter{ResponseWriter: rw, fix: func(hd http.Header) {
				hd.Set("Date", time.Now().Add(o).UTC().Truncate(time.Second).Format(http.TimeFormat))
				if drop {
					hd["Date"] = nil // none: net/http, and the Transport, add one when absent
				}
				for _, k := range []string{"X-Ratelimit-Reset", "Retry-After"} {
					v := hd.Get(k)
					if n, err := strconv.ParseInt(v, 10, 64); err == nil {
						if n > 1e9 { // an epoch, not a delay
							hd.Set(k, strconv.FormatInt(n+int64(shift/time.Second), 10))
						}
					} else if t, err := http.ParseTime(v); err == nil && strings.HasSuffix(v, "GMT") {
						hd.Set(k, t.Add(shift).UTC().Format(http.TimeFormat))
					}
				}
			}}, r)
		})
	}
	return cfg, wrap
}

// An honest server whose clock is behind ours, its Date and every instant
// it states alike. A Date bounds the server's offset between the instants
// the request was sent and its answer came, and a second apart: the key's
// estimate was the bound nearer zero, for a server behind the upper one,
// early by as much as the bounds are apart. A server 90 s behind, whose
// answers to a burst sent as its window opened were dated just after its
// second turned, was estimated 0.96 s early: the first window's reset, on
// an answer with no Date, was read that early and the next request
// refused; the same reset, read a second later from that refusal's Date,
// was taken for a sliding-window counter's mark (10 per 1 s), whose pace
// sent an 11th request each window, refused, its Retry-After date (no Date
// again) measured from the estimate, still up to 0.16 s high, and refused
// again: 9 to 17 of 100 refused, in some runs by scheduling. Estimated at
// the lower bound once the Dates prove the clocks apart, none is, and the
// last window is opened within 0.1 s of its start. A server 90.3 s behind,
// every answer dated, was refused 6 times; 0.4 s behind, at 5 per 1 s,
// once, and 2 s slower.
func TestServerClockBehindEstimate(t *testing.T) {
	for _, c := range []struct {
		name    string
		o       time.Duration
		q       int64
		w       time.Duration
		d       ratelimittest.Dialect
		undated bool
	}{
		{"90s behind, every other Date missing", -90 * time.Second, 10, 10 * time.Second, ratelimittest.XRateLimitDate, true},
		{"90.3s behind", -90300 * time.Millisecond, 10, 10 * time.Second, ratelimittest.XRateLimitEpoch, false},
		{"90.3s behind, every other Date missing", -90300 * time.Millisecond, 10, 10 * time.Second, ratelimittest.XRateLimitDate, true},
		{"0.4s behind, 5 per 1s", -400 * time.Millisecond, 5, time.Second, ratelimittest.XRateLimitEpoch, false},
		{"2.7s behind, 2 per 1s, every other Date missing", -2700 * time.Millisecond, 2, time.Second, ratelimittest.XRateLimitDate, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 12 { // runs differ by scheduling
				synctest.Test(t, func(t *testing.T) {
					toNow()
					cfg, wrap := clockOffBy(c.o, c.q, c.w, c.d, c.undated)
					h := ratelimittest.NewHandler(cfg)
					cl, _ := politeOver(wrap(h))
					tasks := int(10 * c.q)
					start := time.Now()
					statuses, _ := runLongest(t, cl, "http://api.test/", tasks, 4)
					took := time.Since(start)
					// Ten windows: the last opens nine windows after the
					// first, a round trip and jitter later.
					least := 9 * c.w
					if s := h.Stats(); statuses[200] != tasks || s.Refused > 0 || took > least+c.w/5+50*time.Millisecond {
						t.Errorf("%v OK of %d, %d refused, took %v; want all, none refused, about %v", statuses[200], tasks, s.Refused, took, least)
					}
				})
			}
		})
	}
}
