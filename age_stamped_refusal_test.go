package polite_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// When a refusal with an Age first paused for its Retry-After less the
// Age, a cache or proxy that stamps Age on answers the origin made just
// now (ratelimittest's Age fault, `polite serve -age`; the "cache that
// sends Age on answers the origin counted" of
// TestAgeOnCountedAnswersCostsLittle, or a CDN adding Age to its own
// errors) made every fresh refusal's Retry-After, with a Date of now,
// count as spent: the key no longer paused for the window the server
// asked, but probed at the refusal floor and its doubling (1, 2, 4, 8,
// 16, 32 s), refused at each. Here a fixed window of 10 a minute behind
// Age: 60, 40 tasks: 2 refused in 3m0s before, 11 in 3m43s then, for
// 429s and 503s alike. An Age counts only as far as the Date bears it out.
func TestAgeStampedRefusalStillPausesForItsRetryAfter(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			const tasks, workers = 40, 4
			refused, took := refusedRun(t, tasks, workers, func() (http.Handler, []*ratelimittest.Handler) {
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Policies:     []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: time.Minute}},
					Age:          time.Minute,
					RefuseStatus: status,
					Latency:      5 * time.Millisecond,
				})
				return h, []*ratelimittest.Handler{h}
			})
			t.Logf("%d refused in %v", refused, took)
			if refused > 5 || took > 3*time.Minute+10*time.Second {
				t.Errorf("fresh %ds with Age: 60 stamped on them: %d refused in %v for %d tasks at 10 a minute; want at most 5 (about one a window), in about 3m, as when an Age is not taken off", status, refused, took, tasks)
			}
		})
	}
}
