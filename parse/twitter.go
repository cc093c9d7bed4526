package parse

import "time"

// This file reads the 24-hour windows of the X (Twitter) API v2.

var twitterScopes = [...]string{"app", "user"}

// twitter reads x-{app,user}-limit-24hour-{limit,remaining,reset}, the
// 24-hour windows of the X API v2; resets are
// epoch seconds. The 15-minute x-rate-limit-* triplet is read in xdashratelimit.go.
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
		q.Limit, q.Remaining, q.Reset = countOf(p.get(s)), countOf(p.get(s+1)), p.reset(s+2)
		p.add(q)
	}
}
