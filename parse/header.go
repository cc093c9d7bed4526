package parse

import (
	"bytes"
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"
)

// This file implements the rules of the package documentation
// ("Normalisation"): collecting the fields, the output, and merging the
// quotas of different families. Each family lives in its own file.

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
// limit and remaining, no conflicting window or reset) are reported once,
// with the known fields of both. The order of the
// result is unspecified; it is nil when h describes no quota.
//
// Header reads only the header map it is given. Draft-11 forbids the
// RateLimit fields in trailers (§3.1, §4.1; DESIGN.md §1.9), so callers
// pass resp.Header, never resp.Trailer. Header does not check whether the response came from a
// cache; see [FromCache].
//
// Header never fails: malformed fields are ignored. Vendor quirks it
// accepts on purpose are documented with their sources in the package
// source. It reports at most 32 quotas, and takes time linear in the size
// of h (see the package documentation).
func Header(h http.Header, now time.Time) []Quota {
	return HeaderAt(h, now, time.Time{})
}

// HeaderAt is like [Header], but measures absolute resets from date, the
// instant the response was generated as the caller best knows it, instead
// of from the response's Date header. A Date header has whole seconds, so
// the instant a response was generated can be up to a second after it; a
// caller that has estimated the server's clock finer than that (for
// instance from the highest Date-minus-local-time seen so far, which
// approaches the offset between the clocks from below) gets resets that
// are still never shorter than the truth, but less padded. If date is the
// zero time, HeaderAt is Header. A [Reader] keeps such an estimate in
// check against each response's Date.
func HeaderAt(h http.Header, now, date time.Time) []Quota {
	quotas, _ := read(nil, h, now, date, nil, false, true)
	return quotas
}

// read is HeaderAt when r is nil, and [Reader.Read] when it is not, with
// date as the caller's estimate, appending the quotas to dst. If fresh, it
// returns no quotas for a response from a cache, as [Reader.ReadFresh]
// documents. quick enables the fast path of quickread.go; the tests
// disable it to read by the general path, the reference.
func read(dst []Quota, h http.Header, now, date time.Time, r *Reader, fresh, quick bool) ([]Quota, time.Time) {
	// Most responses carry no rate-limit field at all. One pass over the
	// names finds the fields without allocating; the parser is set up only
	// when there is one.
	// The loop keeps its state in q, in memory: in registers, it would be
	// saved and restored around every call to the map's iterator.
	var q quickFields // the fields found, filed by slot for q.read
	for k, v := range h {
		var s slot
		switch {
		case k == "Date": // on every response
			s = sDate
		case !candidate(k):
			if fresh && len(k) == 3 && (k == "Age" || strings.EqualFold(k, "Age")) {
				q.aged = true // what ageValues reads
			}
			continue
		case len(k) > len("X-Ratelimit-") && k[:len("X-Ratelimit-")] == "X-Ratelimit-":
			// The prefix of the names of the common families, each
			// classified by its rest.
			if s = xRatelimitSlot(k[len("X-Ratelimit-"):]); s == sNone {
				s = slotOf(k)
			}
		default:
			s = slotOf(k)
		}
		if s != sNone {
			q.add(s, v)
		}
	}
	n := q.n
	switch rate := q.set&^(1<<sDate) != 0; {
	case fresh && q.aged && fromCache(ageValues(h)):
		return dst, time.Time{} // from a cache: nothing to read
	case rate || r != nil && n > 1:
		var quotas []Quota
		var served time.Time
		ok := false
		if quick && n <= len(q.vals) && q.set < qOther {
			quotas, served, ok = q.read(dst, now, date, r)
		}
		if !ok {
			quotas, served = header(dst, h, now, date, &q, r)
		}
		if fresh && len(quotas) == len(dst) {
			return dst, time.Time{}
		}
		return quotas, served
	case r != nil && n == 1 && !fresh:
		return dst, r.date(q.vals[0], now, !date.IsZero()) // only a Date
	}
	return dst, time.Time{}
}

// grow returns dst extended by n quotas, and the n added, which the
// caller sets: in dst's own array when it has room, else in a new one of
// exactly that length, as Header has always returned (two callers
// appending to one result get arrays of their own).
func grow(dst []Quota, n int) (all, added []Quota) {
	if cap(dst)-len(dst) >= n {
		all = dst[:len(dst)+n]
	} else {
		all = make([]Quota, len(dst)+n)
		copy(all, dst)
	}
	return all, all[len(dst):]
}

// A field is the value of a header field that some family reads.
type field struct {
	s slot
	v []string
}

// header is read once the fields of q have been found, appending the
// quotas to dst.
func header(dst []Quota, h http.Header, now, date time.Time, q *quickFields, r *Reader) ([]Quota, time.Time) {
	var p parser
	p.now, p.r = now, r
	// Copy the fields rather than point at them: escape analysis would
	// otherwise move q to the heap for every response. Only the n found
	// are copied, one by one: p is on the stack, so this needs no write
	// barrier.
	n := q.n
	for i := range min(n, len(q.vals)) {
		p.found[i] = field{q.slots[i], q.vals[i]}
	}
	if n > len(q.vals) || !p.index(p.found[:n]) {
		p.collect(h)
	}
	var served time.Time // the response's Date, for a Reader
	if r != nil {
		served = r.date(p.get(sDate), now, !date.IsZero())
		date = origin(now, date, served)
	}
	if !date.IsZero() {
		p.dated, p.base = true, date
	}

	// Families run in a fixed order: the result is deterministic, and when
	// quotas merge the earlier family's name survives. Absent families are
	// skipped.
	f := p.families
	if f&fIETF != 0 {
		p.ietf(sRateLimitPolicy, sRateLimit, true)
		p.settle()
	}
	if f&fBeta != 0 {
		p.ietf(sBetaRateLimitPolicy, sBetaRateLimit, false)
		p.settle()
	}
	if f&fOpenAI != 0 {
		p.openAI()
		p.settle()
	}
	if f&fAnthropic != 0 {
		p.anthropic()
		p.settle()
	}
	if f&fUnitFirst != 0 {
		p.unitFirst()
		p.settle()
	}
	if f&fKong != 0 {
		p.kong()
		p.settle()
	}
	if f&fHubSpot != 0 {
		p.hubSpot()
		p.settle()
	}
	if f&fShopify != 0 {
		p.shopify()
		p.settle()
	}
	if f&fZendesk != 0 {
		p.zendesk()
		p.settle()
	}
	if f&fTwitter != 0 {
		p.twitter()
		p.settle()
	}
	if f&fX != 0 {
		p.xRateLimit()
		p.settle()
	}
	if f&fDash != 0 {
		p.xDashRateLimit()
		p.settle()
	}
	if f&fDraft06 != 0 || p.unnamed != nil || p.hasDict {
		p.draft06()
		p.settle()
	}

	if p.n == 0 {
		return dst, served
	}
	// Element by element: for the few quotas of a response, cheaper than
	// copy's bulk write barrier.
	all, out := grow(dst, p.n)
	for i := range out {
		out[i] = *p.quota(i)
	}
	return all, served
}

// parser holds the state of one Header call.
type parser struct {
	// The fields found, by slot: idx holds 1 + the index of each slot's
	// field in found, or in collected once collect has run; 0 when absent.
	idx       [numSlots]uint8
	families  uint32 // the families with a field
	found     [16]field
	collected []field
	now       time.Time // the caller's clock
	base      time.Time // origin of absolute resets, once dated
	dated     bool      // base is set
	r         *Reader   // remembers policies; nil for Header and HeaderAt

	// The quotas reported so far: the first few in an array that stays on
	// the stack, the rest in more.
	quotas [4]Quota
	more   []Quota
	n      int

	// The quotas of the family being read, which settle files: the first
	// few in an array, the rest in stageMore.
	stage     [4]Quota
	stageMore []Quota
	staged    int

	// Legacy unnamed policies and the draft-07 dictionary, read from the
	// RateLimit-Policy and RateLimit fields and merged with the
	// RateLimit-* triplet by draft06.
	unnamed []item
	dict    Quota
	hasDict bool
}

// index files the found fields by slot. It reports false when one field
// appears under names differing in case; collect must then run.
func (p *parser) index(found []field) bool {
	for i, f := range found {
		if p.idx[f.s] != 0 {
			return false
		}
		p.idx[f.s] = uint8(i + 1)
		p.families |= family(f.s)
	}
	return true
}

// get returns the field lines of slot s; nil when absent.
func (p *parser) get(s slot) []string {
	i := int(p.idx[s]) - 1
	switch {
	case i < 0:
		return nil
	case p.collected != nil:
		return p.collected[i].v
	default:
		return p.found[i].v
	}
}

// origin returns the instant absolute resets are measured from: the
// response's Date when it is a valid HTTP-date, which cancels clock skew
// between client and server, else the caller's clock. A Date repeated over
// several lines counts by its first, and so does one repeated on one line
// (see dateLine).
func (p *parser) origin() time.Time {
	if !p.dated {
		p.dated, p.base = true, p.now
		if d := p.get(sDate); len(d) > 0 {
			if t, ok := HTTPDate(dateLine(d[0]), p.now); ok {
				p.base = t
			}
		}
	}
	return p.base
}

// collect files the field lines of h by slot. Should h hold the same field
// under names differing in case (never the case for a header from
// net/http), their lines are concatenated in name order, so that the
// result does not depend on map iteration order.
func (p *parser) collect(h http.Header) {
	p.idx = [numSlots]uint8{}
	p.families = 0
	var fields []field
	dup := false
	for k, v := range h {
		s := slotOf(k)
		switch {
		case s == sNone:
		case p.idx[s] != 0:
			dup = true
		default:
			fields = append(fields, field{s, v})
			p.idx[s] = uint8(len(fields))
			p.families |= family(s)
		}
	}
	p.collected = fields
	if !dup {
		return
	}
	// One sort of the names read, by slot and then by name, keeps this
	// within n log n of the names of a hand-built map.
	type name struct {
		s slot
		k string
	}
	var names []name
	for k := range h {
		if s := slotOf(k); s != sNone {
			names = append(names, name{s, k})
		}
	}
	slices.SortFunc(names, func(a, b name) int {
		if a.s != b.s {
			return int(a.s) - int(b.s)
		}
		return strings.Compare(a.k, b.k)
	})
	for i := 0; i < len(names); {
		j := i + 1
		for j < len(names) && names[j].s == names[i].s {
			j++
		}
		if j-i > 1 {
			f := &fields[p.idx[names[i].s]-1]
			f.v = nil
			for _, n := range names[i:j] {
				f.v = append(f.v, h[n.k]...)
			}
		}
		i = j
	}
}

// maxQuotas is the number of quotas Header reports at most; families are
// read in a fixed order, and the quotas past the first maxQuotas are
// dropped. With maxItems, it bounds the work of add, which compares each
// new quota with those before it.
const maxQuotas = 32

// add reports q unless it carries neither a limit nor a remaining count:
// it is staged until its family has been read (see settle).
func (p *parser) add(q Quota) {
	if q.Limit < 0 && q.Remaining < 0 {
		return
	}
	if p.staged < len(p.stage) {
		p.stage[p.staged] = q
	} else {
		p.stageMore = append(p.stageMore, q)
	}
	p.staged++
}

// settle files the quotas of the family just read (see file). When
// quotas of another dialect may be joined (an earlier family's, or the
// draft-07 dictionary among legacy items), they are filed in order's order,
// not as they were listed: which of them joins which quota, and so learns
// its window or reset, does not hang on the members' order.
func (p *parser) settle() {
	st := p.stage[:min(p.staged, len(p.stage))]
	if p.staged > len(p.stage) {
		st = append(st[:len(st):len(st)], p.stageMore...) // past a few, rare: a copy
	}
	if len(st) > 1 && (p.n > 0 || slices.ContainsFunc(st[1:], func(q Quota) bool { return q.Dialect != st[0].Dialect })) {
		slices.SortStableFunc(st, func(a, b Quota) int { return order(&a, &b) })
	}
	for i := range st {
		p.file(st[i])
	}
	p.staged, p.stageMore = 0, p.stageMore[:0]
}

// file reports q, merging it into an earlier quota of another family that
// reports the same thing (see same); the earlier quota keeps its name.
// Past maxQuotas quotas, it drops q.
func (p *parser) file(q Quota) {
	// Of several it may describe, the one that agrees on the most of what
	// both know, then the first in order's order: not the first listed,
	// so that which learns q's window or reset does not hang on the
	// members' order.
	var best *Quota
	score := -1
	for i := range p.n {
		if o := p.quota(i); o.Dialect != q.Dialect && same(o, &q) {
			n := agreed(o, &q)
			if n > score || n == score && order(o, best) < 0 {
				best, score = o, n
			}
		}
	}
	if best != nil {
		union(best, &q)
		return
	}
	if p.n == maxQuotas {
		return
	}
	if p.n < len(p.quotas) {
		p.quotas[p.n] = q
	} else {
		p.more = append(p.more, q)
	}
	p.n++
}

// quota returns the i-th quota reported so far.
func (p *parser) quota(i int) *Quota {
	if i < len(p.quotas) {
		return &p.quotas[i]
	}
	return &p.more[i-len(p.quotas)]
}

// same reports whether two quotas of different families describe one
// policy: same unit, equal limit and equal remaining, and no conflicting
// window or reset (package documentation, "Normalisation"). Names and
// partition keys do not
// count: a name from one family's metadata does not make a policy distinct.
func same(a, b *Quota) bool {
	return a.Unit == b.Unit && a.Limit == b.Limit && a.Remaining == b.Remaining &&
		(a.Window == 0 || b.Window == 0 || a.Window == b.Window) &&
		(a.Reset < 0 || b.Reset < 0 || a.Reset == b.Reset)
}

// order orders quotas by their fields, whatever the order they were
// listed in: the first name, then the shortest window known, the earliest
// reset known, the lowest limit and remaining count, and the first unit,
// partition key and dialect. It picks the quota another joins of those it
// could join alike, and the order in which a family's quotas join those of
// earlier families. Quotas equal in all of these are alike, and either may
// be joined or join first.
func order(a, b *Quota) int {
	return cmp.Or(
		strings.Compare(a.Policy, b.Policy),
		knownFirst(a.Window > 0, b.Window > 0), cmp.Compare(a.Window, b.Window),
		knownFirst(a.Reset >= 0, b.Reset >= 0), cmp.Compare(a.Reset, b.Reset),
		cmp.Compare(a.Limit, b.Limit), cmp.Compare(a.Remaining, b.Remaining),
		strings.Compare(a.Unit, b.Unit),
		bytes.Compare(a.Partition, b.Partition),
		strings.Compare(a.Dialect, b.Dialect),
	)
}

// knownFirst orders a field known before one unknown, as cmp.Compare
// does: -1 when only a's is known, 1 when only b's, 0 otherwise.
func knownFirst(a, b bool) int {
	switch {
	case a && !b:
		return -1
	case b && !a:
		return 1
	}
	return 0
}

// agreed counts the fields of window and reset that a and b both know,
// and equal.
func agreed(a, b *Quota) int {
	n := 0
	if a.Window != 0 && a.Window == b.Window {
		n++
	}
	if a.Reset >= 0 && a.Reset == b.Reset {
		n++
	}
	return n
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

// has reports whether slot s holds a field.
func (p *parser) has(s slot) bool { return p.idx[s] != 0 }

// countOf reads a single non-negative count from the field lines vals;
// -1 when absent or invalid.
func countOf(vals []string) int64 {
	if n, ok := quickCount(vals); ok {
		return n
	}
	v, ok := single(vals)
	if !ok {
		return -1
	}
	return count(v)
}

// reset reads a generic *-Reset field from slot s (magnitude rule, dates).
func (p *parser) reset(s slot) time.Duration {
	if p.get(s) == nil {
		return -1
	}
	return reset(p.get(s), p.origin(), p.now)
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

// textOf returns the single trimmed value of the field lines vals, a name;
// "" when absent or repeated, over several lines or on one joined by a
// comma: no dialect's names hold one.
func textOf(vals []string) string {
	if len(vals) != 1 || strings.IndexByte(vals[0], ',') >= 0 {
		return ""
	}
	return trimOWS(vals[0])
}
