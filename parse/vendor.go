package parse

import (
	"math"
	"strings"
	"time"
)

// This file reads the single-vendor families of dialects.md §4.10 whose
// headers state a window (§3.6, §4.6) or use their own value syntax.

// Period suffixes of Kong and Tomorrow.io, an explicit vocabulary
// (dialects.md §3.7, §4.6). A month is 30 days and a year 365 days.
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

// kong reads X-RateLimit-{Limit,Remaining}-<period> (dialects.md §2 rows
// 41–42), one quota per period. The RateLimit-* triplet Kong sends beside
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
		q.Limit, q.Remaining = p.count(s), p.count(s+1)
		p.add(q)
	}
}

// hubSpot reads X-HubSpot-RateLimit-* (dialects.md §2 row 33): the rolling
// Max/Remaining over Interval-Milliseconds, and the Daily and Secondly
// pairs sent to API-key and private apps. No reset is sent.
// Source: developers.hubspot.com changelog 2018-11-06 "Rate limit
// information headers will be included in HTTP responses".
func (p *parser) hubSpot() {
	if p.has(sHubSpotMax) || p.has(sHubSpotRemaining) {
		q := newQuota("hubspot")
		q.Limit, q.Remaining = p.count(sHubSpotMax), p.count(sHubSpotRemaining)
		if v, ok := single(p.get(sHubSpotInterval)); ok {
			if w, n, st := decimal(v); st == numOK {
				q.Window = millis(w, n)
			}
		}
		p.add(q)
	}
	if p.has(sHubSpotDaily) || p.has(sHubSpotDailyRemaining) {
		q := newQuota("hubspot")
		q.Policy, q.Window = "daily", 24*time.Hour
		q.Limit, q.Remaining = p.count(sHubSpotDaily), p.count(sHubSpotDailyRemaining)
		p.add(q)
	}
	if p.has(sHubSpotSecondly) || p.has(sHubSpotSecondlyRemaining) {
		q := newQuota("hubspot")
		q.Policy, q.Window = "secondly", time.Second
		q.Limit, q.Remaining = p.count(sHubSpotSecondly), p.count(sHubSpotSecondlyRemaining)
		p.add(q)
	}
}

// millis converts whole milliseconds plus nano billionths of one to a
// Duration, saturating.
func millis(whole, nano int64) time.Duration {
	if whole > (math.MaxInt64-nano/1e3)/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(whole)*time.Millisecond + time.Duration(nano/1e3)
}

// shopify reads X-Shopify-Shop-Api-Call-Limit: "32/40" is used/bucket, so
// 8 calls remain (dialects.md §2 row 18, §4.8). The leaky bucket has no
// reset and no window.
// Source: https://shopify.dev/docs/api/admin-rest/usage/rate-limits
func (p *parser) shopify() {
	v, ok := single(p.get(sShopify))
	if !ok {
		return
	}
	u, b, ok := strings.Cut(v, "/")
	used, bucket := count(u), count(b)
	if !ok || used < 0 || bucket < 0 {
		return
	}
	q := newQuota("shopify")
	q.Limit, q.Remaining = bucket, max(bucket-used, 0)
	p.add(q)
}

// zendesk reads zendesk-ratelimit-tickets-index:
// "total=100; remaining=99; resets=41", resets in delta seconds
// (dialects.md §2 row 32). Unknown keys are skipped.
// Source: https://developer.zendesk.com/documentation/api-basics/best-practices/best-practices-for-avoiding-rate-limiting
func (p *parser) zendesk() {
	v, ok := single(p.get(sZendeskTickets))
	if !ok {
		return
	}
	q := newQuota("zendesk")
	q.Policy = "tickets-index"
	for v != "" {
		var kv string
		kv, v, _ = strings.Cut(v, ";")
		k, val, _ := strings.Cut(trimOWS(kv), "=")
		switch trimOWS(k) {
		case "total":
			q.Limit = count(val)
		case "remaining":
			q.Remaining = count(val)
		case "resets":
			q.Reset = deltaSeconds(val)
		}
	}
	p.add(q)
}

var twitterScopes = [...]string{"app", "user"}

// twitter reads x-{app,user}-limit-24hour-{limit,remaining,reset}, the
// 24-hour windows of the X API v2 (dialects.md §2 row 17, §4.6); resets are
// epoch seconds. The 15-minute x-rate-limit-* triplet is read in triplet.go.
// Source: docs quoted in xdevplatform/twitter-api-typescript-sdk#68 and
// PLhery/node-twitter-api-v2#495.
func (p *parser) twitter() {
	for i, scope := range twitterScopes {
		s := sTwitter + slot(3*i) // limit, remaining, reset
		if !(p.has(s) || p.has(s+1)) {
			continue
		}
		q := newQuota("twitter")
		q.Policy, q.Window = scope, 24*time.Hour
		q.Limit, q.Remaining, q.Reset = p.count(s), p.count(s+1), p.reset(s+2)
		p.add(q)
	}
}
