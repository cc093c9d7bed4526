package parse

import (
	"errors"
	"reflect"

	"github.com/dunglas/httpsfv"
)

// This file holds the reference readers: the RateLimit and
// RateLimit-Policy readers built on github.com/dunglas/httpsfv, which the
// package used before its own scanner (sfv.go). FuzzSFV and the tests
// check that both give the same results, errors included, on every input.

// errPanic stands for a panic inside httpsfv.
var errPanic = errors.New("httpsfv panicked")

// refList calls httpsfv.UnmarshalList, turning a panic into an error
// (httpsfv v1.1.0 panicked on hostile input).
func refList(values []string) (l httpsfv.List, err error) {
	defer func() {
		if recover() != nil {
			l, err = nil, errPanic
		}
	}()
	return httpsfv.UnmarshalList(values)
}

// refDict is refList for Dictionaries.
func refDict(values []string) (d *httpsfv.Dictionary, err error) {
	defer func() {
		if recover() != nil {
			d, err = nil, errPanic
		}
	}()
	return httpsfv.UnmarshalDictionary(values)
}

// refPolicies is Policies on httpsfv.
func refPolicies(values []string) ([]Policy, error) {
	l, err := refList(values)
	if err != nil {
		return nil, &FieldError{Field: policyField, Member: -1, Err: ErrSyntax}
	}
	var dst []Policy
	for i, m := range l {
		p, err := refPolicy(m, i)
		if err != nil {
			return nil, err
		}
		if j := indexPolicy(dst, p.Name); j >= 0 {
			if stricter(p, dst[j]) {
				dst[j] = p
			}
		} else if len(dst) < maxItems {
			dst = append(dst, p)
		}
	}
	return dst, nil
}

func refPolicy(m httpsfv.Member, i int) (Policy, error) {
	fail := func(param string, err error) (Policy, error) {
		return Policy{}, &FieldError{Field: policyField, Member: i, Param: param, Err: err}
	}
	it, ok := m.(httpsfv.Item)
	if !ok {
		return fail("", ErrInvalid)
	}
	name, ok := it.Value.(string)
	if !ok {
		return fail("", ErrInvalid)
	}
	p := Policy{Name: name, Unit: "requests"}
	quota := false
	for _, k := range refNames(it) {
		v, _ := it.Params.Get(k)
		switch k {
		case "q":
			if p.Quota, quota = refNonNegative(v); !quota {
				return fail("q", ErrInvalid)
			}
		case "qu":
			u, ok := v.(string)
			if !ok || u == "" {
				return fail("qu", ErrInvalid)
			}
			switch u {
			case "request":
				u = "requests"
			case "requests", "content-bytes", "concurrent-requests":
			default:
				p.UnknownUnit = true
			}
			p.Unit = u
		case "w":
			w, ok := refNonNegative(v)
			if !ok || w == 0 {
				return fail("w", ErrInvalid)
			}
			p.Window = seconds(w, 0)
		case "pk":
			var ok bool
			if p.Partition, ok = v.([]byte); !ok {
				return fail("pk", ErrInvalid)
			}
		}
	}
	if !quota {
		return fail("q", ErrMissing)
	}
	return p, nil
}

// refLimits is Limits on httpsfv.
func refLimits(values []string) ([]Limit, error) {
	l, err := refList(values)
	if err != nil {
		return nil, &FieldError{Field: limitField, Member: -1, Err: ErrSyntax}
	}
	var dst []Limit
	for i, m := range l {
		lim, err := refLimit(m, i)
		if err != nil {
			return nil, err
		}
		if j := indexLimit(dst, lim.Name); j >= 0 {
			if o := dst[j]; lim.Remaining < o.Remaining ||
				lim.Remaining == o.Remaining && lim.Reset > o.Reset {
				dst[j] = lim
			}
		} else if len(dst) < maxItems {
			dst = append(dst, lim)
		}
	}
	return dst, nil
}

func refLimit(m httpsfv.Member, i int) (Limit, error) {
	fail := func(param string, err error) (Limit, error) {
		return Limit{}, &FieldError{Field: limitField, Member: i, Param: param, Err: err}
	}
	it, ok := m.(httpsfv.Item)
	if !ok {
		return fail("", ErrInvalid)
	}
	name, ok := it.Value.(string)
	if !ok {
		return fail("", ErrInvalid)
	}
	lim := Limit{Name: name, Reset: -1}
	remaining := false
	for _, k := range refNames(it) {
		v, _ := it.Params.Get(k)
		switch k {
		case "r":
			if lim.Remaining, remaining = refNonNegative(v); !remaining {
				return fail("r", ErrInvalid)
			}
		case "t":
			t, ok := refNonNegative(v)
			if !ok {
				return fail("t", ErrInvalid)
			}
			lim.Reset = seconds(t, 0)
		case "pk":
			var ok bool
			if lim.Partition, ok = v.([]byte); !ok {
				return fail("pk", ErrInvalid)
			}
		}
	}
	if !remaining {
		return fail("r", ErrMissing)
	}
	return lim, nil
}

// refUnnamedPolicies is unnamedPolicies on httpsfv.
func refUnnamedPolicies(vals []string) []item {
	l, err := refList(vals)
	if err != nil {
		return nil
	}
	var items []item
	for _, m := range l {
		it, ok := m.(httpsfv.Item)
		if !ok {
			return nil
		}
		n, ok := refNonNegative(it.Value)
		if !ok {
			return nil
		}
		x := item{n: n}
		if v, ok := refParam(it, "w"); ok {
			w, ok := refNonNegative(v)
			if !ok || w == 0 {
				return nil
			}
			x.w = seconds(w, 0)
		}
		if v, ok := refParam(it, "name"); ok {
			x.name, _ = v.(string)
		}
		if len(items) < maxItems {
			items = append(items, x)
		}
	}
	return items
}

// refDictionary is dictionary on httpsfv.
func refDictionary(vals []string) (Quota, bool) {
	d, err := refDict(vals)
	if err != nil {
		return Quota{}, false
	}
	q := newQuota("draft-07")
	for _, k := range [...]string{"limit", "remaining", "reset"} {
		m, ok := d.Get(k)
		if !ok {
			continue
		}
		it, ok := m.(httpsfv.Item)
		if !ok {
			return Quota{}, false
		}
		n, ok := refNonNegative(it.Value)
		if !ok {
			return Quota{}, false
		}
		switch k {
		case "limit":
			q.Limit = n
		case "remaining":
			q.Remaining = n
		case "reset":
			q.Reset = seconds(n, 0)
		}
	}
	return q, q.Limit >= 0
}

func refNames(it httpsfv.Item) []string {
	if it.Params == nil {
		return nil
	}
	return it.Params.Names()
}

func refParam(it httpsfv.Item, key string) (any, bool) {
	if it.Params == nil {
		return nil, false
	}
	return it.Params.Get(key)
}

func refNonNegative(v any) (int64, bool) {
	n, ok := v.(int64)
	if !ok || n < 0 {
		return 0, false
	}
	return n, true
}

// validList and validDictionary report whether the scanner accepts s as a
// List or a Dictionary.
func validList(s string) bool {
	c := sfScanner{s: s}
	c.sp()
	for c.i < len(c.s) {
		if _, ok := c.member(); !ok || !c.skipParams() {
			return false
		}
		more, ok := c.next()
		if !ok {
			return false
		}
		if !more {
			break
		}
	}
	return true
}

func validDictionary(s string) bool {
	c := sfScanner{s: s}
	c.sp()
	for c.i < len(c.s) {
		if _, ok := c.key(); !ok {
			return false
		}
		if c.i < len(c.s) && c.s[c.i] == '=' {
			c.i++
			if _, ok := c.member(); !ok {
				return false
			}
		}
		if !c.skipParams() {
			return false
		}
		more, ok := c.next()
		if !ok {
			return false
		}
		if !more {
			break
		}
	}
	return true
}

// sameResult reports whether two readers' results and errors agree:
// equal values, and errors both nil or equal *FieldErrors.
func sameResult(a any, aerr error, b any, berr error) bool {
	if (aerr == nil) != (berr == nil) {
		return false
	}
	if aerr != nil {
		var ea, eb *FieldError
		if !errors.As(aerr, &ea) || !errors.As(berr, &eb) || *ea != *eb {
			return false
		}
	}
	return reflect.DeepEqual(a, b)
}
