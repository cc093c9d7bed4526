package parse

import "strings"

// This file reads Zendesk's zendesk-ratelimit-tickets-index.

// zendesk reads zendesk-ratelimit-tickets-index:
// "total=100; remaining=99; resets=41", resets in delta seconds
// Unknown keys are skipped.
// Source: https://developer.zendesk.com/documentation/api-basics/best-practices/best-practices-for-avoiding-rate-limiting
func (p *parser) zendesk() {
	v, ok := single(p.get(sZendeskTickets))
	if !ok {
		return
	}
	q := newQuota("zendesk")
	q.Policy = "tickets-index"
	for v = skipEmpty(v, ';'); v != ""; v = skipEmpty(v, ';') {
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
