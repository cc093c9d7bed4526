package polite_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// ra1Writer answers each refusal of a Bare429 handler with Retry-After: 1,
// as a gateway or a framework that sends a constant Retry-After does.
type ra1Writer struct{ statusWriter }

func (w *ra1Writer) WriteHeader(code int) {
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.statusWriter.WriteHeader(code)
}

// A server that states nothing, its refusals carrying Retry-After: 1
// whatever the wait (a constant, as the outage's 503s in
// TestLearnedQuotaAfterOutageGrowsBack), keeps a fixed window of 10
// requests a second; at minute 5 its limit is lowered for real, to 10
// per 5 minutes. 16 workers loop on requests for 3 hours.
//
// A measurement doubles the learned window at most (an outage must not
// become the window), but a window truly longer is taken whole at the
// next measurement that goes beyond the doubling too. Capped at each
// measurement, the window grew
// by the refusal floor, a second per server window of 5 minutes, and the
// key was refused hundreds of times an hour, for 120 acceptances, hours
// after the change. The first hour costs more refusals than the window
// taken whole at once (about 600 to 900 against 320).
func TestLearnedWindowAfterLimitLowered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		mk := func(w time.Duration) http.Handler {
			return ratelimittest.NewHandler(ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: w}},
				Dialect:  ratelimittest.Bare429,
				Latency:  50 * time.Millisecond,
			})
		}
		fast, slow := mk(time.Second), mk(5*time.Minute)
		start := time.Now()
		var ok, ref [200]atomic.Int64 // per minute
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := int(time.Since(start) / time.Minute)
			hh := fast
			if m >= 5 {
				hh = slow
			}
			sw := &ra1Writer{statusWriter{ResponseWriter: w}}
			hh.ServeHTTP(sw, r)
			if m < len(ok) {
				if sw.code() == 200 {
					ok[m].Add(1)
				} else {
					ref[m].Add(1)
				}
			}
		})
		loopUntil(&http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}, 16, start.Add(3*time.Hour))
		hour := func(from, to int) (a, r int64) {
			for m := from; m < to; m++ {
				a += ok[m].Load()
				r += ref[m].Load()
			}
			return
		}
		for hr := range 3 {
			a, r := hour(hr*60, hr*60+60)
			t.Logf("hour %d: accepted %d, refused %d (the server takes 120 an hour from minute 5)", hr+1, a, r)
		}
		if a, r := hour(120, 180); r > a {
			t.Errorf("hours after the limit was lowered to 10 per 5 minutes, the third hour: %d refused for %d accepted; the learned window does not reach the server's", r, a)
		}
	})
}
