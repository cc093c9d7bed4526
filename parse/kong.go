package parse

import "time"

// This file reads the period suffixes of Kong and Tomorrow.io.

// Period suffixes of Kong and Tomorrow.io, an explicit vocabulary (package
// documentation, "Normalisation"). A month is 30 days and a year 365 days.
var periods = [...]struct {
	name   string
	window time.Duration
}{
	{"second", time.Second},
	{"minute", time.Minute},
	{"hour", time.Hour},
	{"day", 24 * time.Hour},
	{"month", 30 * 24 * time.Hour},
	{"year", 365 * 24 * time.Hour},
}

// kong reads X-RateLimit-{Limit,Remaining}-<period>, one quota per
// period. The RateLimit-* triplet Kong sends beside
// them repeats the period with the lowest remaining count and merges into
// it. Kong's response-ratelimiting names (X-RateLimit-Limit-Videos-Minute)
// are not read.
// Source: Kong/kong kong/plugins/rate-limiting/handler.lua;
// https://docs.tomorrow.io/reference/rate-limiting
func (p *parser) kong() {
	for i, period := range periods {
		s := sKong + slot(2*i) // limit, remaining
		if !(p.has(s) || p.has(s+1)) {
			continue
		}
		q := newQuota("kong")
		q.Policy, q.Window = period.name, period.window
		q.Limit, q.Remaining = countOf(p.get(s)), countOf(p.get(s+1))
		p.add(q)
	}
}
