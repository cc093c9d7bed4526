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
// names: "03:00:00 +0100" is "03:00:00 GMT" less an hour, 02:00:00 GMT. ok
// is false for any other s, one in GMT included.
func GMT(s string) (gmt string, offset time.Duration, ok bool) {
	const utc = " UTC"
	if strings.HasSuffix(s, utc) && len(s) <= 64 {
		return s[:len(s)-len(utc)] + " GMT", 0, true
	}
	const n = len("Sun, 06 Nov 1994 08:49:37 +0000")
	if len(s) != n || s[n-6] != ' ' || s[n-5] != '+' && s[n-5] != '-' {
		return "", 0, false
	}
	for _, c := range []byte(s[n-4:]) {
		if c < '0' || c > '9' {
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
	return s[:n-6] + " GMT", offset, true
}
