package polite_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// startTimes records when each request reached Base.
type startTimes struct {
	mu sync.Mutex
	at []time.Time
}

func (l *startTimes) base() http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.at = append(l.at, time.Now())
		l.mu.Unlock()
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, ContentLength: 0, Request: r}, nil
	})
}

// Budget.MaxRate is the client's own ceiling, not what the key taught:
// Budget.Forget keeps the next start it allows, as it keeps the requests
// in flight against MaxConcurrency. Cleared with the rest, the request
// right after a Forget went at once, under a MaxRate of 1.
func TestForgetKeepsBudgetMaxRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log startTimes
		b := &polite.Budget{MaxRate: 1}
		tr := &polite.Transport{Base: log.base(), Budget: b}
		get := func() {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/x", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		get()
		b.Forget("http://api.test")
		get()
		get()
		if len(log.at) != 3 {
			t.Fatalf("%d requests sent, want 3", len(log.at))
		}
		if d := log.at[1].Sub(log.at[0]); d < time.Second {
			t.Errorf("second request started %v after the first, across a Forget; Budget.MaxRate 1 wants 1s", d)
		}
	})
}
