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

// BenchmarkHeaderIETFOnly is BenchmarkHeaderIETF on a header that holds
// only the IETF pair, as BenchmarkFastIETFQuotas reads it: the difference
// with BenchmarkHeaderIETF is the cost of looking at the other fields.
func BenchmarkHeaderIETFOnly(b *testing.B) {
	h := http.Header{}
	h.Set("Ratelimit-Policy", `"default";q=1200;w=300`)
	h.Set("Ratelimit", `"default";r=1199;t=1`)
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

// BenchmarkFastIETF is the fast reader's own cost on the IETF pair of
// BenchmarkHeaderIETF: both fields read into buffers on the stack, with
// no header map to search and no result to allocate.
func BenchmarkFastIETF(b *testing.B) {
	h := ietfHeader()
	pv, lv := h["Ratelimit-Policy"], h["Ratelimit"]
	b.ReportAllocs()
	for b.Loop() {
		var pbuf [4]Policy
		var lbuf [4]Limit
		ps, err1 := appendPolicies(pbuf[:0], pv)
		ls, err2 := appendLimits(lbuf[:0], lv)
		if len(ps) != 1 || len(ls) != 1 || err1 != nil || err2 != nil {
			b.Fatal(len(ps), len(ls), err1, err2)
		}
	}
}

// BenchmarkFastIETFQuotas is what a reader of the IETF pair alone would
// cost: BenchmarkFastIETF with the two fields found by name in the
// header, joined into quotas, and the result allocated, as Header does;
// Header also looks at the response's other fields, for other dialects.
func BenchmarkFastIETFQuotas(b *testing.B) {
	h := ietfHeader()
	b.ReportAllocs()
	for b.Loop() {
		var p parser
		p.found[0] = field{sRateLimitPolicy, h["Ratelimit-Policy"]}
		p.found[1] = field{sRateLimit, h["Ratelimit"]}
		p.index(p.found[:2])
		p.ietf(sRateLimitPolicy, sRateLimit, true)
		sinkQuotas = make([]Quota, p.n)
		copy(sinkQuotas, p.quotas[:p.n])
	}
}

// BenchmarkReaderIETF is BenchmarkHeaderIETF through a Reader, which
// remembers the policy and the Date.
func BenchmarkReaderIETF(b *testing.B) {
	h := ietfHeader()
	now := time.Now()
	var r Reader
	b.ReportAllocs()
	for b.Loop() {
		sinkQuotas, _ = r.Read(h, now, time.Time{})
	}
}

// BenchmarkReaderNone is BenchmarkHeaderNone through a Reader, which
// returns the Date.
func BenchmarkReaderNone(b *testing.B) {
	h := plainHeader()
	now := time.Now()
	var r Reader
	b.ReportAllocs()
	for b.Loop() {
		sinkQuotas, _ = r.Read(h, now, time.Time{})
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

// dialectBenchmarks are typical responses of each family, as servers send
// them, on top of plainHeader.
var dialectBenchmarks = []struct {
	name   string
	fields [][2]string
}{
	{"ietf", [][2]string{
		{"RateLimit-Policy", `"default";q=1200;w=300`},
		{"RateLimit", `"default";r=1199;t=1`},
	}},
	{"ietf-two-pk", [][2]string{
		{"RateLimit-Policy", `"100-in-1min"; q=100; w=60; pk=:MGMzNGM3YmU2MTlj:, "day";q=10000;w=86400`},
		{"RateLimit", `"100-in-1min"; r=95; t=25; pk=:MGMzNGM3YmU2MTlj:, "day";r=9000;t=3600`},
	}},
	{"beta", [][2]string{
		{"Beta-RateLimit-Policy", `"global";q=100;w=60`},
		{"Beta-RateLimit", `"global";r=99;t=60`},
	}},
	{"huggingface", [][2]string{
		{"RateLimit-Policy", `"fixed window";"api";q=500;w=300`},
		{"RateLimit", `"api";r=495;t=23`},
	}},
	{"github", [][2]string{
		{"X-RateLimit-Limit", "5000"},
		{"X-RateLimit-Remaining", "4999"},
		{"X-RateLimit-Reset", "1740830460"},
		{"X-RateLimit-Used", "1"},
		{"X-RateLimit-Resource", "core"},
	}},
	{"openai", [][2]string{
		{"X-Ratelimit-Limit-Requests", "10000"},
		{"X-Ratelimit-Limit-Tokens", "200000"},
		{"X-Ratelimit-Remaining-Requests", "9987"},
		{"X-Ratelimit-Remaining-Tokens", "199996"},
		{"X-Ratelimit-Reset-Requests", "1m51.535s"},
		{"X-Ratelimit-Reset-Tokens", "1ms"},
	}},
	{"linear", [][2]string{
		{"X-RateLimit-Requests-Limit", "1500"},
		{"X-RateLimit-Requests-Remaining", "1499"},
		{"X-RateLimit-Requests-Reset", "1740830460000"},
		{"X-RateLimit-Complexity-Limit", "250000"},
		{"X-RateLimit-Complexity-Remaining", "249000"},
		{"X-RateLimit-Complexity-Reset", "1740830460000"},
	}},
	{"kong", [][2]string{
		{"X-RateLimit-Limit-Minute", "100"},
		{"X-RateLimit-Remaining-Minute", "99"},
		{"RateLimit-Limit", "100"},
		{"RateLimit-Remaining", "99"},
		{"RateLimit-Reset", "30"},
	}},
	{"envoy", [][2]string{
		{"X-RateLimit-Limit", `1, 1;w=60;name="first", 4;w=3600;name="second"`},
		{"X-RateLimit-Remaining", "0"},
		{"X-RateLimit-Reset", "5"},
	}},
	{"okta", [][2]string{
		{"X-Rate-Limit-Limit", "600"},
		{"X-Rate-Limit-Remaining", "599"},
		{"X-Rate-Limit-Reset", "1740830460"},
	}},
	{"draft-06", [][2]string{
		{"RateLimit-Policy", "100;w=60"},
		{"RateLimit-Limit", "100"},
		{"RateLimit-Remaining", "42"},
		{"RateLimit-Reset", "60"},
	}},
	{"draft-07", [][2]string{
		{"RateLimit-Policy", "100;w=60"},
		{"RateLimit", "limit=100, remaining=25, reset=5"},
	}},
	{"hubspot", [][2]string{
		{"X-HubSpot-RateLimit-Max", "100"},
		{"X-HubSpot-RateLimit-Remaining", "99"},
		{"X-HubSpot-RateLimit-Interval-Milliseconds", "10000"},
		{"X-HubSpot-RateLimit-Daily", "250000"},
		{"X-HubSpot-RateLimit-Daily-Remaining", "249999"},
	}},
	{"shopify", [][2]string{{"X-Shopify-Shop-Api-Call-Limit", "32/40"}}},
	{"zendesk", [][2]string{
		{"X-Rate-Limit", "700"},
		{"X-Rate-Limit-Remaining", "699"},
		{"Zendesk-RateLimit-Tickets-Index", "total=100; remaining=99; resets=41"},
	}},
	{"twitter", [][2]string{
		{"X-Rate-Limit-Limit", "900"},
		{"X-Rate-Limit-Remaining", "899"},
		{"X-Rate-Limit-Reset", "1740830460"},
		{"X-App-Limit-24hour-Limit", "10000"},
		{"X-App-Limit-24hour-Remaining", "9999"},
		{"X-App-Limit-24hour-Reset", "1740916800"},
	}},
}

// BenchmarkHeaderDialect measures Header on a typical response of each
// family.
func BenchmarkHeaderDialect(b *testing.B) {
	for _, d := range dialectBenchmarks {
		b.Run(d.name, func(b *testing.B) {
			h := plainHeader()
			for _, f := range d.fields {
				h.Add(f[0], f[1])
			}
			now := time.Date(2025, 3, 1, 12, 0, 7, 0, time.UTC)
			if Header(h, now) == nil {
				b.Fatalf("Header(%v) = nil", h)
			}
			b.ReportAllocs()
			for b.Loop() {
				sinkQuotas = Header(h, now)
			}
		})
	}
}
