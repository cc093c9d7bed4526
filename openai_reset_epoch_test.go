package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// An OpenAI-compatible server that sent its reset as epoch seconds
// (1793491290, 90 s after its Date) had it read as that many seconds from
// now, 56 years: the quota was whole again only a day on, at the cap of a
// pause, not 90 s on. It is an instant, as X-RateLimit-Reset's epoch is.
func TestTransportOpenAIResetEpoch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The bubble starts in 2000, before the epochs of the magnitude
		// rule (1e9 s, in 2001).
		start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) // 1793491200
		time.Sleep(time.Until(start))
		tr := &polite.Transport{Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			h := http.Header{
				"Date":                           {"Sun, 01 Nov 2026 00:00:00 GMT"},
				"X-Ratelimit-Limit-Requests":     {"100"},
				"X-Ratelimit-Remaining-Requests": {"0"},
				"X-Ratelimit-Reset-Requests":     {"1793491290"},
			}
			return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: req}, nil
		})}
		c := &http.Client{Transport: tr}
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		st, ok := tr.Inspect("http://api.test", start)
		if !ok || len(st.Policies) != 1 {
			t.Fatalf("Inspect = %+v, %v; want one policy", st, ok)
		}
		if p := st.Policies[0]; p.ResetAt.Sub(start) != 90*time.Second {
			t.Errorf("policy %+v: whole again at start + %v, want 1m30s", p, p.ResetAt.Sub(start))
		}
	})
}
