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

// Two callers against a token bucket of 10 refilled over 2 and 5 minutes
// that states nothing (a bare 429): every task is served. Its refill is
// one request every 12 or 30 s, which the caller that asks first takes: a
// probe whose wait, lengthened so that its attempts reach as far as it
// may wait, ended as soon as the other was accepted went into the bucket
// that acceptance had just emptied, and was refused again, up to all its
// 8 attempts within a minute or so (109 and 153 tasks given up in 200 runs).
// Woken early only while the attempts it has left after that still reach
// as far, none was in 200 runs of each.
func TestBare429TokenBucketFewCallers(t *testing.T) {
	for _, c := range []struct {
		workers int
		w       time.Duration
	}{{2, 2 * time.Minute}, {2, 5 * time.Minute}} {
		t.Run(fmt.Sprintf("%d/%v", c.workers, c.w), func(t *testing.T) {
			for range 4 {
				synctest.Test(t, func(t *testing.T) {
					present()
					ev := &events{}
					tr := &polite.Transport{Base: bareServer(ratelimittest.TokenBucket, c.w), OnEvent: ev.on}
					statuses := run(t, &http.Client{Transport: tr}, "http://api.test/", 40, c.workers)
					if statuses[200] != 40 || len(ev.of(polite.EventGiveUp)) != 0 {
						t.Errorf("statuses %v, %d given up; want all 40 served", statuses, len(ev.of(polite.EventGiveUp)))
					}
				})
			}
		})
	}
}
