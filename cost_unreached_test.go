package polite_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A request whose connection was refused reached no server, and no quota
// counted it. Its cost was charged all the same: with 5000 tokens of
// 10,000 left, a dial refused for a request of 5000 spent them, and the
// next request of 5000 waited 30 s for the reset (a *WaitError within a
// deadline of 5 s). Retried by RetryTransient (with an Idempotency-Key),
// the request waited so for itself; without one, a POST that reached no
// server was not retried, though it was performed nowhere.
func TestCostNotChargedForUnreachedServer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		retry   bool
		idemKey string
	}{
		{"no retry", false, ""},
		{"retried with an idempotency key", true, "k1"},
		{"retried without an idempotency key", true, ""},
	} {
		retry, idemKey := tc.retry, tc.idemKey
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				left, calls := int64(10000), 0
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					mu.Lock()
					defer mu.Unlock()
					if calls++; calls == 2 {
						return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
					}
					left -= 5000
					h := http.Header{}
					h.Set("X-Ratelimit-Limit-Tokens", "10000")
					h.Set("X-Ratelimit-Remaining-Tokens", strconv.FormatInt(left, 10))
					h.Set("X-Ratelimit-Reset-Tokens", "30s")
					return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: req}, nil
				})
				c := &http.Client{Transport: &polite.Transport{Base: base, RetryTransient: retry}}
				do := func() error {
					ctx, cancel := context.WithTimeout(polite.WithCost(t.Context(), polite.Cost{Tokens: 5000}), 5*time.Second)
					defer cancel()
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.test/v1/chat/completions", nil)
					if idemKey != "" {
						req.Header.Set("Idempotency-Key", idemKey)
					}
					resp, err := c.Do(req)
					if err == nil {
						resp.Body.Close()
					}
					return err
				}
				if err := do(); err != nil {
					t.Fatal(err)
				}
				err := do() // refused at the dial
				if retry {
					if err != nil {
						t.Errorf("the request retried after its dial was refused: %v; want it sent within 5s, as 5000 tokens are left", err)
					}
					return
				}
				if err == nil {
					t.Fatal("want the dial's error")
				}
				if err := do(); err != nil {
					t.Errorf("the request after the refused dial: %v; want it sent at once, as 5000 tokens are left", err)
				}
				if calls != 3 {
					t.Errorf("%d calls to Base, want 3", calls)
				}
			})
		})
	}
}
