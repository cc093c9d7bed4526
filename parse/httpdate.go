package parse

import "time"

// This file implements HTTP-date, RFC 9110 §5.6.7:
// https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7

var (
	dayNames     = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	longDayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	monthNames   = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

// HTTPDate parses s as an HTTP-date (RFC 9110 §5.6.7) in any of its three
// forms and returns the instant in UTC:
//
//	Sun, 06 Nov 1994 08:49:37 GMT    ; IMF-fixdate
//	Sunday, 06-Nov-94 08:49:37 GMT   ; obsolete RFC 850 format
//	Sun Nov  6 08:49:37 1994         ; ANSI C's asctime() format
//
// As the RFC requires, parsing is case-sensitive, and a two-digit RFC 850
// year that would put the timestamp more than 50 years after now names the
// most recent past year with those digits. s must carry no surrounding
// white space. The day name is not checked against the date, and a leap
// second (:60) rolls over to the next minute.
//
// HTTPDate differs from [net/http.ParseTime], which uses a fixed pivot for
// two-digit years, accepts lower-case names and any zone abbreviation, and
// rejects leap seconds.
func HTTPDate(s string, now time.Time) (time.Time, bool) {
	switch {
	case len(s) == len("Sun, 06 Nov 1994 08:49:37 GMT") && s[3] == ',':
		return imfFixdate(s)
	case len(s) == len("Sun Nov  6 08:49:37 1994") && s[3] == ' ':
		return asctime(s)
	default:
		return rfc850(s, now)
	}
}

// imfFixdate parses "Sun, 06 Nov 1994 08:49:37 GMT".
func imfFixdate(s string) (time.Time, bool) {
	if !oneOf(s[:3], dayNames[:]) || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' ||
		s[16] != ' ' || s[25:] != " GMT" {
		return time.Time{}, false
	}
	day, ok1 := digits(s[5:7])
	month, ok2 := monthIndex(s[8:11])
	year, ok3 := digits(s[12:16])
	if !ok1 || !ok2 || !ok3 {
		return time.Time{}, false
	}
	return dateTime(year, month, day, s[17:25])
}

// asctime parses "Sun Nov  6 08:49:37 1994" (the day may also be two digits).
func asctime(s string) (time.Time, bool) {
	if !oneOf(s[:3], dayNames[:]) || s[7] != ' ' || s[10] != ' ' || s[19] != ' ' {
		return time.Time{}, false
	}
	month, ok1 := monthIndex(s[4:7])
	dd := s[8:10]
	if dd[0] == ' ' {
		dd = dd[1:]
	}
	day, ok2 := digits(dd)
	year, ok3 := digits(s[20:24])
	if !ok1 || !ok2 || !ok3 {
		return time.Time{}, false
	}
	return dateTime(year, month, day, s[11:19])
}

// rfc850 parses "Sunday, 06-Nov-94 08:49:37 GMT".
func rfc850(s string, now time.Time) (time.Time, bool) {
	const tail = len(", 06-Nov-94 08:49:37 GMT")
	if len(s) <= tail {
		return time.Time{}, false
	}
	name, r := s[:len(s)-tail], s[len(s)-tail:]
	if !oneOf(name, longDayNames[:]) || r[:2] != ", " || r[4] != '-' || r[8] != '-' ||
		r[11] != ' ' || r[20:] != " GMT" {
		return time.Time{}, false
	}
	day, ok1 := digits(r[2:4])
	month, ok2 := monthIndex(r[5:8])
	yy, ok3 := digits(r[9:11])
	if !ok1 || !ok2 || !ok3 {
		return time.Time{}, false
	}
	// RFC 9110 §5.6.7: "Recipients of a timestamp value in rfc850-date
	// format, which uses a two-digit year, MUST interpret a timestamp that
	// appears to be more than 50 years in the future as representing the
	// most recent year in the past that had the same last two digits."
	now = now.UTC()
	limit := now.AddDate(50, 0, 0)
	year := now.Year() - mod(now.Year(), 100) + yy
	if year > now.Year() {
		year -= 100 // start from the latest year with these digits not after now
	}
	for {
		t, ok := dateTime(year+100, month, day, r[12:20])
		if !ok || t.After(limit) {
			break
		}
		year += 100
	}
	return dateTime(year, month, day, r[12:20])
}

func mod(a, b int) int {
	if m := a % b; m < 0 {
		return m + b
	} else {
		return m
	}
}

// dateTime validates and assembles a UTC instant; hms is "08:49:37".
func dateTime(year int, month time.Month, day int, hms string) (time.Time, bool) {
	if hms[2] != ':' || hms[5] != ':' {
		return time.Time{}, false
	}
	h, ok1 := digits(hms[0:2])
	m, ok2 := digits(hms[3:5])
	sec, ok3 := digits(hms[6:8])
	if !ok1 || !ok2 || !ok3 || !validClock(h, m, sec) || day < 1 || day > daysIn(month, year) {
		return time.Time{}, false
	}
	return time.Date(year, month, day, h, m, sec, 0, time.UTC), true
}

func monthIndex(s string) (time.Month, bool) {
	for i, m := range monthNames {
		if s == m {
			return time.Month(i + 1), true
		}
	}
	return 0, false
}

func oneOf(s string, set []string) bool {
	for _, e := range set {
		if s == e {
			return true
		}
	}
	return false
}

// dateLine returns the Date of a field line, s, trimmed: its first when it
// holds the same date twice, comma-joined ("D, D"), as a proxy that joins
// repeated fields writes it (Node's http module does, for Date), which
// reads as two lines do, by the first. An HTTP-date holds a comma itself,
// so only two equal halves are read so.
func dateLine(s string) string {
	s = trimOWS(s)
	if n := (len(s) - 2) / 2; len(s) > 2 && len(s)%2 == 0 && s[n:n+2] == ", " && s[:n] == s[n+2:] {
		return s[:n]
	}
	return s
}
