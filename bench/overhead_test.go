package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/parse"
)

// What polite costs per request, against what a request costs without it
// and through go-retryablehttp's RoundTripper (which reads no rate-limit
// field), over a Base that answers at once with a canned response: no
// network, no body. Run all in one invocation and compare with benchstat:
//
//	go test -run '^$' -bench 'Overhead|Reader|Floor' -count 6 | tee overhead.txt
//	benchstat -col /client overhead.txt
//
// polite minus base is polite's overhead; retryablehttp minus base, its.
// BenchmarkReader is the share of reading the fields in polite's;
// BenchmarkFloor, what no reader can avoid.

// date is the Date of the first canned responses, and the instant
// GitHub's reset is counted from: the start of the run, as a server whose
// clock agrees with ours dates its answers. canned moves the Date on as
// the seconds pass, as that server does: a Date that stays at one value
// is read as no Date (a frozen one: see parse.Reader.Read), and one more
// than 10 minutes behind takes the path of a Date that lies (DESIGN.md,
// "the server's clock"), which no typical server sends.
var date = time.Now().UTC().Truncate(time.Second)

// headerSets are the rate-limit fields of a typical response of each kind,
// besides Content-Type, Content-Length and Date.
var headerSets = []struct {
	name   string
	fields [][2]string
}{
	{"none", nil},
	{"ietf", [][2]string{
		{"RateLimit-Policy", `"api";q=1000000000;w=1`},
		{"RateLimit", `"api";r=999999999;t=1`},
	}},
	{"github", [][2]string{
		{"X-RateLimit-Limit", "5000"},
		{"X-RateLimit-Remaining", "4999"},
		{"X-RateLimit-Reset", strconv.FormatInt(date.Add(time.Hour).Unix(), 10)},
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
}

func header(fields [][2]string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", "2")
	h.Set("Date", date.Format(http.TimeFormat))
	for _, f := range fields {
		h.Set(f[0], f[1])
	}
	return h
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// canned returns a Base that answers every request with the same
// response, header h and no body, one request at a time. Every 4096
// answers it sets the Date to the second then, as a server's clock moves
// on: a read of the clock, and the allocation of a new Date, once every
// few milliseconds.
func canned(h http.Header) http.RoundTripper {
	resp := &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, ContentLength: 0}
	n, last := 0, date
	return roundTripFunc(func(*http.Request) (*http.Response, error) {
		if n++; n%4096 == 0 {
			if now := time.Now().UTC().Truncate(time.Second); now.After(last) {
				h["Date"] = []string{now.Format(http.TimeFormat)}
				last = now
			}
		}
		return resp, nil
	})
}

// wrappers build each client's RoundTripper over a base.
var wrappers = []struct {
	name string
	wrap func(http.RoundTripper) http.RoundTripper
}{
	{"base", func(rt http.RoundTripper) http.RoundTripper { return rt }},
	{"polite", func(rt http.RoundTripper) http.RoundTripper { return &polite.Transport{Base: rt} }},
	{"retryablehttp", func(rt http.RoundTripper) http.RoundTripper {
		c := retryablehttp.NewClient()
		c.HTTPClient.Transport = rt
		c.Logger = nil
		return &retryablehttp.RoundTripper{Client: c}
	}},
}

func BenchmarkOverhead(b *testing.B) {
	for _, hs := range headerSets {
		for _, w := range wrappers {
			b.Run(fmt.Sprintf("fields=%s/client=%s", hs.name, w.name), func(b *testing.B) {
				rt := w.wrap(canned(header(hs.fields)))
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				b.ReportAllocs()
				for b.Loop() {
					resp, err := rt.RoundTrip(req)
					if err != nil {
						b.Fatal(err)
					}
					resp.Body.Close()
				}
			})
		}
	}
}

// What reading the fields costs on its own: the parse.Reader the Transport
// keeps per origin, on the same headers, so that polite's overhead splits
// into reading the fields and the rest (pacing, the budget, the clock).
func BenchmarkReader(b *testing.B) {
	for _, hs := range headerSets {
		b.Run(fmt.Sprintf("fields=%s", hs.name), func(b *testing.B) {
			h := header(hs.fields)
			var r parse.Reader
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				sinkQuotas, _ = r.Read(h, now, time.Time{})
			}
		})
	}
}

var sinkQuotas []parse.Quota

// What no reader of the fields can do without, on the same headers: two
// readings of the monotonic clock (the request's start and its answer's
// arrival, which pacing needs) and one walk over the header's names (a
// dialect's names are not all known in advance: X-RateLimit-Limit-Minute,
// Kong's per-period names). It sets the least overhead polite can have on
// this machine, whose clock source BenchmarkReader and BenchmarkOverhead
// pay for alike.
func BenchmarkFloor(b *testing.B) {
	for _, hs := range headerSets {
		b.Run(fmt.Sprintf("fields=%s", hs.name), func(b *testing.B) {
			h := header(hs.fields)
			start := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				sinkDuration += time.Since(start)
				for k := range h {
					sinkInt += len(k)
				}
				sinkDuration += time.Since(start)
			}
		})
	}
}

var (
	sinkDuration time.Duration
	sinkInt      int
)

// Throughput over loopback HTTP/1.1 with the IETF pair on every response:
// a bare http.Client (client=base) against polite and go-retryablehttp's
// RoundTripper over the same kind of http.Transport, from 1, 16 and 64
// goroutines. ns/op is wall time per request; lower is
// faster. cpu-ns/op is the CPU time the process (client and server) spent
// per request, user and system: on a shared or loaded machine it is the
// steadier measure of what polite adds, since loopback throughput is bound
// by CPU.
//
//	go test -run '^$' -bench Loopback -count 6 | tee loopback.txt
//	benchstat -col /client loopback.txt
func BenchmarkLoopback(b *testing.B) {
	ietf := headerSets[1].fields
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, f := range ietf {
			w.Header().Set(f[0], f[1])
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	for _, g := range []int{1, 16, 64} {
		for _, w := range wrappers {
			b.Run(fmt.Sprintf("goroutines=%d/client=%s", g, w.name), func(b *testing.B) {
				base := &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}
				defer base.CloseIdleConnections()
				c := &http.Client{Transport: w.wrap(base)}
				get := func() {
					resp, err := c.Get(srv.URL)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				// Warm the connections, g at once: warmed one after
				// another, the requests reused one connection, and at 16
				// and 64 goroutines the timed region dialled the rest.
				var warm sync.WaitGroup
				for range g {
					warm.Go(get)
				}
				warm.Wait()
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.ResetTimer()
				var wg sync.WaitGroup
				per := (b.N + g - 1) / g
				for range g {
					wg.Go(func() {
						for range per {
							get()
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(per*g), "cpu-ns/op")
			})
		}
	}
}
