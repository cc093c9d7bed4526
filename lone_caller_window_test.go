package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A lone caller, one request at a time, against a fixed window of 10 a
// minute that states nothing (a bare 429): every task is served. The
// learner measured the window with the retries of the request it
// refused, each half the time since the cycle began, so its 8 attempts
// spanned 15s and it was given up, its 429 returned, in every run; with
// 4 callers, about 1 run in 125 (TestBare429LongWindowNoOutage).
func TestLoneCallerOutlastsUnstatedWindow(t *testing.T) {
	for _, workers := range []int{1, 2} {
		synctest.Test(t, func(t *testing.T) {
			present()
			srv := &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
				Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: time.Minute}},
				Dialect:  ratelimittest.Bare429,
			})}
			ev := &events{}
			tr := &polite.Transport{Base: srv, OnEvent: ev.on}
			start := time.Now()
			statuses := run(t, &http.Client{Transport: tr}, "http://api.test/", 40, workers)
			took := time.Since(start)
			if statuses[200] != 40 {
				t.Errorf("%d workers: statuses %v, %d give-ups; want all 40 served", workers, statuses, len(ev.of(polite.EventGiveUp)))
			}
			// 40 tasks at 10 a minute take 3 minutes and more (3m37s
			// before, the one task given up included).
			if took > 4*time.Minute {
				t.Errorf("%d workers: 40 tasks took %v, want under 4m", workers, took)
			}
			retries := len(ev.of(polite.EventRetry))
			if retries > 30 {
				t.Errorf("%d workers: %d retries, want at most 30", workers, retries)
			}
			t.Logf("%d workers: %v, %d retries", workers, took, retries)
		})
	}
}
