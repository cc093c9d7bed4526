package parse

import (
	"math"
	"strings"
)

// This file reads X-RateLimit-{Limit,Remaining,Reset,Used,Reset-After}
// of GitHub, Discord, Reddit, Envoy, Mastodon, Jira, OpenRouter, Dynatrace
// and most generic APIs.

// xRateLimit reads the X-RateLimit-* triplet.
func (p *parser) xRateLimit() {
	if !(p.has(sXLimit) || p.has(sXRemaining) || p.has(sXUsed)) {
		return
	}
	var buf [4]item
	cur, tail := tripletOf("x-ratelimit", p.get(sXLimit), p.get(sXRemaining), buf[:0])
	switch {
	case len(tail) > 0:
		cur.Dialect = "envoy"
	case p.has(sXResetAfter) || p.has(sXBucket):
		cur.Dialect = "discord"
		cur.Policy = textOf(p.get(sXBucket))
	case p.has(sXResource):
		cur.Dialect = "github"
		cur.Policy = textOf(p.get(sXResource))
		// The GraphQL API counts query cost in points (row 7).
		if len(cur.Policy) == len("graphql") && strings.EqualFold(cur.Policy, "graphql") {
			cur.Unit = "points"
		}
	case p.has(sXUsed) && !p.has(sXLimit):
		cur.Dialect = "reddit"
	}
	if cur.Limit < 0 && cur.Remaining >= 0 {
		// Reddit sends no limit: it is used + remaining.
		if used := countOf(p.get(sXUsed)); used >= 0 && used <= math.MaxInt64-cur.Remaining {
			cur.Limit = used + cur.Remaining
		}
	}
	// Discord: the delta Reset-After wins over the epoch Reset.
	cur.Reset = -1
	if p.has(sXResetAfter) {
		cur.Reset = deltaOf(p.get(sXResetAfter))
	}
	if cur.Reset < 0 {
		cur.Reset = p.reset(sXReset)
	}
	p.legacy(cur, tail)
}
