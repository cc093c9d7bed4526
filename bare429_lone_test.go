package polite_test

import (
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// One caller, one request at a time, and two, against a fixed window of
// 10 that states nothing (a bare 429, no Retry-After), of 40 s, a minute
// and 5 minutes: every task is served, within MaxWait (10 minutes). The
// request refused first is the learner's probe at each of its attempts; at
// the learner's pace (a probe after half the time refused so far) its 8
// attempts spanned about 34 s, and it was given up, its 429 returned,
// before any of these windows ended (one task a run for a lone caller, 18
// in 100 runs for two at a minute, 122 at 5 minutes). Its attempts now
// spread over what it may wait (see control.stretch), its wait ends once
// another request is accepted, and the acceptance after its longer wait
// bounds the window from above only.
func TestBare429LongWindowFewCallers(t *testing.T) {
	for _, workers := range []int{1, 2} {
		for _, w := range []time.Duration{40 * time.Second, time.Minute, 5 * time.Minute} {
			t.Run(fmt.Sprintf("%d/%v", workers, w), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					present()
					ev := &events{}
					tr := &polite.Transport{Base: bareServer(ratelimittest.FixedWindow, w), OnEvent: ev.on}
					start := time.Now()
					statuses := run(t, &http.Client{Transport: tr}, "http://api.test/", 40, workers)
					took := time.Since(start)
					if statuses[200] != 40 || len(ev.of(polite.EventGiveUp)) != 0 {
						t.Errorf("statuses %v, %d given up; want all 40 served", statuses, len(ev.of(polite.EventGiveUp)))
					}
					// 4 windows' work, the first measured: the window
					// is learned within half of itself, and the longest
					// wait, a lone probe's last, is MaxWait.
					if bound := 3*w + 3*w/2 + 10*time.Minute; took > bound {
						t.Errorf("took %v; want no more than %v", took, bound)
					}
					t.Logf("%d callers, window %v: %v in %v", workers, w, statuses, took)
				})
			})
		}
	}
}
