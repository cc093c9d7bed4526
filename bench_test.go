package polite_test

import (
	"io"
	"net/http"
	"net/http/httptest"
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
	resp := &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, ContentLength: 0}
	var rt http.RoundTripper = roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	if wrap {
		rt = &polite.Transport{Base: rt}
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
