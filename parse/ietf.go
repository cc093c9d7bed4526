package parse

import (
	"math/bits"
	"strings"
	"time"
)

// This file implements the strict readers of the IETF RateLimit fields,
// draft-ietf-httpapi-ratelimit-headers-11 §3 (RateLimit-Policy) and §4
// (RateLimit), with the decisions §1.1–§1.6 of DESIGN.md, on the
// RFC 9651 scanner of sfv.go:
// https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/
// https://www.rfc-editor.org/rfc/rfc9651

// Field names of draft-11.
const (
	policyField = "RateLimit-Policy"
	limitField  = "RateLimit"
)

// A Policy is one quota policy item of a RateLimit-Policy field
// (draft-11 §3.1).
type Policy struct {
	// Name is the policy identifier, a String (DESIGN.md §1.1).
	Name string

	// Quota is q, the quota units the policy allocates per window and
	// partition. It is never negative.
	Quota int64

	// Unit is qu, the quota unit: "requests" when absent. The registry's
	// spelling "request" reads as "requests" (DESIGN.md §1.4); any other
	// String is kept verbatim.
	Unit string

	// UnknownUnit reports that Unit is not one of the units draft-11
	// defines ("requests", "content-bytes", "concurrent-requests"). Such a
	// policy is kept for callers to inspect but says nothing about request
	// pacing (DESIGN.md §1.3).
	UnknownUnit bool

	// Window is w, the time window, in whole seconds; 0 when absent.
	// A window too long for a Duration saturates at the largest Duration.
	Window time.Duration

	// Partition is pk, the partition key; nil when absent.
	Partition []byte
}

// A Limit is one service limit item of a RateLimit field (draft-11 §4.1).
type Limit struct {
	// Name identifies the policy the limit belongs to, a String
	// (DESIGN.md §1.1).
	Name string

	// Remaining is r, the available quota in the policy's quota units. It
	// is never negative.
	Remaining int64

	// Reset is t, the effective window: the time, in whole seconds, within
	// which no more than Remaining may be used; -1 when absent. It
	// saturates at the largest Duration.
	Reset time.Duration

	// Partition is pk, the partition key; nil when absent.
	Partition []byte
}

// Policies parses the field lines of a RateLimit-Policy field, as returned
// by [net/http.Header.Values], under draft-11 §3: a List of Items, each a
// String identifier with a non-negative Integer q (required), a non-empty String qu,
// a positive Integer w and a Byte Sequence pk. Unknown parameters are
// comments and are skipped. When an identifier repeats, the most
// restrictive item is kept, whatever their order: one with a window before
// one without, the lowest q/w, and of equal q/w the lowest q (DESIGN.md
// §1.6).
// Of a field with more than 32 distinct identifiers, the policies of the
// first 32 are returned (see the package documentation).
//
// Policies returns nil and no error when there are no field lines, or one
// that is empty. Several lines are combined as RFC
// 9110 §5.3 says, joined by ", ": an empty line among them leaves an empty
// list member, which RFC 9651 rejects, and the field is malformed. A field that is not a valid RFC 9651 List or that breaks any
// of the rules above is malformed as a whole: Policies returns nil and a
// *[FieldError] matching [ErrMalformed].
func Policies(values []string) ([]Policy, error) {
	ps, err := appendPolicies(nil, values)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps, nil
}

// Limits parses the field lines of a RateLimit field, as returned by
// [net/http.Header.Values], under draft-11 §4: a List of Items, each a
// String identifier with a non-negative Integer r (required), a
// non-negative Integer t and a Byte Sequence pk. Unknown parameters are
// comments and are skipped. When an identifier repeats, the most
// restrictive item is kept, the one with the lowest r (DESIGN.md §1.6).
// Of a field with more than 32 distinct identifiers, the limits of the
// first 32 are returned.
//
// Limits returns nil and no error when there are no field lines, or one
// that is empty. Several lines are combined as RFC
// 9110 §5.3 says, joined by ", ": an empty line among them leaves an empty
// list member, which RFC 9651 rejects, and the field is malformed. A field that is not a valid RFC 9651 List or that breaks any
// of the rules above is malformed as a whole: Limits returns nil and a
// *[FieldError] matching [ErrMalformed].
func Limits(values []string) ([]Limit, error) {
	ls, err := appendLimits(nil, values)
	if err != nil || len(ls) == 0 {
		return nil, err
	}
	return ls, nil
}

// maxItems is the number of distinct identifiers that Policies and Limits
// keep of one field, and the number of quota items Header keeps of one
// legacy list. Later items are still checked, so that a malformed one
// makes the field malformed, and a later item repeating a kept identifier
// still competes with it (DESIGN.md §1.6); items with new identifiers are
// dropped.
// The budget of package polite keeps fewer policies per origin than this;
// the cap bounds the work and memory a hostile field can cost.
const maxItems = 32

// joinLines returns the field lines of a field as one value, joined by
// ", " (RFC 9110 §5.3); it allocates only when there are several.
func joinLines(values []string) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return values[0]
	}
	return strings.Join(values, ", ")
}

// A fault is the first member of a field that breaks the draft; it is
// reported only when the whole field is a valid List.
type fault struct {
	member int
	param  string
	err    error // nil: no fault
}

// members reads the List of the named field in c, calling item on each
// member whose identifier is a String, with its index, until one is at
// fault; the members after a fault are only checked for syntax. item
// reports the member's fault and whether its syntax was sound. members
// returns the field's error: ErrSyntax for a List that does not parse,
// else the first fault, else nil. An identifier that is not a String (an
// Inner List, a Token, a number) is a fault (DESIGN.md §1.1).
func (c *sfScanner) members(field string, item func(v sfValue, i int) (fault, bool)) error {
	c.sp()
	var bad fault
	for i := 0; c.i < len(c.s); i++ {
		v, ok := c.member()
		switch {
		case !ok:
		case bad.err != nil:
			ok = c.skipParams()
		case v.kind != sfString:
			bad = fault{i, "", ErrInvalid}
			ok = c.skipParams()
		default:
			bad, ok = item(v, i)
		}
		more := false
		if ok {
			more, ok = c.next()
		}
		if !ok {
			return &FieldError{Field: field, Member: -1, Err: ErrSyntax}
		}
		if !more {
			break
		}
	}
	if bad.err != nil {
		return &FieldError{Field: field, Member: bad.member, Param: bad.param, Err: bad.err}
	}
	return nil
}

// appendPolicies is Policies appending to dst; on error it returns dst
// unchanged.
func appendPolicies(dst []Policy, values []string) ([]Policy, error) {
	c := sfScanner{s: joinLines(values)}
	n := len(dst)
	var names nameIndex
	err := c.members(policyField, func(v sfValue, i int) (fault, bool) {
		p, pk, bad, ok := c.policy(v, i)
		if ok && bad.err == nil {
			dst = keepPolicy(dst, n, &names, i, p, pk)
		}
		return bad, ok
	})
	if err != nil {
		return dst[:n], err
	}
	// Names and units were kept as they were written, escapes included,
	// which compares Strings as well as their values do (only \" and \\
	// are escapes); decode the few that hold escapes.
	for i := n; i < len(dst); i++ {
		if strings.IndexByte(dst[i].Name, '\\') >= 0 {
			dst[i].Name = unescape(dst[i].Name)
		}
		if strings.IndexByte(dst[i].Unit, '\\') >= 0 {
			dst[i].Unit = unescape(dst[i].Unit)
		}
	}
	return dst, nil
}

// policy reads the parameters of the i-th member of a RateLimit-Policy
// field, whose identifier is the String name. Name and Unit are returned
// as written, escapes included, and the partition key undecoded in pk.
// ok is false on a syntax error.
func (c *sfScanner) policy(name sfValue, i int) (p Policy, pk sfValue, bad fault, ok bool) {
	// q, qu, w and pk in the order they first appear, each with its last
	// value: a repeated key overwrites the value in place (RFC 9651
	// §4.2.3.2). Draft violations are reported in that order.
	var vals [4]sfValue
	var order [4]uint8
	m := 0
	for {
		k, v, st := c.param()
		if st == paramError {
			return p, pk, bad, false
		}
		if st == paramEnd {
			break
		}
		var j uint8
		switch k {
		case "q":
			j = 0
		case "qu":
			j = 1
		case "w":
			j = 2
		case "pk":
			j = 3
		default:
			continue // unknown parameters are comments
		}
		if vals[j].kind == 0 {
			order[m] = j
			m++
		}
		vals[j] = v
	}
	p = Policy{Name: name.raw, Unit: "requests"}
	for _, j := range order[:m] {
		v := &vals[j]
		switch j {
		case 0:
			if v.kind != sfInteger || v.n < 0 {
				return p, pk, fault{i, "q", ErrInvalid}, true
			}
			p.Quota = v.n
		case 1:
			if v.kind != sfString || v.raw == "" {
				return p, pk, fault{i, "qu", ErrInvalid}, true // an empty unit names nothing
			}
			switch v.raw {
			case "request": // DESIGN.md §1.4: the registry's spelling (draft-11 §10.3)
				p.Unit = "requests"
			case "requests", "content-bytes", "concurrent-requests":
				p.Unit = v.raw
			default:
				p.Unit, p.UnknownUnit = v.raw, true // DESIGN.md §1.3
			}
		case 2:
			if v.kind != sfInteger || v.n <= 0 {
				return p, pk, fault{i, "w", ErrInvalid}, true // "non-negative, non-zero" (§3.1.3)
			}
			p.Window = seconds(v.n, 0)
		case 3:
			if v.kind != sfBytes {
				return p, pk, fault{i, "pk", ErrInvalid}, true
			}
		}
	}
	if vals[0].kind == 0 {
		return p, pk, fault{i, "q", ErrMissing}, true
	}
	return p, vals[3], bad, true
}

// keepPolicy adds p, with the partition key pk (a Byte Sequence, or zero
// when absent), to the policies dst[n:] read from one field: in place of
// the policy of the same name if p is stricter (DESIGN.md §1.6), as a new
// policy if fewer than maxItems are kept, else not at all. It decodes the partition
// key only then. x indexes the names of dst[n:]; p is the field's
// member-th member.
func keepPolicy(dst []Policy, n int, x *nameIndex, member int, p Policy, pk sfValue) []Policy {
	i := len(dst)
	if x.m == nil && member >= maxScan {
		x.m = make(map[string]int, maxItems)
		for j := n; j < len(dst); j++ {
			x.m[dst[j].Name] = j
		}
	}
	if x.m != nil {
		if j, ok := x.m[p.Name]; ok {
			i = j
		}
	} else if x.bits&nameBit(p.Name) != 0 {
		i = n
		for i < len(dst) && dst[i].Name != p.Name {
			i++
		}
	}
	switch {
	case i < len(dst) && !stricter(p, dst[i]), i-n == maxItems:
		return dst
	case pk.kind == sfBytes:
		p.Partition = pk.decode()
	}
	if i < len(dst) {
		dst[i] = p
		return dst
	}
	x.add(p.Name, i)
	return append(dst, p)
}

// A nameIndex finds the items kept of one field by name. For the few
// members of a field that servers send, a 64-bit set of nameBits tells
// most new names without comparing, and a scan finds the others. A field
// of more than maxScan members gets a map instead: with maxItems names
// kept, a scan would cost up to maxItems comparisons per member.
type nameIndex struct {
	bits uint64         // nameBit of every name kept
	m    map[string]int // the index of every name kept, for a long field
}

// maxScan is the number of members of a field after which its names are
// found by a map.
const maxScan = 64

// add records that the item at index i is named name.
func (x *nameIndex) add(name string, i int) {
	x.bits |= nameBit(name)
	if x.m != nil {
		x.m[name] = i
	}
}

// nameBit returns a bit of a 64-bit set that stands for name, from its
// length and last byte.
func nameBit(name string) uint64 {
	h := uint(len(name))
	if h > 0 {
		h = h*7 + uint(name[h-1])
	}
	return 1 << (h & 63)
}

// stricter reports whether policy a is more restrictive than b
// (DESIGN.md §1.6), in an order that does not depend on the order of the
// items: one that states a window before one that does not (the only one
// of the two that paces); of two with windows the lower q/w, then the
// lower q (10 per second allows no burst of 600 where 600 per minute
// does), then the longer window (q=0: nothing for longer); of two without
// the lower q. Of two equal (differing only in unit or partition key),
// the first is kept. Windows are compared as read, a w past the largest
// Duration read as it (see seconds): of two such, the lower q, which
// allows fewer requests over any time a process runs.
func stricter(a, b Policy) bool {
	aw, bw := a.Window > 0 && a.Quota >= 0, b.Window > 0 && b.Quota >= 0
	switch {
	case aw != bw:
		return aw
	case !aw:
		return a.Quota < b.Quota
	}
	// a.Quota/a.Window < b.Quota/b.Window without dividing, in exact
	// 128-bit products: float64 ones round beyond 2^53, and a 15-digit q
	// by a window in nanoseconds passes that.
	ah, al := bits.Mul64(uint64(a.Quota), uint64(b.Window))
	bh, bl := bits.Mul64(uint64(b.Quota), uint64(a.Window))
	switch {
	case ah != bh || al != bl:
		return ah < bh || ah == bh && al < bl
	case a.Quota != b.Quota:
		return a.Quota < b.Quota
	}
	return a.Window > b.Window
}

// appendLimits is Limits appending to dst; on error it returns dst
// unchanged.
func appendLimits(dst []Limit, values []string) ([]Limit, error) {
	c := sfScanner{s: joinLines(values)}
	n := len(dst)
	var names nameIndex
	err := c.members(limitField, func(v sfValue, i int) (fault, bool) {
		l, pk, bad, ok := c.limit(v, i)
		if ok && bad.err == nil {
			dst = keepLimit(dst, n, &names, i, l, pk)
		}
		return bad, ok
	})
	if err != nil {
		return dst[:n], err
	}
	for i := n; i < len(dst); i++ {
		if strings.IndexByte(dst[i].Name, '\\') >= 0 {
			dst[i].Name = unescape(dst[i].Name)
		}
	}
	return dst, nil
}

// limit reads the parameters of the i-th member of a RateLimit field, as
// policy does.
func (c *sfScanner) limit(name sfValue, i int) (l Limit, pk sfValue, bad fault, ok bool) {
	var vals [3]sfValue // r, t, pk
	var order [3]uint8
	m := 0
	for {
		k, v, st := c.param()
		if st == paramError {
			return l, pk, bad, false
		}
		if st == paramEnd {
			break
		}
		var j uint8
		switch k {
		case "r":
			j = 0
		case "t":
			j = 1
		case "pk":
			j = 2
		default:
			continue
		}
		if vals[j].kind == 0 {
			order[m] = j
			m++
		}
		vals[j] = v
	}
	l = Limit{Name: name.raw, Reset: -1}
	for _, j := range order[:m] {
		v := &vals[j]
		switch j {
		case 0:
			if v.kind != sfInteger || v.n < 0 {
				return l, pk, fault{i, "r", ErrInvalid}, true
			}
			l.Remaining = v.n
		case 1:
			if v.kind != sfInteger || v.n < 0 {
				return l, pk, fault{i, "t", ErrInvalid}, true
			}
			l.Reset = seconds(v.n, 0)
		case 2:
			if v.kind != sfBytes {
				return l, pk, fault{i, "pk", ErrInvalid}, true
			}
		}
	}
	if vals[0].kind == 0 {
		return l, pk, fault{i, "r", ErrMissing}, true
	}
	return l, vals[2], bad, true
}

// keepLimit is keepPolicy for limits. Of two limits of one name the lowest
// r wins; for equal r, the longer t (DESIGN.md §1.6).
func keepLimit(dst []Limit, n int, x *nameIndex, member int, l Limit, pk sfValue) []Limit {
	i := len(dst)
	if x.m == nil && member >= maxScan {
		x.m = make(map[string]int, maxItems)
		for j := n; j < len(dst); j++ {
			x.m[dst[j].Name] = j
		}
	}
	if x.m != nil {
		if j, ok := x.m[l.Name]; ok {
			i = j
		}
	} else if x.bits&nameBit(l.Name) != 0 {
		i = n
		for i < len(dst) && dst[i].Name != l.Name {
			i++
		}
	}
	switch {
	case i < len(dst) && !(l.Remaining < dst[i].Remaining ||
		l.Remaining == dst[i].Remaining && l.Reset > dst[i].Reset),
		i-n == maxItems:
		return dst
	case pk.kind == sfBytes:
		l.Partition = pk.decode()
	}
	if i < len(dst) {
		dst[i] = l
		return dst
	}
	x.add(l.Name, i)
	return append(dst, l)
}

// indexPolicy returns the index of the policy named name in ps; -1 when
// there is none. ps holds at most 2*maxItems policies.
func indexPolicy(ps []Policy, name string) int {
	for i := range ps {
		if ps[i].Name == name {
			return i
		}
	}
	return -1
}

// indexLimit is indexPolicy for limits.
func indexLimit(ls []Limit, name string) int {
	for i := range ls {
		if ls[i].Name == name {
			return i
		}
	}
	return -1
}
