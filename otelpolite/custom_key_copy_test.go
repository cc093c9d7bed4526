package otelpolite

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// The quota gauge keeps, for each custom key, the key Transport.Key
// returned, to inspect the budget with. A Key that returns part of the
// request's URL (the account in its first path segment) hands back a
// string cut from the URL, which was kept as it was, and with it the
// whole URL (a crawler's link may be long) for as long as the key was
// kept: up to MaxKeys URLs. keyAttrs copies the host for that reason, and
// polite's own store copies the key.
func TestCustomKeyKeepsNoURL(t *testing.T) {
	m, _ := manualMetrics(t)
	tr := &polite.Transport{
		Base: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Quota: 1000, Window: time.Minute}},
		})},
		Key: func(r *http.Request) string {
			seg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			return seg // the account, cut from the URL's path
		},
	}
	m.Instrument(tr)
	client := &http.Client{Transport: tr}
	const keys = 100
	pad := strings.Repeat("a", 256<<10)
	one := func(i int) {
		// A fresh string per URL, as a crawler reads links from bodies.
		resp, err := client.Get(fmt.Sprintf("http://api.test/acct-%d/%s", i, pad))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	one(0)
	before := heapAlloc()
	for i := 1; i <= keys; i++ {
		one(i)
	}
	after := heapAlloc()
	per := (int64(after) - int64(before)) / keys
	t.Logf("%d bytes kept per custom key for URLs of 256 KiB", per)
	if per > 16<<10 {
		t.Errorf("%d bytes kept per custom key, want at most 16 KiB: the URLs of 256 KiB are kept", per)
	}
	runtime.KeepAlive(m)
	runtime.KeepAlive(tr)
}
