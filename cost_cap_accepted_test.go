package polite_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A cost beyond 2^52, read as 2^52 by State.WaitFor and the admission,
// was compared whole with what the server accepted (kept capped): a
// request of 2^60 tokens the server had accepted failed with a *CostError
// when sent again, while WaitFor said it went.
func TestCostBeyondCapAcceptedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const huge = int64(1) << 60
		h := &scriptedTokens{next: func(n int) (int, int64, int64, time.Duration) {
			return 200, 1000, 900, 6 * time.Second
		}}
		c := declaredCostClient(h)
		if code, err := sendDeclared(c, huge); code != 200 {
			t.Fatalf("first: %d %v", code, err)
		}
		p := tokensPolicy(t, c)
		st, _ := c.Transport.(*polite.Transport).Inspect("http://llm.example", time.Now())
		_, werr := st.WaitFor(polite.Cost{Tokens: huge})
		code, err := sendDeclared(c, huge)
		var ce *polite.CostError
		if errors.As(err, &ce) {
			t.Errorf("2^60 tokens, accepted before (Accepted %d, Quota %d), sent again: %v (WaitFor said %v); want it sent as WaitFor says", p.Accepted, p.Quota, err, werr)
		} else if code != 200 {
			t.Errorf("second: %d %v", code, err)
		}
	})
}
