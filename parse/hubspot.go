package parse

import (
	"math"
	"time"
)

// This file reads HubSpot's X-HubSpot-RateLimit-* fields.

// hubSpot reads X-HubSpot-RateLimit-*: the rolling
// Max/Remaining over Interval-Milliseconds, and the Daily and Secondly
// pairs sent to API-key and private apps. No reset is sent.
// Source: developers.hubspot.com changelog 2018-11-06 "Rate limit
// information headers will be included in HTTP responses".
func (p *parser) hubSpot() {
	if p.has(sHubSpotMax) || p.has(sHubSpotRemaining) {
		q := newQuota("hubspot")
		q.Limit, q.Remaining = countOf(p.get(sHubSpotMax)), countOf(p.get(sHubSpotRemaining))
		if v, ok := single(p.get(sHubSpotInterval)); ok {
			// Whole milliseconds, as HubSpot sends them (10000): a
			// window below one would state an unbounded pace.
			if w, n, st := decimal(v); st == numOK && w > 0 {
				q.Window = millis(w, n)
			}
		}
		p.add(q)
	}
	if p.has(sHubSpotDaily) || p.has(sHubSpotDailyRemaining) {
		q := newQuota("hubspot")
		q.Policy, q.Window = "daily", 24*time.Hour
		q.Limit, q.Remaining = countOf(p.get(sHubSpotDaily)), countOf(p.get(sHubSpotDailyRemaining))
		p.add(q)
	}
	if p.has(sHubSpotSecondly) || p.has(sHubSpotSecondlyRemaining) {
		q := newQuota("hubspot")
		q.Policy, q.Window = "secondly", time.Second
		q.Limit, q.Remaining = countOf(p.get(sHubSpotSecondly)), countOf(p.get(sHubSpotSecondlyRemaining))
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
