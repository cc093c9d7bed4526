package otelpolite

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Two Transports with budgets of their own reached one origin by two
// spellings that polite keys alike (an IPv6 literal written out and
// shortened, an IPv4-mapped address and its IPv4 form, a Unicode host and
// its ASCII form), so that both held the same budget key. The gauge
// promises one series a key, the least left among the budgets that hold
// it; keyAttrs read server.address from the key only when it recognised
// the request's spelling (case, trailing dot, default port), and for
// these took the request's: two series for the one key, one of them with
// the quota of the wrong budget.
func TestGaugeSameKeyOtherSpellings(t *testing.T) {
	for _, tt := range []struct{ name, a, b string }{
		{"ipv6 zeros", "http://[2001:db8:0:0:0:0:0:1]/", "http://[2001:db8::1]/"},
		{"ipv4-mapped", "http://[::ffff:192.0.2.1]/", "http://192.0.2.1/"},
		{"idna", "http://bücher.test/", "http://xn--bcher-kva.test/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, reader := manualMetrics(t)
				mk := func(q int64) *polite.Transport {
					h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: q, Window: time.Minute}}})
					tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
					m.Instrument(tr)
					return tr
				}
				a, b := mk(5), mk(10)
				var keys []string
				for i, u := range []string{tt.a, tt.b} {
					tr := []*polite.Transport{a, b}[i]
					resp, err := (&http.Client{Transport: tr}).Get(u)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					st, _ := tr.Inspect(u, time.Now())
					keys = append(keys, st.Key)
				}
				if keys[0] != keys[1] {
					t.Fatalf("polite keys %q and %q apart; the test needs one key", keys[0], keys[1])
				}
				got := ints(t, collect(t, reader)["polite.client.quota.remaining"])
				least := int64(-1)
				for _, v := range got {
					least = v
				}
				if len(got) != 1 || least != 4 {
					t.Errorf("quota.remaining = %v; want one series for key %s, of 4 (the least left)", got, keys[0])
				}
			})
		})
	}
}
