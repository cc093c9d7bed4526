package parse

import (
	"net/http"
	"strings"
)

// FromCache reports whether the response with header h came from a cache:
// it carries an Age (RFC 9111 §5.1) whose value is an integer greater than
// zero. Age: 0 and an invalid Age do not count (DESIGN.md §1.5). Of a
// list-valued Age the first member counts, empty ones skipped. The name is matched
// case-insensitively, as every field's is: a header built by hand may
// hold "age".
//
// Draft-11 §7.3 says the RateLimit fields of such a response SHOULD be
// ignored, as they may not be current; [Header] does not check this
// itself, [Reader.ReadFresh] does.
func FromCache(h http.Header) bool {
	return fromCache(ageValues(h))
}

// ageValues returns the lines of h's Age field: of all its spellings, as
// every field's lines are joined, in name order ("AGE" before "Age"
// before "age"), so that the answer does not hang on the map's order. Only
// the first member counts, so the first spelling in that order that has
// one (a member not empty) is enough.
func ageValues(h http.Header) []string {
	var (
		name  string
		lines []string
	)
	for k, v := range h {
		if len(k) == 3 && strings.EqualFold(k, "Age") && (lines == nil || k < name) && firstMember(v) != "" {
			name, lines = k, v
		}
	}
	return lines
}

// fromCache is FromCache given the lines of the Age field. Empty members
// are skipped, as RFC 9110 §5.6.1 has a recipient do for every list: of
// the lines "" and "5", or of ", 5", the member is 5.
func fromCache(v []string) bool {
	m := firstMember(v)
	return m != "" && positiveInteger(m)
}

// firstMember returns the first member of the lines v that is not empty,
// its whitespace trimmed, or "" if there is none.
func firstMember(v []string) string {
	for _, line := range v {
		for rest := line; ; {
			var m string
			m, rest = nextMember(rest)
			if m = trimOWS(m); m != "" {
				return m
			}
			if rest == "" {
				break
			}
		}
	}
	return ""
}

// positiveInteger reports whether s is digits only, not all of them 0.
func positiveInteger(s string) bool {
	positive := false
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
		positive = positive || s[i] != '0'
	}
	return positive
}
