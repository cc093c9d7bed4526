package parse

import "net/http"

// FromCache reports whether the response with header h came from a cache:
// it carries an Age (RFC 9111 §5.1) whose value is an integer greater than
// zero. Age: 0 and an invalid Age do not count (DESIGN.md §1.5). Of a
// list-valued Age the first member counts.
//
// Draft-11 §7.3 says the RateLimit fields of such a response SHOULD be
// ignored, as they may not be current; [Header] does not check this
// itself, [Reader.ReadFresh] does.
func FromCache(h http.Header) bool {
	return fromCache(h.Values("Age"))
}

// fromCache is FromCache given the lines of the Age field.
func fromCache(v []string) bool {
	if len(v) == 0 {
		return false
	}
	s, _ := nextMember(v[0])
	s = trimOWS(s)
	positive := false
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
		positive = positive || s[i] != '0'
	}
	return positive
}
