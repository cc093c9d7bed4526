package polite_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A request estimated at 12,000 tokens was accepted under a limit of
// 10,000 (the server counted 1,000), so PolicyState.Accepted was 12,000.
// The limit was then lowered to 5,000, first stated by a 429 (a smaller
// request refused, then retried and accepted under the new limit).
// Accepted is what the server accepted above the limit since the limit
// last changed, and a new limit forgets it; but only an acceptance (a
// 2xx) forgot it, and by then the limit was no longer new: a request of
// 11,000 against the limit of 5,000 waited for the whole quota, was sent
// and refused, rather than failing at once with a *CostError.
func TestAcceptedForgottenWhenRefusalStatesNewLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &scriptedTokens{next: func(n int) (int, int64, int64, time.Duration) {
			switch n {
			case 1:
				return 200, 10000, 9000, 6 * time.Second // counted 1,000 of the 12,000 declared
			case 2:
				return 429, 5000, 0, time.Minute // the new limit, first stated by a refusal
			case 3:
				return 200, 5000, 2000, 36 * time.Second // the retry, accepted
			}
			return 429, 5000, 0, time.Minute
		}}
		c := declaredCostClient(h)
		if code, err := sendDeclared(c, 12000); code != 200 {
			t.Fatalf("first: %d %v", code, err)
		}
		time.Sleep(time.Minute)
		if code, err := sendDeclared(c, 3000); code != 200 {
			t.Fatalf("second: %d %v (%d sent)", code, err, h.sent())
		}
		p := tokensPolicy(t, c)
		if p.Quota != 5000 || p.Accepted != 0 {
			t.Errorf("Quota %d, Accepted %d; want 5000 and 0: nothing above 5,000 was accepted since the limit changed", p.Quota, p.Accepted)
		}
		before := h.sent()
		start := time.Now()
		code, err := sendDeclared(c, 11000)
		if ce := (*polite.CostError)(nil); !errors.As(err, &ce) {
			t.Errorf("11,000 tokens against a fresh limit of 5,000: status %d, err %v, after %v, %d more sent; want a *CostError at once, not sent",
				code, err, time.Since(start), h.sent()-before)
		}
	})
}
