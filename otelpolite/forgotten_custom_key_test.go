package otelpolite

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A custom key shaped like a URL ("http://api.test/acct-1") is, for
// Inspect, itself while the budget holds a state for it, and the origin it
// names once it does not. The gauge inspected the budget with the custom
// key and reported whatever came back under the custom key's fingerprint:
// once polite forgot the key (Budget.Forget, or idle past IdleTTL), the
// gauge went on reporting a quota for it, the origin's, which another
// Transport of the same Budget keeps (1 left, where the account has no
// state at all). A key polite forgot reports nothing.
func TestGaugeForgottenCustomKeyReportsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reader := manualMetrics(t)
		b := &polite.Budget{}
		h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 5, Window: time.Minute}}})
		const custom = "http://api.test/acct-1"
		account := &polite.Transport{Budget: b, Base: &ratelimittest.Transport{Handler: h}, Key: func(*http.Request) string { return custom }}
		plain := &polite.Transport{Budget: b, Base: &ratelimittest.Transport{Handler: h}} // not instrumented
		m.Instrument(account)
		get := func(tr *polite.Transport) {
			resp, err := (&http.Client{Transport: tr}).Get("http://api.test/x")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		get(account)
		for range 3 {
			get(plain)
		}
		st, ok := b.Inspect(custom, time.Now())
		if !ok || !fingerprinted(st.Key) {
			t.Fatalf("Inspect(%q) = %q, %v; the test needs the custom key's state", custom, st.Key, ok)
		}
		shown := st.Key
		if got := ints(t, collect(t, reader)["polite.client.quota.remaining"]); len(got) != 1 {
			t.Fatalf("before Forget, quota.remaining = %v; want the custom key's one series", got)
		}

		b.Forget(custom)
		for set, v := range ints(t, collect(t, reader)["polite.client.quota.remaining"]) {
			if strings.Contains(set, "polite.key="+shown+",") {
				t.Errorf("after Forget(custom key), quota.remaining{%s} = %d: the origin's quota under the forgotten key's fingerprint; want no series", set, v)
			}
		}
	})
}
