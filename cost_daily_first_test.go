package polite_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite"
)

// A server states a daily tokens quota (1000 a day) first, then eight loose
// tokens quotas a minute, and charges 600 a request: the second request,
// which the day cannot pay for (400 left), waits (the ninth quota once took
// the daily quota's slot, tokens read as a unit no request declared, and
// the second request was sent and refused).
func TestDailyQuotaStatedFirstKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		used, refused := int64(0), 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			ok := used+600 <= 1000
			if ok {
				used += 600
			}
			pol := []string{`"day";q=1000;w=86400;qu="tokens"`}
			rl := []string{fmt.Sprintf(`"day";r=%d;t=72000`, 1000-used)}
			for i := range 8 {
				pol = append(pol, fmt.Sprintf(`"m%d";q=1000000000;w=60;qu="tokens"`, i))
				rl = append(rl, fmt.Sprintf(`"m%d";r=1000000000;t=60`, i))
			}
			w.Header().Set("RateLimit-Policy", strings.Join(pol, ", "))
			w.Header().Set("RateLimit", strings.Join(rl, ", "))
			if !ok {
				refused++
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		c, _ := politeOver(h)
		for range 2 {
			ctx := polite.WithCost(t.Context(), polite.Cost{Tokens: 600})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.example/x", strings.NewReader("{}"))
			statusOf(c, req) // the second may fail, held past MaxWait: that is right
		}
		if refused != 0 {
			t.Errorf("%d refused, want 0: the daily tokens quota (400 left) was dropped", refused)
		}
	})
}
