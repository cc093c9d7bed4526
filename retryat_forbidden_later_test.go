package polite_test

import (
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A 403 that says its quota is spent (GitHub's answer past its limit) is
// a refusal, and RetryAt answers for "a refusal ... that t returned". Its
// answer must not depend on when it is asked: once the reset has passed,
// it says the key accepts now (true). It said the response was no
// refusal at all (false), which a caller reads as an ordinary 403 (bad
// credentials), and failed the task: a response without a Date showed it.
func TestRetryAtForbiddenAfterReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Epoch seconds are told from delta seconds by their size: leave
		// the bubble's year 2000 for an instant above 1e9.
		time.Sleep(time.Until(time.Unix(1.7e9, 0)))
		tr := &polite.Transport{MaxAttempts: 1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{
				"X-Ratelimit-Limit":     {"60"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Used":      {"60"},
				"X-Ratelimit-Reset":     {strconv.FormatInt(time.Now().Unix()+3, 10)},
			}
			return &http.Response{StatusCode: http.StatusForbidden, Header: h, Body: http.NoBody, Request: r}, nil
		})}
		req, _ := http.NewRequest(http.MethodGet, "https://api.github.test/user", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, ok := tr.RetryAt(resp); !ok {
			t.Fatal("RetryAt = false at once; the 403 was not read as a refusal")
		}
		time.Sleep(5 * time.Second) // past the reset
		at, ok := tr.RetryAt(resp)
		if !ok {
			t.Errorf("RetryAt of the same 403 refusal, 5s later (past its reset) = %v, false; want now, true", at)
		}
	})
}
