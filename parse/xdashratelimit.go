package parse

// This file reads X-Rate-Limit-{Limit,Remaining,Reset}: Okta, Twitter/X's
// 15-minute window, Prisjakt, and Zendesk's bare X-Rate-Limit, which
// counts as a limit.

// xDashRateLimit reads the X-Rate-Limit-* triplet.
func (p *parser) xDashRateLimit() {
	if !(p.has(sDashLimit) || p.has(sDashLimitBare) || p.has(sDashRemaining)) {
		return
	}
	limit := sDashLimit
	if p.get(sDashLimit) == nil {
		limit = sDashLimitBare // Zendesk's X-Rate-Limit counts as a limit
	}
	var buf [4]item
	cur, tail := tripletOf("x-rate-limit", p.get(limit), p.get(sDashRemaining), buf[:0])
	cur.Reset = p.reset(sDashReset)
	p.legacy(cur, tail)
}
