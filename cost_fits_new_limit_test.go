package polite_test

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// scriptedTokens answers each request with the status and OpenAI token
// fields (limit, remaining, reset) that next returns for the request's
// number, from 1.
type scriptedTokens struct {
	mu   sync.Mutex
	next func(n int) (status int, limit, remaining int64, reset time.Duration)
	n    int
}

func (s *scriptedTokens) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.n++
	status, limit, remaining, reset := s.next(s.n)
	s.mu.Unlock()
	h := w.Header()
	h.Set("x-ratelimit-limit-tokens", strconv.FormatInt(limit, 10))
	h.Set("x-ratelimit-remaining-tokens", strconv.FormatInt(remaining, 10))
	h.Set("x-ratelimit-reset-tokens", reset.String())
	w.WriteHeader(status)
}

func (s *scriptedTokens) sent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// tokensPolicy returns the key's quota of tokens as Inspect shows it.
func tokensPolicy(t *testing.T, c *http.Client) polite.PolicyState {
	t.Helper()
	st, _ := c.Transport.(*polite.Transport).Inspect("http://llm.example", time.Now())
	for _, p := range st.Policies {
		if p.Unit == "tokens" {
			return p
		}
	}
	t.Fatalf("no quota of tokens in %+v", st.Policies)
	return polite.PolicyState{}
}

// A limit that shrank (10,000 to 5,000), stated by the answer to a request
// itself over the new limit (6,000), kept the 12,000 accepted under the
// old one: Accepted read 12,000, and a request of 11,000 was sent rather
// than failed with a *CostError. A new limit forgets what fitted the old.
func TestCostFitsForgottenWhenNewLimitIsExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &scriptedTokens{next: func(n int) (int, int64, int64, time.Duration) {
			switch n {
			case 1:
				return 200, 10000, 9000, 6 * time.Second // counted 1,000 of the 12,000 declared
			case 2:
				return 200, 5000, 4000, 12 * time.Second // a new limit
			}
			return 429, 5000, 0, time.Minute
		}}
		c := declaredCostClient(h)
		if code, err := sendDeclared(c, 12000); code != 200 {
			t.Fatalf("first: %d %v", code, err)
		}
		time.Sleep(time.Minute)
		if code, err := sendDeclared(c, 6000); code != 200 {
			t.Fatalf("second: %d %v", code, err)
		}
		if p := tokensPolicy(t, c); p.Quota != 5000 || p.Accepted != 6000 {
			t.Errorf("Quota %d, Accepted %d; want 5000 and 6000, accepted since the limit changed", p.Quota, p.Accepted)
		}
		_, err := sendDeclared(c, 11000)
		if ce := (*polite.CostError)(nil); !errors.As(err, &ce) {
			t.Errorf("11,000 against a limit of 5,000 (6,000 accepted since it changed): %v, %d requests sent; want a *CostError", err, h.sent())
		}
	})
}

// A quota stated beyond what the key keeps (2^60, read as 2^52) failed a
// request declared at 2^53 with a *CostError naming a limit of 2^52 the
// server never stated, in RoundTrip and in State.WaitFor. A cost beyond
// the cap is read as the cap, as a limit is.
func TestCostBeyondKeptQuotaFits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = int64(1) << 60
		h := &scriptedTokens{next: func(n int) (int, int64, int64, time.Duration) {
			return 200, limit, limit - int64(n), time.Millisecond
		}}
		c := declaredCostClient(h)
		if code, err := sendDeclared(c, 1); code != 200 {
			t.Fatalf("first: %d %v", code, err)
		}
		st, _ := c.Transport.(*polite.Transport).Inspect("http://llm.example", time.Now())
		if _, err := st.WaitFor(polite.Cost{Tokens: 1 << 53}); err != nil {
			t.Errorf("WaitFor(2^53 tokens) against a stated quota of 2^60: %v", err)
		}
		if code, err := sendDeclared(c, 1<<53); code != 200 || err != nil {
			t.Errorf("2^53 tokens against a stated quota of 2^60, all left: %d %v, %d requests sent; want it sent", code, err, h.sent())
		}
	})
}
