package parse

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// headerBlock writes a case's field lines as "Name: value" lines.
func headerBlock(c conformanceCase) string {
	var b strings.Builder
	for _, l := range c.lines {
		b.WriteString(l[0] + ": " + l[1] + "\n")
	}
	return b.String()
}

// blockHeader reads "Name: value" lines into a header, as a fuzz input.
func blockHeader(s string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k != "" {
			h[k] = append(h[k], strings.TrimLeft(v, " "))
		}
	}
	return h
}

func seedCases(f *testing.F) []conformanceCase {
	var cases []conformanceCase
	for _, file := range []string{"testdata/dialects.txt", "testdata/draft11.txt", "testdata/edge.txt"} {
		cases = append(cases, readConformance(f, file)...)
	}
	return cases
}

func FuzzHeader(f *testing.F) {
	for _, c := range seedCases(f) {
		f.Add(headerBlock(c), int64(1740830400))
	}
	f.Fuzz(func(t *testing.T, block string, unix int64) {
		h := blockHeader(block)
		now := time.Unix(unix, 0)
		got := Header(h, now)
		for _, q := range got {
			if q.Limit < -1 || q.Remaining < -1 || q.Limit < 0 && q.Remaining < 0 ||
				q.Window < 0 || q.Reset < -1 || q.Unit == "" || q.Dialect == "" {
				t.Fatalf("Header(%q) reports %s", block, formatQuota(q))
			}
		}
		if again := Header(h, now); !reflect.DeepEqual(again, got) {
			t.Fatalf("Header(%q) = %v, then %v", block, got, again)
		}
		// A Reader reads as Header does, also from what it remembers.
		var r Reader
		for range 2 {
			if read, _ := r.Read(h, now, time.Time{}); !reflect.DeepEqual(read, got) {
				t.Fatalf("Read(%q) = %v, Header: %v", block, read, got)
			}
		}
	})
}

// fieldLines splits a fuzz input into field lines at "\n".
func fieldLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func FuzzPolicies(f *testing.F) {
	for _, c := range seedCases(f) {
		for _, l := range c.lines {
			if strings.HasSuffix(strings.ToLower(l[0]), "policy") {
				f.Add(l[1])
			}
		}
	}
	for _, tt := range policyTests() {
		f.Add(strings.Join(tt.values, "\n"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		values := fieldLines(s)
		got, err := Policies(values)
		if err != nil {
			if got != nil || !errors.Is(err, ErrMalformed) {
				t.Fatalf("Policies(%q) = %v, %v", values, got, err)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "RateLimit-Policy" || fe.Member < -1 {
				t.Fatalf("Policies(%q) error = %#v", values, err)
			}
		}
		for _, p := range got {
			if p.Quota < 0 || p.Window < 0 || p.Unit == "" || p.Unit == "request" {
				t.Fatalf("Policies(%q) = %+v", values, p)
			}
		}
		if again, err2 := Policies(values); !reflect.DeepEqual(again, got) || (err2 == nil) != (err == nil) {
			t.Fatalf("Policies(%q) = %v, %v, then %v, %v", values, got, err, again, err2)
		}
	})
}

func FuzzLimits(f *testing.F) {
	for _, c := range seedCases(f) {
		for _, l := range c.lines {
			if k := strings.ToLower(l[0]); k == "ratelimit" || k == "beta-ratelimit" {
				f.Add(l[1])
			}
		}
	}
	for _, tt := range limitTests() {
		f.Add(strings.Join(tt.values, "\n"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		values := fieldLines(s)
		got, err := Limits(values)
		if err != nil {
			if got != nil || !errors.Is(err, ErrMalformed) {
				t.Fatalf("Limits(%q) = %v, %v", values, got, err)
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "RateLimit" || fe.Member < -1 {
				t.Fatalf("Limits(%q) error = %#v", values, err)
			}
		}
		for _, l := range got {
			if l.Remaining < 0 || l.Reset < -1 {
				t.Fatalf("Limits(%q) = %+v", values, l)
			}
		}
		if again, err2 := Limits(values); !reflect.DeepEqual(again, got) || (err2 == nil) != (err == nil) {
			t.Fatalf("Limits(%q) = %v, %v, then %v, %v", values, got, err, again, err2)
		}
	})
}

// FuzzSFV checks the package's RFC 9651 scanner against httpsfv, the
// reference: on every input, the readers of RateLimit-Policy, RateLimit,
// the legacy unnamed policies and the draft-07 Dictionary give the same
// results and errors on both, and both accept the same Lists and
// Dictionaries.
func FuzzSFV(f *testing.F) {
	for _, c := range seedCases(f) {
		for _, l := range c.lines {
			f.Add(l[1])
		}
	}
	for _, tt := range policyTests() {
		f.Add(strings.Join(tt.values, "\n"))
	}
	for _, tt := range limitTests() {
		f.Add(strings.Join(tt.values, "\n"))
	}
	for _, s := range sfvSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		values := fieldLines(s)
		ps, err := Policies(values)
		rps, rerr := refPolicies(values)
		if !sameResult(ps, err, rps, rerr) {
			t.Fatalf("Policies(%q) = %#v, %v; httpsfv: %#v, %v", values, ps, err, rps, rerr)
		}
		ls, err := Limits(values)
		rls, rerr := refLimits(values)
		if !sameResult(ls, err, rls, rerr) {
			t.Fatalf("Limits(%q) = %#v, %v; httpsfv: %#v, %v", values, ls, err, rls, rerr)
		}
		if got, want := unnamedPolicies(values), refUnnamedPolicies(values); !reflect.DeepEqual(got, want) {
			t.Fatalf("unnamedPolicies(%q) = %#v; httpsfv: %#v", values, got, want)
		}
		q, ok := dictionary(values)
		rq, rok := refDictionary(values)
		if ok != rok || ok && !reflect.DeepEqual(q, rq) {
			t.Fatalf("dictionary(%q) = %v, %v; httpsfv: %v, %v", values, q, ok, rq, rok)
		}
		_, lerr := refList([]string{s})
		if got := validList(s); got != (lerr == nil) {
			t.Fatalf("validList(%q) = %v; httpsfv: %v", s, got, lerr)
		}
		_, derr := refDict([]string{s})
		if got := validDictionary(s); got != (derr == nil) {
			t.Fatalf("validDictionary(%q) = %v; httpsfv: %v", s, got, derr)
		}
	})
}
