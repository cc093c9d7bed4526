package parse

import (
	"math"
	"strings"
	"time"
)

// This file holds the fast path of read for the sets of fields servers
// send most: the IETF pair, the X-RateLimit-* triplet (GitHub and its
// kin) and the OpenAI family, each alone but for Date. It calls the same
// readers as the families do, but without setting up the general parser,
// which zeroes and fills a table of every slot and runs every family's
// check. quickFields.read reports ok false for any other set of fields,
// and read then takes the general path, which stays the reference:
// FuzzQuickRead checks that the two agree wherever the fast path answers.

// The slots each family of the fast path reads, as bits of a set; every
// one of them is below 32.
const (
	qIETF   = 1<<sRateLimit | 1<<sRateLimitPolicy
	qX      = 1<<sXLimit | 1<<sXRemaining | 1<<sXReset | 1<<sXUsed | 1<<sXResetAfter | 1<<sXResource | 1<<sXBucket
	qOpenAI = 077<<sOpenAI | 1<<azureResetTokens
)

// Every slot of the fast path is below 32, or this would overflow.
const _ = uint32(qIETF | qX | qOpenAI | 1<<sDate)

// quickFields holds the fields read finds, and files those of the slots
// below 32 by slot, as parser.index does.
type quickFields struct {
	at   [32]uint8 // 1 + the index in vals of each slot's field; 0 when absent
	set  uint64    // the slots of at that hold a field, and qOther
	n    int       // the number of fields found
	aged bool      // an Age field was found
	// The first 16 fields found: their slots and lines apart, which
	// leaves less to zero than fields would.
	slots [16]slot
	vals  [16][]string
}

// qOther is the bit of quickFields.set that marks a field of a slot of 32
// or more, or a slot found twice.
const qOther = 1 << 63

// add files the field of slot s with lines v.
func (q *quickFields) add(s slot, v []string) {
	n := q.n
	if n < len(q.vals) {
		q.slots[n], q.vals[n] = s, v
	}
	n++
	q.n = n
	if s < 32 && q.set&(1<<s) == 0 {
		q.set |= 1 << s
		q.at[s] = uint8(n)
	} else {
		q.set |= qOther
	}
}

// get returns the field lines of slot s; nil when absent.
func (q *quickFields) get(s slot) []string {
	if i := q.at[s]; i != 0 {
		return q.vals[i-1]
	}
	return nil
}

// has reports whether slot s holds a field.
func (q *quickFields) has(s slot) bool { return q.at[s] != 0 }

// read is header for the fields found, when each is of a slot below 32
// and the set of them is that of one family of the fast path, with Date;
// ok is false for any other set. It appends the quotas to dst.
func (q *quickFields) read(dst []Quota, now, date time.Time, r *Reader) (quotas []Quota, served time.Time, ok bool) {
	set := uint32(q.set) &^ (1 << sDate)
	family := qIETF
	switch {
	case set == qIETF:
		if !quickIETFShape(q.get(sRateLimitPolicy), q.get(sRateLimit)) {
			return nil, time.Time{}, false
		}
	case set&^qX == 0 && set&(1<<sXLimit|1<<sXRemaining|1<<sXUsed) != 0:
		family = qX
	case set&^qOpenAI == 0 && set != 0:
		family = qOpenAI
	default:
		return nil, time.Time{}, false
	}
	// As header does: the response's Date for a Reader, and the origin of
	// absolute resets, which the IETF fields, all deltas, do not need.
	if r != nil {
		served = r.date(q.get(sDate), now, !date.IsZero())
		if family != qIETF {
			date = origin(now, date, served)
		}
	}
	switch family {
	case qIETF:
		quotas, ok = q.ietf(dst, r)
	case qX:
		quotas, ok = q.xRateLimit(dst, now, date)
	default:
		quotas, ok = q.openAI(dst, now, date), true
	}
	if !ok {
		return nil, time.Time{}, false
	}
	return quotas, served, true
}

// quickIETFShape reports whether parser.ietf reads the RateLimit-Policy
// lines pv and RateLimit lines lv as the current syntax, each of one line
// that trimLines leaves as it is.
func quickIETFShape(pv, lv []string) bool {
	return len(pv) == 1 && len(lv) == 1 && bare(pv[0]) && bare(lv[0]) && pv[0][0] == '"' && lv[0][0] == '"'
}

// bare reports whether s is not empty and neither starts nor ends with
// optional white space.
func bare(s string) bool {
	return s != "" && !isOWS(s[0]) && !isOWS(s[len(s)-1])
}

// ietf is parser.ietf and join for fields of quickIETFShape, appending
// the quotas to dst; ok is false when they hold more than 8 policies and
// limits.
func (q *quickFields) ietf(dst []Quota, r *Reader) (quotas []Quota, ok bool) {
	pv, lv := q.get(sRateLimitPolicy), q.get(sRateLimit)
	var ps []Policy
	var onePolicy [1]Policy
	if r != nil {
		ps = r.policies(sRateLimitPolicy, pv[0])
	} else if p, ok := quickPolicy1(pv[0]); ok { // as policiesOf reads it first
		onePolicy[0] = p
		ps = onePolicy[:]
	} else {
		// policiesOf, which would try quickPolicy1 again.
		var pbuf [4]Policy
		if ps, ok = quickPoliciesN(pbuf[:0], pv[0]); !ok {
			var err error
			if ps, err = appendPolicies(pbuf[:0], pv); err != nil {
				ps = quirkPolicies(pbuf[:0], pv)
			}
		}
	}
	// The one member most servers send needs no buffer of four to zero.
	var ls []Limit
	var oneLimit [1]Limit
	if l, ok := quickLimit1(lv[0]); ok { // as limitsOf reads it first
		oneLimit[0] = l
		ls = oneLimit[:]
	} else {
		// limitsOf, which would try quickLimit1 again.
		var lbuf [4]Limit
		if ls, ok = quickLimitsN(lbuf[:0], lv[0]); !ok {
			ls, _ = appendLimits(lbuf[:0], lv)
		}
	}
	if len(ps)+len(ls) > 8 {
		return nil, false
	}
	// Count the quotas first, to allocate the result at once: a policy's
	// quota has a limit, and an unjoined limit's a remaining count, as
	// parser.add requires.
	var joined uint8 // at most 8 limits
	n := 0
	for i := range ps {
		if j := indexLimit(ls, ps[i].Name); j >= 0 {
			joined |= 1 << j
			if ps[i].Quota >= 0 || ls[j].Remaining >= 0 {
				n++
			}
		} else if ps[i].Quota >= 0 {
			n++
		}
	}
	for i := range ls {
		if joined&(1<<i) == 0 && ls[i].Remaining >= 0 {
			n++
		}
	}
	if n == 0 {
		return dst, true
	}
	all, quotas := grow(dst, n)
	n = 0
	for i := range ps {
		pol := &ps[i]
		x := policyQuota(pol)
		if j := indexLimit(ls, pol.Name); j >= 0 {
			x.Remaining, x.Reset = ls[j].Remaining, ls[j].Reset
			if ls[j].Partition != nil {
				x.Partition = ls[j].Partition
			}
		}
		if x.Limit >= 0 || x.Remaining >= 0 {
			quotas[n] = x
			n++
		}
	}
	for i := range ls {
		l := &ls[i]
		if joined&(1<<i) == 0 && l.Remaining >= 0 {
			x := newQuota("ietf")
			x.Policy, x.Partition, x.Remaining, x.Reset = l.Name, l.Partition, l.Remaining, l.Reset
			quotas[n] = x
			n++
		}
	}
	return all, true
}

// xRateLimit is parser.xRateLimit for limit and remaining fields of one
// count each, or absent, appending the quota to dst; ok is false for any
// other (a list of quota items, as Envoy sends, a window, or a malformed
// value), which the general path reads.
func (q *quickFields) xRateLimit(dst []Quota, now, date time.Time) (quotas []Quota, ok bool) {
	// As tripletOf reads these shapes, into the fields of the quota, which
	// is built once, in the result.
	limit, remaining := int64(-1), int64(-1)
	if v := q.get(sXLimit); v != nil {
		if limit, ok = quickCount(v); !ok {
			return nil, false
		}
	}
	if v := q.get(sXRemaining); v != nil {
		if remaining, ok = quickCount(v); !ok {
			return nil, false
		}
	}
	dialect, policy, unit := "x-ratelimit", "", "requests"
	switch {
	case q.has(sXResetAfter) || q.has(sXBucket):
		dialect = "discord"
		policy = textOf(q.get(sXBucket))
	case q.has(sXResource):
		dialect = "github"
		policy = textOf(q.get(sXResource))
		if len(policy) == len("graphql") && strings.EqualFold(policy, "graphql") {
			unit = "points"
		}
	case q.has(sXUsed) && !q.has(sXLimit):
		dialect = "reddit"
	}
	if limit < 0 && remaining >= 0 {
		if used := countOf(q.get(sXUsed)); used >= 0 && used <= math.MaxInt64-remaining {
			limit = used + remaining
		}
	}
	rst := time.Duration(-1)
	if q.has(sXResetAfter) {
		rst = deltaOf(q.get(sXResetAfter))
	}
	if v := q.get(sXReset); rst < 0 && v != nil {
		rst = reset(v, q.origin(now, date), now)
	}
	if limit < 0 && remaining < 0 { // as parser.legacy and add
		return dst, true
	}
	all, x := grow(dst, 1)
	x[0] = Quota{Policy: policy, Unit: unit, Limit: limit, Remaining: remaining, Reset: rst, Dialect: dialect}
	return all, true
}

// origin is parser.origin: date unless it is the zero time, else the
// response's Date when valid, else now.
func (q *quickFields) origin(now, date time.Time) time.Time {
	if !date.IsZero() {
		return date
	}
	if d := q.get(sDate); len(d) > 0 {
		if t, ok := HTTPDate(dateLine(d[0]), now); ok {
			return t
		}
	}
	return now
}

// openAI is parser.openAI, appending the quotas to dst: it reads both
// units before building the quotas kept, in dst grown at once. An epoch
// reset is measured from q.origin(now, date).
func (q *quickFields) openAI(dst []Quota, now, date time.Time) []Quota {
	base := func() time.Time { return q.origin(now, date) }
	l0, r0, t0, ok0 := q.openAIUnit(sOpenAI, nil, base, now)
	l1, r1, t1, ok1 := q.openAIUnit(sOpenAI+3, q.get(azureResetTokens), base, now)
	n := 0
	if ok0 {
		n++
	}
	if ok1 {
		n++
	}
	if n == 0 {
		return dst
	}
	all, x := grow(dst, n)
	if ok0 {
		x[0] = Quota{Unit: openAIUnits[0], Limit: l0, Remaining: r0, Reset: t0, Dialect: "openai"}
		x = x[1:]
	}
	if ok1 {
		x[0] = Quota{Unit: openAIUnits[1], Limit: l1, Remaining: r1, Reset: t1, Dialect: "openai"}
	}
	return all
}

// openAIUnit reads the limit, remaining and reset fields of the unit
// whose limit is slot s, the reset from the lines azure when its own is
// absent, an epoch measured from base(); ok is false when the unit has no
// quota to report (neither a limit nor a remaining field, or both
// invalid, as parser.add drops).
func (q *quickFields) openAIUnit(s slot, azure []string, base func() time.Time, now time.Time) (limit, remaining int64, reset time.Duration, ok bool) {
	if !(q.has(s) || q.has(s+1)) {
		return -1, -1, -1, false
	}
	limit, remaining = countOf(q.get(s)), countOf(q.get(s+1))
	r := q.get(s + 2)
	if r == nil {
		r = azure
	}
	return limit, remaining, goDuration(r, base, now), limit >= 0 || remaining >= 0
}
