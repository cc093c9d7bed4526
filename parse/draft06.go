package parse

// This file reads RateLimit-{Limit,Remaining,Reset} of IETF drafts 03 to
// 06 and express-rate-limit draft-6, also sent by Kong, Zendesk, Bluesky,
// Heroku, Docker Hub, jambonz, Persona, ActiveCampaign, XIQ and GitLab (with RateLimit-ResetTime as a fallback reset and
// RateLimit-Name), and merges it with the unnamed RateLimit-Policy items
// and the draft-07 dictionary that rlfields.go found (§4.9).

// draft06 reads the RateLimit-* triplet and merges it with the unnamed
// policies and the draft-07 dictionary that ietf found.
func (p *parser) draft06() {
	dialect := "draft-06"
	if p.has(sName) || p.has(sObserved) || p.has(sResetTime) {
		dialect = "gitlab"
	}
	items := p.unnamed
	if !(p.has(sLimit) || p.has(sRemaining)) {
		if p.hasDict {
			p.legacy(p.dict, items)
			items = nil
		}
		p.legacy(newQuota(dialect), items)
		return
	}
	var buf [4]item
	cur, tail := tripletOf(dialect, p.get(sLimit), p.get(sRemaining), buf[:0])
	cur.Reset = p.reset(sReset)
	if cur.Reset < 0 {
		// GitLab's HTTP-date twin of its epoch RateLimit-Reset (row 8).
		cur.Reset = p.reset(sResetTime)
	}
	if dialect == "gitlab" {
		cur.Policy = textOf(p.get(sName))
	}
	if p.hasDict {
		// The unnamed policy's items go with the Dictionary, unless
		// only the triplet's current limit merges into one of them: a
		// policy of the triplet's limit, reported once, with its window
		// and what is left of it.
		if mergeInto(p.dict, items) >= 0 || mergeInto(cur, items) < 0 {
			p.legacy(p.dict, items)
			items = nil
		} else {
			p.legacy(p.dict, nil)
		}
	}
	p.legacy(cur, append(tail, items...))
}
