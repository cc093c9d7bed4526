package parse

import "time"

// This file reads the RateLimit and RateLimit-Policy fields for Header.
// They have had three incompatible syntaxes, told apart
// by the first byte of the value:
//
//   - '"': draft-08 and later (draft-11 §3, §4), read strictly by Policies
//     and Limits and joined by name; the Hugging Face quirk
//     is the only leniency (quirks.go).
//   - a digit, in RateLimit-Policy: the unnamed policies of drafts 03 to 07,
//     "100;w=60" (express-rate-limit, Bluesky, XIQ), merged with the
//     RateLimit-* triplet or the draft-07 dictionary by draft06.
//   - a key and "=", in RateLimit: the draft-07 Dictionary
//     "limit=100, remaining=25, reset=5" (express-rate-limit draft-7).
//
// Anything else is malformed and ignored (DESIGN.md §1.2). The Beta-
// prefixed pair (Jira) is read like the unprefixed one, without
// the legacy shapes.

// ietf reads one RateLimit-Policy / RateLimit pair. legacy enables the
// shapes of drafts 03 to 07.
func (p *parser) ietf(policySlot, limitSlot slot, legacy bool) {
	pv, lv := trimLines(p.get(policySlot)), trimLines(p.get(limitSlot))
	if pv == nil && lv == nil {
		return
	}
	c := firstByte(pv)
	if c == '"' && p.r != nil && len(pv) == 1 {
		p.join(p.r.policies(policySlot, pv[0]), lv, legacy)
		return
	}
	var pbuf [4]Policy
	var ps []Policy
	switch {
	case c == '"':
		ps = policiesOf(pbuf[:0], pv)
	case legacy && isDigit(c):
		p.unnamed = unnamedPolicies(pv)
	}
	p.join(ps, lv, legacy)
}

// join reads the RateLimit field lv of the policies ps and reports their
// quotas.
func (p *parser) join(ps []Policy, lv []string, legacy bool) {
	var lbuf [4]Limit
	var ls []Limit
	switch c := firstByte(lv); {
	case c == '"':
		ls = limitsOf(lbuf[:0], lv)
	case legacy && dictionaryLike(lv):
		p.dict, p.hasDict = dictionary(lv)
	}

	// Join by name only; unmatched items stand alone. Names are unique
	// within each field (DESIGN.md §1.6), so a limit joined to a policy
	// is joined to no other: joined marks the first 64 (ls
	// holds at most maxItems).
	var joined uint64
	for i := range ps {
		pol := &ps[i]
		q := policyQuota(pol)
		if j := indexLimit(ls, pol.Name); j >= 0 {
			if j < 64 {
				joined |= 1 << j
			}
			q.Remaining, q.Reset = ls[j].Remaining, ls[j].Reset
			if ls[j].Partition != nil {
				q.Partition = ls[j].Partition
			}
		}
		p.add(q)
	}
	for i := range ls {
		l := &ls[i]
		if i < 64 && joined&(1<<i) != 0 || i >= 64 && indexPolicy(ps, l.Name) >= 0 {
			continue
		}
		q := newQuota("ietf")
		q.Policy, q.Partition, q.Remaining, q.Reset = l.Name, l.Partition, l.Remaining, l.Reset
		p.add(q)
	}
}

// policiesOf appends to dst the policies of a RateLimit-Policy field of
// draft-08 and later, or of the Hugging Face quirk.
func policiesOf(dst []Policy, pv []string) []Policy {
	if len(pv) == 1 {
		if ps, ok := quickPolicies(dst, pv[0]); ok {
			return ps
		}
	}
	ps, err := appendPolicies(dst, pv)
	if err != nil {
		ps = quirkPolicies(dst, pv)
	}
	return ps
}

// limitsOf appends to dst the limits of a RateLimit field of draft-08 and
// later; none when it is malformed.
func limitsOf(dst []Limit, lv []string) []Limit {
	if len(lv) == 1 {
		if ls, ok := quickLimits(dst, lv[0]); ok {
			return ls
		}
	}
	ls, _ := appendLimits(dst, lv)
	return ls
}

// trimLines returns vals with each line trimmed of optional white space
// (RFC 9110 §5.6.3), which RFC 9651 parsing would otherwise reject when it
// is a tab. It allocates only when some line needs trimming.
func trimLines(vals []string) []string {
	for i, v := range vals {
		if v != "" && !isOWS(v[0]) && !isOWS(v[len(v)-1]) {
			continue
		}
		if trimOWS(v) != v {
			t := make([]string, len(vals))
			copy(t, vals[:i])
			for j := i; j < len(vals); j++ {
				t[j] = trimOWS(vals[j])
			}
			return t
		}
	}
	return vals
}

// An item is a quota policy of a legacy list: an unnamed RateLimit-Policy
// item of drafts 03 to 07, or a quota item after the current limit in a
// draft-03 or Envoy limit field.
type item struct {
	n    int64         // quota; ≥ 0
	w    time.Duration // window; 0 when not stated
	name string        // Envoy's name parameter; "" when absent
}

// unnamedPolicies reads a RateLimit-Policy field of drafts 03 to 07, a List
// of Integer items with an optional w (and an Envoy-style name). A field
// that breaks this shape is ignored. It keeps the first maxItems items.
func unnamedPolicies(vals []string) []item {
	c := sfScanner{s: joinLines(vals)}
	c.sp()
	var items []item
	for c.i < len(c.s) {
		v, ok := c.member()
		if !ok || v.kind != sfInteger || v.n < 0 {
			return nil
		}
		x := item{n: v.n}
		var w, name sfValue // the last value of each
		for {
			k, v, st := c.param()
			if st == paramError {
				return nil
			}
			if st == paramEnd {
				break
			}
			switch k {
			case "w":
				w = v
			case "name":
				name = v
			}
		}
		if w.kind != 0 {
			if w.kind != sfInteger || w.n <= 0 {
				return nil
			}
			x.w = seconds(w.n, 0)
		}
		if len(items) < maxItems {
			if name.kind == sfString {
				x.name = name.str()
			}
			items = append(items, x)
		}
		more, ok := c.next()
		if !ok {
			return nil
		}
		if !more {
			break
		}
	}
	return items
}

// dictionaryLike reports whether the value starts with a Dictionary key
// followed by "=", as the draft-07 RateLimit field does.
func dictionaryLike(vals []string) bool {
	for _, v := range vals {
		v = trimOWS(v)
		if v == "" {
			continue
		}
		if c := v[0]; !('a' <= c && c <= 'z' || c == '*') {
			return false
		}
		for i := 1; i < len(v); i++ {
			switch c := v[i]; {
			case c == '=':
				return true
			case 'a' <= c && c <= 'z', isDigit(c), c == '_', c == '-', c == '.', c == '*':
			default:
				return false
			}
		}
		return false
	}
	return false
}

// dictionary reads the draft-07 RateLimit Dictionary
// "limit=100, remaining=25, reset=5": limit is required, remaining and
// reset (delta seconds) optional, each a non-negative Integer. Other keys
// are comments. A field that breaks this shape is ignored.
func dictionary(vals []string) (Quota, bool) {
	c := sfScanner{s: joinLines(vals)}
	c.sp()
	var limit, remaining, reset sfValue // the last value of each
	for c.i < len(c.s) {
		k, ok := c.key()
		if !ok {
			return Quota{}, false
		}
		v := sfValue{kind: sfBoolean, n: 1} // a key alone is true
		if c.i < len(c.s) && c.s[c.i] == '=' {
			c.i++
			if v, ok = c.member(); !ok {
				return Quota{}, false
			}
		}
		if !c.skipParams() {
			return Quota{}, false
		}
		switch k {
		case "limit":
			limit = v
		case "remaining":
			remaining = v
		case "reset":
			reset = v
		}
		more, ok := c.next()
		if !ok {
			return Quota{}, false
		}
		if !more {
			break
		}
	}
	q := newQuota("draft-07")
	for _, v := range [...]*sfValue{&limit, &remaining, &reset} {
		if v.kind != 0 && (v.kind != sfInteger || v.n < 0) {
			return Quota{}, false
		}
	}
	if limit.kind != 0 {
		q.Limit = limit.n
	}
	if remaining.kind != 0 {
		q.Remaining = remaining.n
	}
	if reset.kind != 0 {
		q.Reset = seconds(reset.n, 0)
	}
	return q, q.Limit >= 0
}

// policyQuota returns the quota pol states, with no RateLimit joined to it
// yet: Remaining and Reset unknown (-1).
func policyQuota(pol *Policy) Quota {
	return Quota{
		Policy:    pol.Name,
		Partition: pol.Partition,
		Unit:      pol.Unit,
		Limit:     pol.Quota,
		Window:    pol.Window,
		Remaining: -1,
		Reset:     -1,
		Dialect:   "ietf",
	}
}
