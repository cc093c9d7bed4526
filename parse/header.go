package parse

import (
	"bytes"
	"net/http"
	"slices"
	"time"
)

// This file implements the normalisation contract of dialects.md §4: the
// field collection of §4.1, the output rules of §4.2 and the merging rules
// of §4.9. Each family lives in its own file.

// Header returns every quota that h describes. Absolute resets (epoch
// seconds or milliseconds, RFC 3339, HTTP-date) are measured from h's own
// Date header when it is valid, which cancels clock skew between client
// and server, and from now only when it is not.
//
// Header reads every dialect listed in the package documentation. Field
// names match case-insensitively and values are trimmed of optional white
// space. A value that is absent or invalid leaves its Quota field unknown
// (see [Quota]); a quota is reported when its limit or its remaining
// count is known. Quotas that two dialects report alike (same unit, equal
// limit and remaining, no conflicting window, reset, name or partition)
// are reported once, with the known fields of both. The order of the
// result is unspecified; it is nil when h describes no quota.
//
// Header reads only the header map it is given. Draft-11 forbids the
// RateLimit fields in trailers (D9), so callers pass resp.Header, never
// resp.Trailer. Header does not check whether the response came from a
// cache; see [FromCache].
//
// Header never fails: malformed fields are ignored. Vendor quirks it
// accepts on purpose are documented with their sources in the package
// source.
func Header(h http.Header, now time.Time) []Quota {
	// Most responses carry no rate-limit field at all: find out without
	// allocating before setting up the parser.
	found := false
	for k := range h {
		if slotOf(k) > sDate {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	var p parser
	var buf [8]Quota
	p.out = buf[:0]
	p.collect(h)
	p.now = now
	p.base = now
	if d := p.vals[sDate]; len(d) > 0 {
		if t, ok := HTTPDate(trimOWS(d[0]), now); ok {
			p.base = t
		}
	}

	// Families run in a fixed order: the result is deterministic, and when
	// quotas merge the earlier family's name survives.
	p.ietf(sRateLimitPolicy, sRateLimit, true)
	p.ietf(sBetaRateLimitPolicy, sBetaRateLimit, false)
	p.openAI()
	p.anthropic()
	p.unitFirst()
	p.kong()
	p.hubSpot()
	p.shopify()
	p.zendesk()
	p.twitter()
	p.xRateLimit()
	p.xDashRateLimit()
	p.draft06()

	if len(p.out) == 0 {
		return nil
	}
	return slices.Clone(p.out)
}

// parser holds the state of one Header call.
type parser struct {
	vals      [numSlots][]string // field lines by slot
	base, now time.Time          // origin of absolute resets; the caller's clock
	out       []Quota

	// Legacy unnamed policies and the draft-07 dictionary, read from the
	// RateLimit-Policy and RateLimit fields and merged with the
	// RateLimit-* triplet by draft06.
	unnamed []item
	dict    Quota
	hasDict bool
}

// collect files the field lines of h by slot. Should h hold the same field
// under names differing in case (never the case for a header from
// net/http), their lines are concatenated in name order, so that the
// result does not depend on map iteration order.
func (p *parser) collect(h http.Header) {
	var dup [numSlots]bool
	any := false
	for k, v := range h {
		s := slotOf(k)
		if s == sNone {
			continue
		}
		if p.vals[s] != nil {
			dup[s], any = true, true
			continue
		}
		p.vals[s] = v
	}
	if !any {
		return
	}
	var keys []string
	for s := range dup {
		if !dup[s] {
			continue
		}
		keys = keys[:0]
		for k := range h {
			if slotOf(k) == slot(s) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		var v []string
		for _, k := range keys {
			v = append(v, h[k]...)
		}
		p.vals[s] = v
	}
}

// add reports q unless it carries neither a limit nor a remaining count
// (dialects.md §4.3), merging it into an earlier quota of another family
// that reports the same thing (§4.9).
func (p *parser) add(q Quota) {
	if q.Limit < 0 && q.Remaining < 0 {
		return
	}
	for i := range p.out {
		if o := &p.out[i]; o.Dialect != q.Dialect && same(o, &q) {
			union(o, &q)
			return
		}
	}
	p.out = append(p.out, q)
}

// same reports whether two quotas of different families describe one
// policy: same unit, equal limit and equal remaining, and no conflicting
// window, reset, name or partition (dialects.md §4.9).
func same(a, b *Quota) bool {
	return a.Unit == b.Unit && a.Limit == b.Limit && a.Remaining == b.Remaining &&
		(a.Window == 0 || b.Window == 0 || a.Window == b.Window) &&
		(a.Reset < 0 || b.Reset < 0 || a.Reset == b.Reset) &&
		(a.Policy == "" || b.Policy == "" || a.Policy == b.Policy) &&
		(a.Partition == nil || b.Partition == nil || bytes.Equal(a.Partition, b.Partition))
}

// union copies into a the fields that only b knows.
func union(a, b *Quota) {
	if a.Window == 0 {
		a.Window = b.Window
	}
	if a.Reset < 0 {
		a.Reset = b.Reset
	}
	if a.Policy == "" {
		a.Policy = b.Policy
	}
	if a.Partition == nil {
		a.Partition = b.Partition
	}
}

// newQuota returns a Quota of the given dialect with every field unknown.
func newQuota(dialect string) Quota {
	return Quota{Unit: "requests", Limit: -1, Remaining: -1, Reset: -1, Dialect: dialect}
}

// present reports whether any of the slots holds a field.
func (p *parser) present(slots ...slot) bool {
	for _, s := range slots {
		if p.vals[s] != nil {
			return true
		}
	}
	return false
}

// count reads a single non-negative count from slot s; -1 when absent or
// invalid.
func (p *parser) count(s slot) int64 {
	v, ok := single(p.vals[s])
	if !ok {
		return -1
	}
	return count(v)
}

// reset reads a generic *-Reset field from slot s (magnitude rule, dates).
func (p *parser) reset(s slot) time.Duration {
	return reset(p.vals[s], p.base, p.now)
}

// firstByte returns the first byte of the field value after optional
// white space; 0 when the value is empty.
func firstByte(vals []string) byte {
	for _, v := range vals {
		if v = trimOWS(v); v != "" {
			return v[0]
		}
	}
	return 0
}

// text returns the single trimmed value of slot s; "" when absent or
// repeated.
func (p *parser) text(s slot) string {
	if len(p.vals[s]) != 1 {
		return ""
	}
	return trimOWS(p.vals[s][0])
}
