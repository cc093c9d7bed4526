package polite_test

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A request that failed to reach its server (its connection refused at
// dial) was charged its cost, as an answer stating nothing is: three
// requests of 3,000 tokens whose dials were refused took 9,000 of a
// quota of 10,000 the server had never been asked for, and the next
// request of 3,000 waited for tokens that were never spent.
func TestDialRefusedChargesNoCost(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"dial refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}},
		{"host not found", &net.DNSError{Err: "no such host", Name: "llm.example", IsNotFound: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				down := false
				tr := &polite.Transport{
					Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						if down {
							return nil, tc.err
						}
						h := http.Header{"Ratelimit-Policy": {`"tpm";q=10000;qu="tokens";w=60`}, "Ratelimit": {`"tpm";r=9000;t=60`}}
						return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
					}),
					Cost: func(r *http.Request) polite.Cost {
						n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
						return polite.Cost{Tokens: n}
					},
				}
				c := &http.Client{Transport: tr}
				send := func() error {
					req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/chat/completions", nil)
					req.Header.Set("X-Cost", "3000")
					resp, err := c.Do(req)
					if err == nil {
						resp.Body.Close()
					}
					return err
				}
				if err := send(); err != nil {
					t.Fatal(err)
				}
				down = true
				for range 3 {
					if err := send(); !errors.Is(err, tc.err) {
						t.Fatalf("send while the server is unreachable: %v, want %v", err, tc.err)
					}
				}
				st, _ := tr.Inspect("http://llm.example", time.Now())
				for _, p := range st.Policies {
					if p.Unit == "tokens" && p.Remaining < 9000 {
						t.Errorf("tokens remaining %d after three requests that never reached the server; want the 9,000 its last answer stated", p.Remaining)
					}
				}
			})
		})
	}
}
