package parse_test

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/politehttp/polite/parse"
)

func ExampleHeader() {
	// A GitHub response. The client's clock runs four minutes ahead of
	// the server's, but the epoch reset is measured from Date.
	h := http.Header{}
	h.Set("Date", "Tue, 07 Jun 2022 09:31:38 GMT")
	h.Set("X-RateLimit-Limit", "60")
	h.Set("X-RateLimit-Remaining", "59")
	h.Set("X-RateLimit-Reset", "1654597898")
	h.Set("X-RateLimit-Resource", "core")
	now := time.Date(2022, 6, 7, 9, 35, 38, 0, time.UTC)
	for _, q := range parse.Header(h, now) {
		fmt.Printf("%s %q: %d of %d %s left, reset in %v\n", q.Dialect, q.Policy, q.Remaining, q.Limit, q.Unit, q.Reset)
	}

	// An IETF pair: items join by name.
	h = http.Header{}
	h.Set("RateLimit-Policy", `"default";q=1200;w=300`)
	h.Set("RateLimit", `"default";r=1199;t=1`)
	for _, q := range parse.Header(h, now) {
		fmt.Printf("%s %q: %d of %d %s per %v left, for %v\n", q.Dialect, q.Policy, q.Remaining, q.Limit, q.Unit, q.Window, q.Reset)
	}
	// Output:
	// github "core": 59 of 60 requests left, reset in 1h0m0s
	// ietf "default": 1199 of 1200 requests per 5m0s left, for 1s
}

func ExamplePolicies() {
	h := http.Header{}
	h.Add("RateLimit-Policy", `"burst";q=100;w=60,"daily";q=1000;w=86400`)
	h.Add("RateLimit-Policy", `"bytes";q=65535;qu="content-bytes";w=10`)
	policies, err := parse.Policies(h.Values("RateLimit-Policy"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range policies {
		fmt.Printf("%s: %d %s per %v\n", p.Name, p.Quota, p.Unit, p.Window)
	}

	// A Token where the draft requires a String: the whole field is
	// malformed and must be ignored.
	_, err = parse.Policies([]string{`burst;q=100;w=60`})
	var fe *parse.FieldError
	fmt.Println(errors.Is(err, parse.ErrMalformed), errors.As(err, &fe) && fe.Member == 0)
	// Output:
	// burst: 100 requests per 1m0s
	// daily: 1000 requests per 24h0m0s
	// bytes: 65535 content-bytes per 10s
	// true true
}

func ExampleLimits() {
	limits, err := parse.Limits([]string{`"default";r=50;t=30, "daily";r=999`})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range limits {
		fmt.Printf("%s: %d left, reset %v\n", l.Name, l.Remaining, l.Reset)
	}

	// r is required.
	_, err = parse.Limits([]string{`"default";t=30`})
	fmt.Println(err)
	// Output:
	// default: 50 left, reset 30s
	// daily: 999 left, reset -1ns
	// parse: RateLimit: member 0: parameter r: required parameter missing
}

func ExampleHTTPDate() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range []string{
		"Sun, 06 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994",
		"Friday, 01-Jan-77 00:00:00 GMT", // 2077 is more than 50 years ahead
		"sun, 06 nov 1994 08:49:37 gmt",  // HTTP-date is case-sensitive
	} {
		t, ok := parse.HTTPDate(s, now)
		fmt.Println(t, ok)
	}
	// Output:
	// 1994-11-06 08:49:37 +0000 UTC true
	// 1994-11-06 08:49:37 +0000 UTC true
	// 1994-11-06 08:49:37 +0000 UTC true
	// 1977-01-01 00:00:00 +0000 UTC true
	// 0001-01-01 00:00:00 +0000 UTC false
}

func ExampleFromCache() {
	h := http.Header{}
	h.Set("RateLimit", `"default";r=5;t=30`)
	h.Set("Age", "42")
	if parse.FromCache(h) {
		fmt.Println("served from a cache: its rate-limit fields may be stale")
	}
	// Output:
	// served from a cache: its rate-limit fields may be stale
}

func ExampleReader() {
	// One Reader per server. The caller estimates the server's clock
	// from the Dates it has seen: here 400 ms past the last one, a finer
	// origin for the epoch reset than Date's whole second.
	var r parse.Reader
	h := http.Header{}
	h.Set("Date", "Sat, 01 Mar 2025 12:00:00 GMT")
	h.Set("RateLimit-Policy", `"default";q=100;w=60`) // read once, then remembered
	h.Set("RateLimit", `"default";r=5;t=30`)
	h.Set("X-RateLimit-Limit", "60")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", "1740830430") // 12:00:30 by the server's clock
	now := time.Date(2025, 3, 1, 11, 58, 0, 0, time.UTC)
	estimate := time.Date(2025, 3, 1, 12, 0, 0, 4e8, time.UTC)
	quotas, date := r.Read(h, now, estimate)
	for _, q := range quotas {
		fmt.Printf("%s %q: %d of %d left, reset in %v\n", q.Dialect, q.Policy, q.Remaining, q.Limit, q.Reset)
	}
	fmt.Println("Date:", date, "skew:", date.Sub(now))

	// An estimate a second or more after Date is wrong: Date wins.
	quotas, _ = r.Read(h, now, estimate.Add(time.Minute))
	fmt.Println(quotas[1].Reset)
	// Output:
	// ietf "default": 5 of 100 left, reset in 30s
	// x-ratelimit "": 0 of 60 left, reset in 29.6s
	// Date: 2025-03-01 12:00:00 +0000 UTC skew: 2m0s
	// 30s
}

func ExampleReader_AppendFresh() {
	// A client that reads every response of a server into one buffer,
	// and is done with the quotas before the next response, allocates
	// nothing to read them.
	var r parse.Reader
	var buf [4]parse.Quota
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for used := range 3 {
		h := http.Header{}
		h.Set("Date", "Sat, 01 Mar 2025 12:00:00 GMT")
		h.Set("RateLimit-Policy", `"default";q=3;w=60`)
		h.Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=30`, 2-used))
		quotas, _ := r.AppendFresh(buf[:0], h, now, time.Time{})
		for _, q := range quotas {
			fmt.Printf("%d of %d left, reset in %v\n", q.Remaining, q.Limit, q.Reset)
		}
	}
	// Output:
	// 2 of 3 left, reset in 30s
	// 1 of 3 left, reset in 30s
	// 0 of 3 left, reset in 30s
}
