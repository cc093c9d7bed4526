package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// An honest draft-11 server with a quota in a unit other than requests
// ("points", as a GraphQL API's complexity budget) that refills gradually
// (a token bucket, a sliding-window counter) states r=0;t=6 when its 10
// points a minute are spent: t is when one more point is back, not all
// ten (draft-11 §4.1.2: the client MUST NOT assume the quota whole after
// t). Each request declares its cost exactly. Once t passes, the
// observation is stale and one request probes it; none is refused. Read as
// whole again at t, the quota let several requests go into the one point
// back: 10 to 17 refused of the 40 to 47 sent for 30 tasks.
func TestCostQuotaStaleAtResetIsProbed(t *testing.T) {
	for _, a := range []ratelimittest.Algorithm{ratelimittest.TokenBucket, ratelimittest.SlidingWindow} {
		t.Run(string(a), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Name: "pts", Algorithm: a, Quota: 10, Window: time.Minute, Unit: "points"}},
					Latency:  10 * time.Millisecond,
				})
				tr := &polite.Transport{
					Base: &ratelimittest.Transport{Handler: h},
					Cost: func(*http.Request) polite.Cost { return polite.Cost{Unit: "points", Amount: 1} },
				}
				got := run(t, &http.Client{Transport: tr}, "http://api.test/", 30, 8)
				if got[http.StatusOK] != 30 {
					t.Errorf("statuses %v, want 30 × 200", got)
				}
				if n := h.Stats().Refused; n != 0 {
					t.Errorf("honest server (IETF, %s, 10 points/min, each request costing 1 point as declared) refused %d of %d requests, want 0", a, n, h.Stats().Requests)
				}
			})
		})
	}
}
