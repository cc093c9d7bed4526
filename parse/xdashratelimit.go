package parse

// This file reads X-Rate-Limit-{Limit,Remaining,Reset} (dialects.md
// §4.10): Okta (row 25), Twitter/X's 15-minute window (row 17), Prisjakt
// (row 50), and Zendesk's bare X-Rate-Limit, which counts as a limit (row
// 32).

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
	cur, tail := p.triplet("x-rate-limit", limit, sDashRemaining, buf[:0])
	cur.Reset = p.reset(sDashReset)
	p.legacy(cur, tail)
}
