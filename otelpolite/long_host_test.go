package otelpolite

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A host longer than any DNS name (a link's or a redirect's, up to
// net/http's megabyte of header), which polite keys by its digest, was
// named whole by the counters and the histogram: each of the first
// MaxHosts such hosts kept its bytes in the Metrics' hosts, its cached
// attribute sets and the SDK's aggregations for the life of the process
// (273,430 bytes for each host of 256 KiB). It is named by the digest.
func TestLongHostNamedByDigest(t *testing.T) {
	const hosts = 50
	m, _ := manualMetrics(t)
	one := func(i int) {
		host := fmt.Sprintf("h%d-%s.test", i, strings.Repeat("a", 256<<10))
		req, err := http.NewRequest(http.MethodGet, "http://"+host+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		m.OnEvent(polite.Event{Kind: polite.EventRetry, Key: "http://~sha256-" + strings.Repeat("0", 64), Request: req, Status: 429, Reason: polite.ReasonRetryAfter, Wait: time.Second})
	}
	one(0)
	before := heapAlloc()
	for i := 1; i <= hosts; i++ {
		one(i)
	}
	after := heapAlloc()
	per := (int64(after) - int64(before)) / hosts
	if per > 16<<10 {
		t.Errorf("%d bytes kept per host of 256 KiB, want at most 16 KiB: the host is kept whole, not as polite's digest", per)
	}
	runtime.KeepAlive(m)
}

// The same request's host was named two ways: by polite's digest on the
// gauge, whole (400 bytes) on the counters.
func TestLongHostOneName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reader := manualMetrics(t)
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Quota: 5, Window: 10 * time.Second}},
		})}}
		m.Instrument(tr)
		host := strings.Repeat("a", 400) + ".example"
		resp, err := (&http.Client{Transport: tr}).Get("http://" + host + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for set := range ints(t, collect(t, reader)["polite.client.requests"]) {
			if strings.Contains(set, "aaaaaaaa") {
				t.Errorf("polite.client.requests named the host whole (%d bytes), while the gauge names it ~sha256-…: %.80s…", len(host), set)
			}
		}
	})
}
