package polite_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/politehttp/polite"
)

// The hot path: a request that needs no wait, over loopback, through the
// base transport alone and through polite over it. The difference is what
// polite adds per request (run both in one go test -bench invocation).
func benchmarkGet(b *testing.B, h http.HandlerFunc, wrap bool) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 64}
	defer base.CloseIdleConnections()
	var rt http.RoundTripper = base
	if wrap {
		rt = &polite.Transport{Base: base}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func plain(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }

func stated(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("RateLimit-Policy", `"api";q=1000000000;w=1`)
	w.Header().Set("RateLimit", `"api";r=999999999;t=1`)
	io.WriteString(w, "ok")
}

func BenchmarkBase(b *testing.B)       { benchmarkGet(b, plain, false) }
func BenchmarkPolite(b *testing.B)     { benchmarkGet(b, plain, true) }
func BenchmarkBaseIETF(b *testing.B)   { benchmarkGet(b, stated, false) }
func BenchmarkPoliteIETF(b *testing.B) { benchmarkGet(b, stated, true) }

// The same without a network: what polite itself costs per request, over a
// Base that answers at once with a canned response.
func benchmarkOverhead(b *testing.B, h http.Header, wrap bool) {
	benchmarkOverheadOf(b, h, wrap, 0)
}

// benchmarkOverheadOf is benchmarkOverhead with Transport.MaxConcurrency
// set to maxConc (0: none), which the local ceilings count.
func benchmarkOverheadOf(b *testing.B, h http.Header, wrap bool, maxConc int) {
	resp := &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, ContentLength: 0}
	var rt http.RoundTripper = roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	if wrap {
		rt = &polite.Transport{Base: rt, MaxConcurrency: maxConc}
	}
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.RoundTrip(req); err != nil {
			b.Fatal(err)
		}
	}
}

var (
	plainHeader = http.Header{"Content-Type": {"text/plain"}, "Content-Length": {"2"}, "Date": {"Sun, 29 Nov 2026 22:00:00 GMT"}}
	ietfHeader  = http.Header{"Content-Type": {"text/plain"}, "Date": {"Sun, 29 Nov 2026 22:00:00 GMT"},
		"Ratelimit-Policy": {`"api";q=1000000000;w=1`}, "Ratelimit": {`"api";r=999999999;t=1`}}
)

func BenchmarkOverheadNone(b *testing.B)       { benchmarkOverhead(b, plainHeader, false) }
func BenchmarkOverheadPolite(b *testing.B)     { benchmarkOverhead(b, plainHeader, true) }
func BenchmarkOverheadPoliteIETF(b *testing.B) { benchmarkOverhead(b, ietfHeader, true) }

// BenchmarkOverheadCeiling is polite's overhead with a local ceiling
// (Transport.MaxConcurrency), which counts each request in flight.
func BenchmarkOverheadCeiling(b *testing.B) { benchmarkOverheadOf(b, plainHeader, true, 64) }

// What polite costs per request from several goroutines, over a Base that
// answers at once with no rate-limit fields: all on one origin, or each on
// an origin of its own. Run with -cpu 1,2: the throughput should grow with
// the goroutines on different origins, and not fall on one.
func benchmarkParallel(b *testing.B, sameOrigin bool) {
	resp := &http.Response{StatusCode: 200, Header: plainHeader, Body: http.NoBody, ContentLength: 0}
	tr := &polite.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })}
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		url := "http://api.test/"
		if !sameOrigin {
			url = fmt.Sprintf("http://o%d.test/", next.Add(1))
		}
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		for pb.Next() {
			if _, err := tr.RoundTrip(req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkParallelOneOrigin(b *testing.B)  { benchmarkParallel(b, true) }
func BenchmarkParallelOwnOrigins(b *testing.B) { benchmarkParallel(b, false) }
