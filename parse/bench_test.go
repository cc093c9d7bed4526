package parse

import (
	"net/http"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
)

// ietfHeader is a typical response carrying the IETF pair (Cloudflare's
// live values).
func ietfHeader() http.Header {
	h := plainHeader()
	h.Set("Ratelimit-Policy", `"default";q=1200;w=300`)
	h.Set("Ratelimit", `"default";r=1199;t=1`)
	return h
}

var sinkQuotas []Quota

// BenchmarkHeaderIETF and BenchmarkUnmarshalListIETF measure Header
// against the bare httpsfv parse of the same two fields.
func BenchmarkHeaderIETF(b *testing.B) {
	h := ietfHeader()
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		sinkQuotas = Header(h, now)
	}
}

var sinkList httpsfv.List

func BenchmarkUnmarshalListIETF(b *testing.B) {
	h := ietfHeader()
	b.ReportAllocs()
	for b.Loop() {
		sinkList, _ = httpsfv.UnmarshalList(h.Values("Ratelimit-Policy"))
		sinkList, _ = httpsfv.UnmarshalList(h.Values("Ratelimit"))
	}
}

func BenchmarkHeaderNone(b *testing.B) {
	h := plainHeader()
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		sinkQuotas = Header(h, now)
	}
}

func BenchmarkHeaderOpenAI(b *testing.B) {
	h := plainHeader()
	h.Set("X-Ratelimit-Limit-Requests", "10000")
	h.Set("X-Ratelimit-Limit-Tokens", "200000")
	h.Set("X-Ratelimit-Remaining-Requests", "9987")
	h.Set("X-Ratelimit-Remaining-Tokens", "199996")
	h.Set("X-Ratelimit-Reset-Requests", "1m51.535s")
	h.Set("X-Ratelimit-Reset-Tokens", "1ms")
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		sinkQuotas = Header(h, now)
	}
}

func BenchmarkHeaderAnthropic(b *testing.B) {
	h := plainHeader()
	for _, unit := range []string{"Requests", "Tokens", "Input-Tokens", "Output-Tokens"} {
		h.Set("Anthropic-Ratelimit-"+unit+"-Limit", "80000")
		h.Set("Anthropic-Ratelimit-"+unit+"-Remaining", "79000")
		h.Set("Anthropic-Ratelimit-"+unit+"-Reset", "2025-03-01T12:00:59Z")
	}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		sinkQuotas = Header(h, now)
	}
}
