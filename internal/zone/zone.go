// Package zone rewrites HTTP-dates written in a zone RFC 9110 §5.6.7 does
// not allow, but servers send, into the GMT form HTTP-date parsers read.
package zone

import (
	"strings"
	"time"
)

// GMT returns s, an HTTP-date whose zone is "UTC" (as Go code formatting
// with time.RFC1123 in UTC writes it) or, for an IMF-fixdate, a numeric
// offset ("+0000", "-0000", "+0100", as RFC 5322 writes dates: Go's
// time.RFC1123Z, PHP's date('r'), Python's email.utils.formatdate), with
// "GMT" for its zone, and the offset to take off the instant the result
// names: "03:00:00 +0100" is "03:00:00 GMT" less an hour, 02:00:00 GMT.
// An IMF-fixdate whose day of the month has one digit, as RFC 1123 and
// RFC 5322 allow and Java's DateTimeFormatter.RFC_1123_DATE_TIME writes
// ("Fri, 4 Dec 2026 02:00:00 GMT"), has it padded to two, in any of these
// zones or GMT. ok is false for any other s, one already in the form
// RFC 9110 §5.6.7 asks for included.
func GMT(s string) (gmt string, offset time.Duration, ok bool) {
	if len(s) > 64 {
		return "", 0, false
	}
	padded := len(s) > 7 && s[3] == ',' && s[4] == ' ' && digit(s[5]) && s[6] == ' '
	if padded {
		s = s[:5] + "0" + s[5:]
	}
	const utc, gmtZone = " UTC", " GMT"
	switch {
	case strings.HasSuffix(s, utc):
		return s[:len(s)-len(utc)] + gmtZone, 0, true
	case strings.HasSuffix(s, gmtZone):
		if !padded {
			return "", 0, false
		}
		return s, 0, true
	}
	const n = len("Sun, 06 Nov 1994 08:49:37 +0000")
	if len(s) != n || s[n-6] != ' ' || s[n-5] != '+' && s[n-5] != '-' {
		return "", 0, false
	}
	for _, c := range []byte(s[n-4:]) {
		if !digit(c) {
			return "", 0, false
		}
	}
	oh, om := int(s[n-4]-'0')*10+int(s[n-3]-'0'), int(s[n-2]-'0')*10+int(s[n-1]-'0')
	if oh > 23 || om > 59 {
		return "", 0, false
	}
	offset = time.Duration(oh*60+om) * time.Minute
	if s[n-5] == '-' {
		offset = -offset
	}
	return s[:n-6] + gmtZone, offset, true
}

func digit(c byte) bool { return '0' <= c && c <= '9' }
