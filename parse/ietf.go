package parse

import (
	"errors"
	"time"

	"github.com/dunglas/httpsfv"
)

// This file implements the strict readers of the IETF RateLimit fields,
// draft-ietf-httpapi-ratelimit-headers-11 §3 (RateLimit-Policy) and §4
// (RateLimit), with this project's decisions D1–D6 (spec.md §7), on the
// RFC 9651 Structured Fields parser of github.com/dunglas/httpsfv:
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
	// Name is the policy identifier, a String (D1).
	Name string

	// Quota is q, the quota units the policy allocates per window and
	// partition. It is never negative.
	Quota int64

	// Unit is qu, the quota unit: "requests" when absent. The registry's
	// spelling "request" reads as "requests" (D4); any other String is kept
	// verbatim.
	Unit string

	// UnknownUnit reports that Unit is not one of the units draft-11
	// defines ("requests", "content-bytes", "concurrent-requests"). Such a
	// policy is kept for callers to inspect but says nothing about request
	// pacing (D3).
	UnknownUnit bool

	// Window is w, the time window, in whole seconds; 0 when absent.
	// A window too long for a Duration saturates at the largest Duration.
	Window time.Duration

	// Partition is pk, the partition key; nil when absent.
	Partition []byte
}

// A Limit is one service limit item of a RateLimit field (draft-11 §4.1).
type Limit struct {
	// Name identifies the policy the limit belongs to, a String (D1).
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
// restrictive item is kept, the one with the lowest q/w (D6).
//
// Policies returns nil and no error when there are no field lines or they
// are empty. A field that is not a valid RFC 9651 List or that breaks any
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
// restrictive item is kept, the one with the lowest r (D6).
//
// Limits returns nil and no error when there are no field lines or they
// are empty. A field that is not a valid RFC 9651 List or that breaks any
// of the rules above is malformed as a whole: Limits returns nil and a
// *[FieldError] matching [ErrMalformed].
func Limits(values []string) ([]Limit, error) {
	ls, err := appendLimits(nil, values)
	if err != nil || len(ls) == 0 {
		return nil, err
	}
	return ls, nil
}

// errPanic stands for a panic inside httpsfv.
var errPanic = errors.New("httpsfv panicked")

// unmarshalList calls httpsfv.UnmarshalList, turning a panic into an
// error: httpsfv v1.1.0 panicked on hostile input (spec.md §11), and a
// response header must never crash the program.
func unmarshalList(values []string) (l httpsfv.List, err error) {
	defer func() {
		if recover() != nil {
			l, err = nil, errPanic
		}
	}()
	return httpsfv.UnmarshalList(values)
}

// unmarshalDictionary is unmarshalList for Dictionaries.
func unmarshalDictionary(values []string) (d *httpsfv.Dictionary, err error) {
	defer func() {
		if recover() != nil {
			d, err = nil, errPanic
		}
	}()
	return httpsfv.UnmarshalDictionary(values)
}

// appendPolicies is Policies appending to dst; on error it returns dst
// unchanged.
func appendPolicies(dst []Policy, values []string) ([]Policy, error) {
	l, err := unmarshalList(values)
	if err != nil {
		return dst, &FieldError{Field: policyField, Member: -1, Err: ErrSyntax}
	}
	n := len(dst)
	for i, m := range l {
		p, err := policyItem(m, i)
		if err != nil {
			return dst[:n], err
		}
		if j := indexPolicy(dst[n:], p.Name); j >= 0 {
			if stricter(p, dst[n+j]) {
				dst[n+j] = p
			}
			continue
		}
		dst = append(dst, p)
	}
	return dst, nil
}

func policyItem(m httpsfv.Member, i int) (Policy, error) {
	fail := func(param string, err error) (Policy, error) {
		return Policy{}, &FieldError{Field: policyField, Member: i, Param: param, Err: err}
	}
	it, ok := m.(httpsfv.Item)
	if !ok {
		return fail("", ErrInvalid) // an Inner List
	}
	name, ok := it.Value.(string)
	if !ok {
		return fail("", ErrInvalid) // D1
	}
	p := Policy{Name: name, Unit: "requests"}
	quota := false
	// Walk the parameters present rather than look up each known key: most
	// items carry only q and w.
	for _, k := range names(it) {
		v, _ := it.Params.Get(k)
		switch k {
		case "q":
			if p.Quota, quota = nonNegative(v); !quota {
				return fail("q", ErrInvalid)
			}
		case "qu":
			u, ok := v.(string)
			if !ok || u == "" {
				return fail("qu", ErrInvalid) // an empty unit names nothing
			}
			switch u {
			case "request": // D4: the registry's spelling (draft-11 §10.3)
				u = "requests"
			case "requests", "content-bytes", "concurrent-requests":
			default:
				p.UnknownUnit = true // D3
			}
			p.Unit = u
		case "w":
			w, ok := nonNegative(v)
			if !ok || w == 0 {
				return fail("w", ErrInvalid) // "non-negative, non-zero" (§3.1.3)
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

// stricter reports whether policy a is more restrictive than b (D6): the
// lower q/w when both state a window, else the lower q.
func stricter(a, b Policy) bool {
	if a.Window > 0 && b.Window > 0 {
		// a.Quota/a.Window < b.Quota/b.Window without dividing; the
		// products are exact in float64 well beyond any real quota.
		return float64(a.Quota)*float64(b.Window) < float64(b.Quota)*float64(a.Window)
	}
	return a.Quota < b.Quota
}

func indexPolicy(ps []Policy, name string) int {
	for i := range ps {
		if ps[i].Name == name {
			return i
		}
	}
	return -1
}

// appendLimits is Limits appending to dst; on error it returns dst
// unchanged.
func appendLimits(dst []Limit, values []string) ([]Limit, error) {
	l, err := unmarshalList(values)
	if err != nil {
		return dst, &FieldError{Field: limitField, Member: -1, Err: ErrSyntax}
	}
	n := len(dst)
	for i, m := range l {
		lim, err := limitItem(m, i)
		if err != nil {
			return dst[:n], err
		}
		if j := indexLimit(dst[n:], lim.Name); j >= 0 {
			// D6: the lowest r wins; for equal r, the longer t.
			if o := dst[n+j]; lim.Remaining < o.Remaining ||
				lim.Remaining == o.Remaining && lim.Reset > o.Reset {
				dst[n+j] = lim
			}
			continue
		}
		dst = append(dst, lim)
	}
	return dst, nil
}

func limitItem(m httpsfv.Member, i int) (Limit, error) {
	fail := func(param string, err error) (Limit, error) {
		return Limit{}, &FieldError{Field: limitField, Member: i, Param: param, Err: err}
	}
	it, ok := m.(httpsfv.Item)
	if !ok {
		return fail("", ErrInvalid)
	}
	name, ok := it.Value.(string)
	if !ok {
		return fail("", ErrInvalid) // D1
	}
	lim := Limit{Name: name, Reset: -1}
	remaining := false
	for _, k := range names(it) {
		v, _ := it.Params.Get(k)
		switch k {
		case "r":
			if lim.Remaining, remaining = nonNegative(v); !remaining {
				return fail("r", ErrInvalid)
			}
		case "t":
			t, ok := nonNegative(v)
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

func indexLimit(ls []Limit, name string) int {
	for i := range ls {
		if ls[i].Name == name {
			return i
		}
	}
	return -1
}

// names returns the parameter names of it, in order.
func names(it httpsfv.Item) []string {
	if it.Params == nil {
		return nil
	}
	return it.Params.Names()
}

func param(it httpsfv.Item, key string) (any, bool) {
	if it.Params == nil {
		return nil, false
	}
	return it.Params.Get(key)
}

// nonNegative accepts an Integer that is not negative.
func nonNegative(v any) (int64, bool) {
	n, ok := v.(int64)
	if !ok || n < 0 {
		return 0, false
	}
	return n, true
}
