package parse

import (
	"math/bits"
	"time"
)

// This file holds the fast paths of the readers: the shapes servers
// actually send, read in one pass without the general scanner. Each
// reports ok false for anything else, and its caller then runs the
// general reader, which stays the reference: the fuzz tests check that
// the two agree wherever the fast path answers.

// quickString reads a String without escapes (RFC 9651 §3.3.3) at s[i:].
// It returns the characters between the quotes and the index after the
// closing quote.
func quickString(s string, i int) (v string, end int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	j := i + 1
	for j < len(s) && class[s[j]]&cChar != 0 {
		j++
	}
	if j == len(s) || s[j] != '"' {
		return "", i, false // an escape, a control character, or no end
	}
	return s[i+1 : j], j + 1, true
}

// quickInt reads a non-negative Integer (RFC 9651 §3.3.1) at s[i:]: one
// to 15 digits not followed by a decimal point. It returns the value and
// the index after the last digit.
func quickInt(s string, i int) (n int64, end int, ok bool) {
	j, more := i, true
	if i+8 <= len(s) {
		v, k := digits8(load8(s, i))
		n, j, more = int64(v), i+k, k == 8
	}
	if more {
		for ; j < len(s); j++ {
			d := s[j] - '0'
			if d > 9 {
				break
			}
			n = n*10 + int64(d)
		}
	}
	if j == i || j-i > 15 || j < len(s) && s[j] == '.' {
		return 0, i, false
	}
	return n, j, true
}

// quickBytes reads a Byte Sequence (RFC 9651 §3.3.5) at s[i:], returning
// it undecoded, as the general scanner does, and the index after it.
func quickBytes(s string, i int) (v sfValue, end int, ok bool) {
	if i >= len(s) || s[i] != ':' {
		return v, i, false
	}
	c := sfScanner{s: s, i: i}
	v, ok = c.bytes()
	return v, c.i, ok
}

// quickNext moves past the end of a List member at s[i:]: it reports
// whether the field ends there, else returns the index of the next
// member. ok is false when neither follows.
func quickNext(s string, i int) (next int, end, ok bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i == len(s) {
		return i, true, true
	}
	if s[i] != ',' {
		return i, false, false
	}
	i++
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i, false, i < len(s)
}

// quickLimits is appendLimits for a field of one line whose members are
// Strings without escapes carrying Integer parameters r and t and a Byte
// Sequence pk, each at most once, and no other. On any other shape it returns dst unchanged
// and ok false.
func quickLimits(dst []Limit, s string) (_ []Limit, ok bool) {
	if l, ok := quickLimit1(s); ok {
		return append(dst, l), true
	}
	return quickLimitsN(dst, s)
}

// quickLimitsN is quickLimits without its first try, quickLimit1.
func quickLimitsN(dst []Limit, s string) (_ []Limit, ok bool) {
	n := len(dst)
	var names nameIndex
	i := 0
	for member := 0; ; member++ {
		var l Limit
		var pk sfValue
		if l.Name, i, ok = quickString(s, i); !ok {
			return dst[:n], false
		}
		l.Reset = -1
		var seen uint8
		for i < len(s) && s[i] == ';' {
			// The key: one or two lower-case letters, then "=".
			i++
			for i < len(s) && s[i] == ' ' {
				i++
			}
			var k uint8
			switch {
			case i+1 < len(s) && s[i+1] == '=':
				switch s[i] {
				case 'r':
					k = 1
				case 't':
					k = 2
				}
				i += 2
			case i+2 < len(s) && s[i] == 'p' && s[i+1] == 'k' && s[i+2] == '=':
				k = 4
				i += 3
			}
			if k == 0 || seen&k != 0 {
				return dst[:n], false
			}
			var v int64
			if k == 4 {
				if pk, i, ok = quickBytes(s, i); !ok {
					return dst[:n], false
				}
				seen |= k
				continue
			}
			if v, i, ok = quickInt(s, i); !ok {
				return dst[:n], false
			}
			seen |= k
			if k == 1 {
				l.Remaining = v
			} else {
				l.Reset = seconds(v, 0)
			}
		}
		if seen&1 == 0 {
			return dst[:n], false // r is required
		}
		if member == 0 {
			// The first member has nothing to compete with: keep it
			// as keepLimit would.
			if pk.kind == sfBytes {
				l.Partition = pk.decode()
			}
			names.add(l.Name, len(dst))
			dst = append(dst, l)
		} else {
			dst = keepLimit(dst, n, &names, member, l, pk)
		}
		end := false
		if i, end, ok = quickNext(s, i); !ok {
			return dst[:n], false
		}
		if end {
			return dst, true
		}
	}
}

// quickPolicies is appendPolicies for a field of one line whose members
// are Strings without escapes carrying an Integer q, a positive Integer
// w, a non-empty String qu without escapes and a Byte Sequence pk, each
// at most once, and no other parameter. On any other shape it returns dst unchanged and ok
// false.
func quickPolicies(dst []Policy, s string) (_ []Policy, ok bool) {
	if p, ok := quickPolicy1(s); ok {
		return append(dst, p), true
	}
	return quickPoliciesN(dst, s)
}

// quickPoliciesN is quickPolicies without its first try, quickPolicy1.
func quickPoliciesN(dst []Policy, s string) (_ []Policy, ok bool) {
	n := len(dst)
	var names nameIndex
	i := 0
	for member := 0; ; member++ {
		var p Policy
		var pk sfValue
		if p.Name, i, ok = quickString(s, i); !ok {
			return dst[:n], false
		}
		p.Unit = "requests"
		var seen uint8
		for i < len(s) && s[i] == ';' {
			// The key: one or two lower-case letters, then "=".
			i++
			for i < len(s) && s[i] == ' ' {
				i++
			}
			var k uint8
			switch {
			case i+1 < len(s) && s[i+1] == '=':
				switch s[i] {
				case 'q':
					k = 1
				case 'w':
					k = 2
				}
				i += 2
			case i+2 < len(s) && s[i+2] == '=':
				switch {
				case s[i] == 'q' && s[i+1] == 'u':
					k = 4
				case s[i] == 'p' && s[i+1] == 'k':
					k = 8
				}
				i += 3
			}
			if k == 0 || seen&k != 0 {
				return dst[:n], false
			}
			seen |= k
			if k == 8 {
				if pk, i, ok = quickBytes(s, i); !ok {
					return dst[:n], false
				}
				continue
			}
			if k == 4 {
				var u string
				if u, i, ok = quickString(s, i); !ok || u == "" {
					return dst[:n], false
				}
				switch u {
				case "request", "requests":
					p.Unit = "requests"
				case "content-bytes":
					p.Unit = "content-bytes"
				case "concurrent-requests":
					p.Unit = "concurrent-requests"
				default:
					p.Unit, p.UnknownUnit = u, true
				}
				continue
			}
			var v int64
			if v, i, ok = quickInt(s, i); !ok {
				return dst[:n], false
			}
			if k == 1 {
				p.Quota = v
			} else if v == 0 {
				return dst[:n], false // w must be positive
			} else {
				p.Window = seconds(v, 0)
			}
		}
		if seen&1 == 0 {
			return dst[:n], false // q is required
		}
		if member == 0 {
			// As in quickLimits.
			if pk.kind == sfBytes {
				p.Partition = pk.decode()
			}
			names.add(p.Name, len(dst))
			dst = append(dst, p)
		} else {
			dst = keepPolicy(dst, n, &names, member, p, pk)
		}
		end := false
		if i, end, ok = quickNext(s, i); !ok {
			return dst[:n], false
		}
		if end {
			return dst, true
		}
	}
}

// quickLimit1 reads the field most servers send, one member with r and
// then maybe t and nothing else ("name";r=1;t=2), as quickLimits does,
// with no loop over parameters. ok is false for any other field.
func quickLimit1(s string) (l Limit, ok bool) {
	name, i, ok := quickString(s, 0)
	if !ok || !(i+3 <= len(s) && s[i:i+3] == ";r=") {
		return l, false
	}
	r, i, ok := quickInt(s, i+3)
	if !ok {
		return l, false
	}
	l = Limit{Name: name, Remaining: r, Reset: -1}
	if i == len(s) {
		return l, true
	}
	if !(i+3 <= len(s) && s[i:i+3] == ";t=") {
		return l, false
	}
	t, i, ok := quickInt(s, i+3)
	if !ok || i != len(s) {
		return l, false
	}
	l.Reset = seconds(t, 0)
	return l, true
}

// quickPolicy1 is quickLimit1 for quickPolicies: one member with q and
// then maybe a positive w ("name";q=100;w=60).
func quickPolicy1(s string) (p Policy, ok bool) {
	name, i, ok := quickString(s, 0)
	if !ok || !(i+3 <= len(s) && s[i:i+3] == ";q=") {
		return p, false
	}
	q, i, ok := quickInt(s, i+3)
	if !ok {
		return p, false
	}
	p = Policy{Name: name, Quota: q, Unit: "requests"}
	if i == len(s) {
		return p, true
	}
	if !(i+3 <= len(s) && s[i:i+3] == ";w=") {
		return p, false
	}
	w, i, ok := quickInt(s, i+3)
	if !ok || i != len(s) || w == 0 {
		return p, false
	}
	p.Window = seconds(w, 0)
	return p, true
}

// quickDuration parses the Go duration strings servers send ("6m0s",
// "1m51.535s", "12ms") as [time.ParseDuration] does: components of at
// most 6 integer digits and 9 fraction digits, in units h, m, s and ms.
// It reports ok false for any other shape, which may still be valid.
func quickDuration(s string) (_ time.Duration, ok bool) {
	var d uint64
	i := 0
	for i < len(s) {
		var v uint64
		start := i
		for ; i < len(s); i++ {
			c := s[i] - '0'
			if c > 9 {
				break
			}
			v = v*10 + uint64(c)
		}
		if i-start > 6 || i == len(s) {
			return 0, false // too long for the quick path, or no unit
		}
		var f int64 // the fraction's digits, k of them
		k := 0
		if s[i] == '.' {
			i++
			for ; i < len(s); i++ {
				c := s[i] - '0'
				if c > 9 {
					break
				}
				f = f*10 + int64(c)
				k++
			}
			if k > 9 || i == len(s) || k == 0 && i == start+1 {
				return 0, false // no digit on either side of the point
			}
		} else if i == start {
			return 0, false // no number: a longer unit, or another byte
		}
		// The byte after the unit, unless it starts the next component,
		// fails the next turn of the loop.
		var unit int64
		switch s[i] {
		case 's':
			unit = int64(time.Second)
		case 'm':
			unit = int64(time.Minute)
			if i+1 < len(s) && s[i+1] == 's' {
				unit = int64(time.Millisecond)
				i++
			}
		case 'h':
			unit = int64(time.Hour)
		default:
			return 0, false
		}
		i++
		v *= uint64(unit)
		if f > 0 {
			// As time.ParseDuration computes it, to the same rounding
			// (each term is below 2⁶³, where the conversions agree).
			v += uint64(int64(float64(f) * (float64(unit) / pow10[k])))
		}
		if d += v; d > 1<<62 {
			return 0, false
		}
	}
	return time.Duration(d), i > 0
}

// pow10 holds the powers of ten a fraction of quickDuration scales by.
var pow10 = [10]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// load8 returns s[i:i+8] as a little-endian word: s[i] in its low byte.
// The compiler reads it in one load.
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// digits8 reads the ASCII digits that start the eight bytes of x (as
// load8 returns them): it returns how many there are, k, and the number
// they write. A few operations on the whole word stand for a loop over
// up to eight digits.
func digits8(x uint64) (v uint64, k int) {
	const (
		high  = 0xF0F0F0F0F0F0F0F0
		zeros = 0x3030303030303030 // "00000000"
		sixes = 0x0606060606060606
	)
	// A byte is a digit when its high nibble is 3 and adding 6 leaves it
	// so. A carry out of a byte comes only from a byte of 0xFA or more,
	// not a digit, and only reaches the bytes after it, whose flags do
	// not count.
	other := (x&high ^ zeros) | ((x+sixes)&high ^ zeros)
	k = bits.TrailingZeros64(other) >> 3 // 8 when other is 0
	if k == 0 {
		return 0, 0
	}
	// Subtracting borrows only out of the bytes after the digits. Shift
	// the digits to the top: the bytes below become leading zeros.
	x = (x - zeros) << (64 - 8*k)
	// Combine neighbouring digits into pairs, pairs into fours, fours
	// into the number (each step multiplies by the place value).
	x = x*10 + x>>8
	x = ((x&0x000000FF000000FF)*(100+1000000<<32) + (x>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
	return x, k
}
