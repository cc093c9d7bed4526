package parse

import (
	"strings"
	"time"
)

// This file holds what the limit/remaining/reset triplets share: reading a limit and a remaining count that may carry
// ";w=" (Docker, XIQ), limit lists with quota items as in draft-03 and
// Envoy ("1, 1;w=60;name=\"first\", 4;w=3600;name=\"second\""), where
// the first number is the current limit and merges into the first item
// with an equal limit, and comma-joined duplicates (Okta), which are
// invalid. Resets follow the magnitude rule or are date strings; see
// number.go and the package documentation ("Normalisation").

// tripletOf reads the field lines of the limit and remaining fields of a
// triplet. It returns the current quota and the quota items that followed
// the current limit.
func tripletOf(dialect string, limit, remaining []string, buf []item) (Quota, []item) {
	q := newQuota(dialect)
	var tail []item
	if n, ok := quickCount(limit); ok {
		q.Limit, tail = n, buf // the shape servers send; no items
	} else if cur, items, ok := limitList(limit, buf); ok {
		q.Limit, q.Window, q.Policy, tail = cur.n, cur.w, cur.name, items
	}
	if n, ok := quickCount(remaining); ok {
		q.Remaining = n
	} else if s, ok := single(remaining); ok {
		if r, ok := member(s); ok {
			q.Remaining = r.n
			if q.Window == 0 {
				q.Window = r.w
			}
		}
	}
	return q, tail
}

// deltaOf reads a single delay in decimal seconds from the field lines
// vals; -1 when absent or invalid.
func deltaOf(vals []string) time.Duration {
	if n, ok := quickCount(vals); ok {
		return seconds(n, 0)
	}
	v, ok := single(vals)
	if !ok {
		return -1
	}
	return deltaSeconds(v)
}

// legacy reports cur and the quota items of its family. cur merges into
// the item with an equal limit and a compatible window and name that comes
// first by name, then by the shortest window stated (not as listed: which
// item learns cur's remaining count and reset does not hang on the items'
// order), or into the only item (repeated or not) when cur's limit is
// unknown. Repeated items are reported once.
func (p *parser) legacy(cur Quota, items []item) {
	into := mergeInto(cur, items)
	for i, it := range items {
		if containsItem(items[:i], it) && i != into {
			continue
		}
		q := newQuota(cur.Dialect)
		q.Policy, q.Limit, q.Window = it.name, it.n, it.w
		if i == into {
			q.Remaining, q.Reset, q.Unit = cur.Remaining, cur.Reset, cur.Unit
			if q.Policy == "" {
				q.Policy = cur.Policy
			}
		}
		p.add(q)
	}
	if into < 0 {
		p.add(cur)
	}
}

// mergeInto returns the index of the item of items cur merges into (see
// legacy), or -1 if none.
func mergeInto(cur Quota, items []item) int {
	only := len(items) > 0 // one item, repeated or not
	for _, it := range items {
		only = only && it == items[0]
	}
	into := -1
	if cur.Limit >= 0 || cur.Remaining >= 0 {
		for i, it := range items {
			if (cur.Limit == it.n || cur.Limit < 0 && only) &&
				(cur.Window == 0 || cur.Window == it.w) &&
				(cur.Policy == "" || it.name == "" || cur.Policy == it.name) &&
				(into < 0 || itemAhead(it, items[into])) {
				into = i
			}
		}
	}
	return into
}

// itemAhead reports whether item a comes before b: by name, then the
// shortest window stated, a window not stated last.
func itemAhead(a, b item) bool {
	if a.name != b.name {
		return a.name < b.name
	}
	return a.w > 0 && (b.w == 0 || a.w < b.w)
}

func containsItem(items []item, x item) bool {
	for _, it := range items {
		if it == x {
			return true
		}
	}
	return false
}

// limitList reads a legacy limit field: the current limit, with optional
// parameters, then any quota items, which must state a window. A list
// whose later members state no window is a set of comma-joined or
// repeated duplicates (Okta) and invalid. Items are
// appended to buf, which must be empty, up to maxItems of them.
func limitList(vals []string, buf []item) (cur item, items []item, ok bool) {
	i := 0
	for _, line := range vals {
		for line = skipEmpty(line, ','); line != ""; line = skipEmpty(line, ',') {
			var m string
			m, line = nextMember(line)
			if trimOWS(m) == "" {
				continue // an empty member, which a recipient ignores (RFC 9110 §5.6.1), as "100," ends with
			}
			x, valid := member(m)
			if !valid || i > 0 && x.w == 0 {
				return item{}, nil, false
			}
			switch {
			case i == 0:
				cur = x
			case len(buf) < maxItems:
				buf = append(buf, x)
			}
			i++
		}
	}
	return cur, buf, i > 0
}

// skipEmpty returns s without the empty members at its start: every sep,
// SP and HTAB before its first other byte. A field of ten megabytes of
// separators is passed over in one tight loop, not member by member.
func skipEmpty(s string, sep byte) string {
	i := 0
	for i < len(s) && (s[i] == sep || s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

// nextMember splits s at the first comma outside a quoted string.
func nextMember(s string) (m, rest string) { return cutOutside(s, ',') }

// cutOutside splits s at the first sep outside a quoted string.
func cutOutside(s string, sep byte) (m, rest string) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// unquote returns the content of the quoted string q (its quotes
// removed), its escapes (a backslash before any byte) resolved.
func unquote(q string) string {
	s := q[1 : len(q)-1]
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b = append(b, s[i])
	}
	return string(b)
}

// member reads one legacy list member: a number and optional parameters,
// of which w (a window in whole seconds) and name (a quoted string) are
// kept.
// An invalid parameter is ignored; an invalid number is not.
func member(s string) (item, bool) {
	if n, ok := digitsOnly(s); ok {
		return item{n: n}, true // the shape servers send
	}
	num, params, _ := strings.Cut(s, ";")
	x := item{n: count(num)}
	if x.n < 0 {
		return item{}, false
	}
	for params = skipEmpty(params, ';'); params != ""; params = skipEmpty(params, ';') {
		var kv string
		kv, params = cutOutside(params, ';') // a name may hold one
		k, v, _ := strings.Cut(kv, "=")
		k = trimOWS(k)
		switch v = trimOWS(v); {
		case windowParam(k):
			// Integer seconds (draft-03 to 06); sub-second precision is
			// not supported (draft-11 §3.1.3), and a window of a
			// nanosecond would state an unbounded pace.
			if w, n, st := decimal(v); st == numOK && w > 0 && n == 0 {
				x.w = seconds(w, 0)
			}
		case k == "name":
			if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				x.name = unquote(v)
			}
		}
	}
	return x, true
}

// digitsOnly parses s when it is one to 18 ASCII digits and nothing else,
// as count would.
func digitsOnly(s string) (int64, bool) {
	if s == "" || len(s) > maxSafeDigits {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	return n, true
}

// digitsOnlyLong is digitsOnly for the long numbers of epoch resets: it
// reads the first eight digits at once. digitsOnly, short enough to
// inline, stays the reader of counts, which are shorter.
func digitsOnlyLong(s string) (int64, bool) {
	if len(s) < 8 || len(s) > maxSafeDigits {
		return digitsOnly(s)
	}
	v, k := digits8(load8(s, 0))
	if k < 8 {
		return 0, false
	}
	n := int64(v)
	for i := 8; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	return n, true
}
