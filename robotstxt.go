package polite

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file reads robots.txt (RFC 9309) for one product token: the rules of
// the group that applies to it, and the pace it asks for. It is a small
// parser of our own rather than a dependency: it keeps only what one
// crawler needs, matches each pattern in time linear in it and the path
// (no backtracking), and reads the non-standard
// Crawl-delay and Request-rate records.

// robotsFile is what one robots.txt says to one product token.
type robotsFile struct {
	// agent is the user-agent of the group that applies, as written in the
	// file, or "*"; empty when no group applies (everything is allowed).
	agent string
	// patterns holds the patterns of the group's rules, one after the
	// other; ends[i] is where rule i's ends in it, with ruleAllow set when
	// the rule allows. Kept so, a rule costs its pattern and four bytes,
	// not a string header and a struct: what a file of short rules costs
	// stays below what was read.
	patterns string
	ends     []uint32
	// interval is the time the file asks between two requests to the
	// origin (Crawl-delay, or the period of Request-rate, whichever is
	// longer), at most maxCrawlInterval; zero when it asks for none.
	interval time.Duration
}

// robotsRule is one allow or disallow record of the applicable group.
type robotsRule struct {
	pattern string // normalised: see robotsEscape; runs of '*' collapsed
	allow   bool
}

// ruleAllow marks an allow rule in robotsFile.ends.
const ruleAllow = 1 << 31

// rulesOf collects the rules of a group, as robotsFile keeps them.
type rulesOf struct {
	patterns strings.Builder
	ends     []uint32
}

// add appends the rule r unless the rules would then hold more than
// maxRobotsKept bytes, which the rules of a file read whole never do.
func (g *rulesOf) add(r robotsRule) {
	if g.patterns.Len()+len(r.pattern)+4*(len(g.ends)+1) > maxRobotsKept {
		return
	}
	g.patterns.WriteString(r.pattern)
	end := uint32(g.patterns.Len())
	if r.allow {
		end |= ruleAllow
	}
	g.ends = append(g.ends, end)
}

// rules returns the number of rules of f.
func (f *robotsFile) rules() int { return len(f.ends) }

// rule returns the rule i of f.
func (f *robotsFile) rule(i int) robotsRule {
	start := uint32(0)
	if i > 0 {
		start = f.ends[i-1] &^ ruleAllow
	}
	end := f.ends[i]
	return robotsRule{pattern: f.patterns[start : end&^ruleAllow], allow: end&ruleAllow != 0}
}

const (
	// maxRobotsBytes is how much of a robots.txt is read and parsed; the
	// rest is ignored. RFC 9309 §2.5 asks for at least 500 KiB.
	maxRobotsBytes = 512 << 10

	// maxRobotsKept bounds what the rules kept of one robots.txt take, in
	// bytes: their patterns, once normalised, and four bytes each. An
	// octet normalisation encodes is kept as three, and a rule's four
	// bytes are fewer than its record's name and line end: the rules of
	// a file read whole (maxRobotsBytes) always fit, which RFC 9309 §2.5
	// asks for, and the bound only guards that invariant.
	maxRobotsKept = 3 * maxRobotsBytes

	// maxRobotsAgent bounds the length of the user-agent line kept to name
	// the group that applies, and of the rule a RobotsError quotes.
	maxRobotsAgent = 256

	// maxCrawlInterval caps the interval a robots.txt can ask between two
	// requests. A longer Crawl-delay (1e12 seconds, say) is read as this
	// cap, which is the longest a robots.txt is trusted anyway (RFC 9309
	// §2.4): the origin then gets about one request a day, and a request
	// that would wait longer than the Transport's MaxWait fails with a
	// *WaitError rather than being sent sooner than asked.
	maxCrawlInterval = 24 * time.Hour
)

// robotsSpace is the white space trimmed around the keys and values of
// robots.txt records.
const robotsSpace = " \t\v\f"

// groupTarget says which of the collected groups the records of the
// current group go to.
type groupTarget struct{ mine, star bool }

// parseRobots reads body, a robots.txt, for the product token token (see
// productToken): it keeps the rules and interval of the groups naming token
// (RFC 9309 §2.2.1: groups naming the same token are merged), or, when none
// does, of the groups naming "*". Lines it cannot read are skipped
// (§2.3.1.5). A Crawl-delay or Request-rate line holds for the agents of
// the group named before it, and, as every record §2 does not define,
// does not end a run of user-agent lines (§2.2.4). Only the first maxRobotsBytes of body are read; a line cut
// there is dropped. It runs in time linear in the length of body.
func parseRobots(body []byte, token string) *robotsFile {
	if len(body) > maxRobotsBytes {
		whole := body[maxRobotsBytes] == '\r' || body[maxRobotsBytes] == '\n' // its last line ends at the limit
		body = body[:maxRobotsBytes]
		if !whole {
			if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
				body = body[:i]
			} else {
				body = nil
			}
		}
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark

	var (
		mine, star       rulesOf
		mineSeen         bool
		cur              groupTarget
		agents           bool // the last group record was a user-agent line
		mineAgent        string
		mineInt, starInt float64 // seconds
	)
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		// White space is ASCII's (RFC 9309 §2.1: SP and HTAB; CR and LF
		// end lines): a pattern may end in any other character, a
		// no-break space included.
		key := bytes.Trim(line[:colon], robotsSpace)
		value := string(bytes.Trim(line[colon+1:], robotsSpace))
		switch {
		case asciiEqualFold(key, "user-agent"):
			if !agents {
				cur = groupTarget{} // a new group starts
			}
			agents = true
			if value == "*" {
				cur.star = true
			} else if token != "" && strings.EqualFold(productToken(value), token) {
				cur.mine = true
				if !mineSeen {
					mineSeen, mineAgent = true, value
				}
			}
		case asciiEqualFold(key, "allow"), asciiEqualFold(key, "disallow"):
			agents = false
			if value == "" {
				continue // "Disallow:" disallows nothing
			}
			r := robotsRule{pattern: normalisePattern(value), allow: asciiEqualFold(key, "allow")}
			if cur.mine {
				mine.add(r)
			}
			if cur.star {
				star.add(r)
			}
		case asciiEqualFold(key, "crawl-delay"), asciiEqualFold(key, "request-rate"):
			// Not records of RFC 9309, which other records must not
			// disturb (§2.2.4): like them, they do not end a run of
			// user-agent lines. They hold for the agents named so far.
			var s float64
			var ok bool
			if asciiEqualFold(key, "crawl-delay") {
				s, ok = parseCrawlDelay(value)
			} else {
				s, ok = parseRequestRate(value)
			}
			if !ok {
				continue
			}
			if cur.mine {
				mineInt = max(mineInt, s)
			}
			if cur.star {
				starInt = max(starInt, s)
			}
		}
		// Other records (sitemap, host, ...) are not group members: they
		// neither end a run of user-agent lines nor belong to a group.
		// (Crawl-delay and Request-rate belong to one, above.)
	}
	f := &robotsFile{interval: secondsInterval(starInt)}
	g := &star
	if len(star.ends) > 0 || starInt > 0 {
		f.agent = "*"
	}
	if mineSeen {
		g = &mine
		f.agent, f.interval = mineAgent, secondsInterval(mineInt)
		f.agent = strings.Clone(shorten(f.agent, maxRobotsAgent))
	}
	// Copies of their exact size: a builder's and append's buffers may be
	// twice what they hold.
	f.patterns, f.ends = strings.Clone(g.patterns.String()), slices.Clone(g.ends)
	return f
}

// productToken returns the product token at the start of s: its leading
// letters, '-' and '_' (RFC 9309 §2.2.1), so that "mybot/1.2 (+https://…)"
// gives "mybot".
func productToken(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return s[:i]
		}
	}
	return s
}

// asciiEqualFold reports whether b equals the lower-case ASCII word s,
// ignoring case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// shorten returns s, or its first n bytes (no rune cut) and "…" when
// longer.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// parseCrawlDelay reads a Crawl-delay value: seconds, possibly fractional
// ("10", "0.5", "1e3", "1,5" with a decimal comma, "1,500" with a
// thousands separator, the longer of its two readings), a number with a
// unit, joined or after a space ("10s", "2m", "2 min", "1h", "1 day": see
// unitSeconds; another unit is read as seconds), or a Go duration
// ("1m30s", and "1h30" as 1h30m). Parts that follow a part with a unit
// add to it ("1m 30s", "1 min, 30 s", "1min30s"), a number without one in the unit
// below ("1h 30" is 1h30m). A range ("5 to 10 s", "1-2 min", "1 min - 2
// min") is read as its upper end, the longer wait. A value that is not a non-negative
// number is ignored; a huge one is capped by secondsInterval. At most
// maxDelayParts parts are read: one glued to the next ("1m,30s") has its
// word run on to the next space, and a line of thousands cost the square
// of its length.
func parseCrawlDelay(v string) (float64, bool) {
	total, unit, name, rest, ok := crawlDelayPart(spaceRanges(v))
	if !ok {
		return 0, false
	}
	for {
		// A range: "5 to 10 s", "1 min - 2 min", "1-2 min".
		word, after := name, rest
		if unit != 0 {
			word, after = firstWord(rest)
		}
		if !rangeWord(word) {
			break
		}
		s, u, n, r, ok := crawlDelayPart(strings.TrimLeft(after, " \t"))
		if !ok {
			break
		}
		total, unit, name, rest = max(total, s), u, n, r
	}
	for parts := 1; unit != 0 && parts < maxDelayParts; parts++ {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" || (rest[0] < '0' || rest[0] > '9') && rest[0] != '.' {
			break
		}
		s, u, _, r, ok := crawlDelayPart(rest)
		if !ok {
			break
		}
		if u == 0 {
			// A number with no unit ("1h 30"): in the unit below, if
			// there is one, and the end of the value. (Multiplied by
			// none, an infinite number made NaN.)
			if b := below(unit); b > 0 {
				total += s * b
			}
			break
		}
		total, unit, rest = total+s, u, r
	}
	return total, true
}

// maxDelayParts is the most parts parseCrawlDelay reads of a Crawl-delay,
// one for each unit unitSeconds knows ("1y 1mo 1w 1d 1h 1m 1s 1ms").
const maxDelayParts = 8

// spaceRanges returns v with each range mark ('-', '~', "..", an en or em
// dash) that joins two ends without spaces spaced as " - " ("1-2 min" as
// "1 - 2 min", "1m-2m" as "1m - 2m"), so that the range reads as one
// spelled with spaces. A mark joins two ends when a digit, a letter, or a
// digit or letter and a point ("10.-20.", "1 min.-2 min.") comes before it and a
// digit after it (or a point, after '-'); an exponent's sign ("1e-3",
// "2.5E-1", "0x10p-1") is no mark. (Unspaced, "1m-2m" read as
// 1 with an unknown unit, a second, not two minutes.)
func spaceRanges(v string) string {
	at := func(i int) int { // the length of the mark at i, 0 if none
		if i == 0 {
			return 0
		}
		n := 0
		switch {
		case v[i] == '-' || v[i] == '~':
			n = 1
		case strings.HasPrefix(v[i:], ".."):
			n = 2
		case strings.HasPrefix(v[i:], "–"), strings.HasPrefix(v[i:], "—"):
			n = len("–")
		default:
			return 0
		}
		if i+n >= len(v) {
			return 0
		}
		b, a := v[i-1], v[i+n]
		if !isDigit(a) && (v[i] != '-' || a != '.') {
			return 0
		}
		var c byte // the byte before b
		if i >= 2 {
			c = v[i-2]
		}
		switch {
		case isDigit(b):
		case b == '.' && (isLetter(c) || isDigit(c)): // a unit or a number with a point ("1 min.-2 min.", "10.-20.")
		case !isLetter(b):
			return 0
		case v[i] == '-' && (b|0x20 == 'e' && (isDigit(c) || c == '.') || b|0x20 == 'p' && (isHexDigit(c) || c == '.')):
			return 0 // an exponent's sign, of a decimal or a hexadecimal number ("0x10p-1")
		}
		return n
	}
	first := -1
	for i := 1; i+1 < len(v) && first < 0; i++ {
		if at(i) > 0 {
			first = i
		}
	}
	if first < 0 {
		return v
	}
	var b strings.Builder
	b.Grow(len(v) + 8)
	b.WriteString(v[:first])
	for i := first; i < len(v); {
		if n := at(i); n > 0 {
			b.WriteString(" - ")
			i += n
			continue
		}
		b.WriteByte(v[i])
		i++
	}
	return b.String()
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isLetter(c byte) bool   { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isHexDigit(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

// firstWord returns the first word of s, after spaces and tabs, and what
// follows it.
func firstWord(s string) (word, rest string) {
	s = strings.TrimLeft(s, " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// rangeWord reports whether word joins the ends of a range ("5 to 10").
func rangeWord(word string) bool {
	switch strings.ToLower(word) {
	case "-", "to", "or", "–", "—", "~", "..":
		return true
	}
	return false
}

// crawlDelayPart reads the number at the start of v and its unit, as
// parseCrawlDelay describes, and returns its seconds, the seconds of its
// unit (0 if it names none unitSeconds knows), the word read as its unit,
// and what follows it.
func crawlDelayPart(v string) (s, unit float64, name, rest string, ok bool) {
	word, name, after := v, "", ""
	if i := strings.IndexAny(v, " \t"); i >= 0 {
		word, name = v[:i], strings.TrimLeft(v[i:], " \t")
		if j := strings.IndexAny(name, " \t"); j >= 0 {
			name, after = name[:j], name[j:]
		}
	}
	s, ok = parseSeconds(word)
	if !ok {
		if d, u, ok := goDuration(word); ok {
			return d, u, word, v[len(word):], true // "1m30s"
		}
		num := leadingNumber(word)
		glued := word[len(num):]
		if r, ok := strings.CutPrefix(glued, ","); ok && num != "" && !strings.Contains(num, ".") {
			// "1,5": a decimal comma, read as a point, not as 1;
			// "1,500" and "1,500,000", which may separate thousands,
			// are read so, the longer wait ("1,000.5" too).
			if d := leadingDigits(r); len(d) != 3 {
				num, glued = num+"."+d, r[len(d):]
			} else {
				// Appended, not concatenated: a line of a hundred
				// thousand groups would cost a copy of the number each.
				b := []byte(num)
				for {
					b, glued = append(b, d...), r[len(d):]
					if r, ok = strings.CutPrefix(glued, ","); !ok {
						break
					}
					if d = leadingDigits(r); len(d) != 3 {
						break
					}
				}
				if frac := leadingNumber(glued); strings.HasPrefix(frac, ".") {
					b, glued = append(b, frac...), glued[len(frac):]
				}
				num = string(b)
			}
		}
		if s, ok = parseSeconds(strings.TrimSuffix(num, ".")); !ok {
			return 0, 0, "", "", false
		}
		if glued != "" {
			// The unit is joined to the number: the word after it is
			// not its unit.
			name, after = glued, v[len(word):]
		}
	}
	if k := strings.IndexAny(name, ",;"); k >= 0 && k < len(name)-1 {
		// "min,30s", "m;30": the unit ends at its comma, and the next
		// part follows it. (name and after are v's, one after the
		// other: the rest is v's too, not a copy, which a line of
		// many parts would pay for each.)
		after = v[len(v)-len(after)-len(name)+k+1:]
		name = name[:k+1]
	}
	if k := strings.IndexAny(name, "0123456789"); k > 0 {
		if _, known := unitSeconds(name[:k]); known {
			// "min30s", "d12h", "hr30": a unit Go does not know,
			// joined to the next part, which follows it (read as one
			// unknown unit, "1min30s" was a second).
			after = v[len(v)-len(after)-len(name)+k:]
			name = name[:k]
		}
	}
	u, known := unitSeconds(name) // an unknown one, seconds
	if !known || name == "" {
		return s * u, 0, name, after, true
	}
	return s * u, u, name, after, true
}

// goDuration reads word as a Go duration ("1m30s"), its last number's unit
// left out in the unit below the one before it ("1h30" is 1h30m, "1m30"
// 1m30s), and returns its seconds and those of its last unit.
func goDuration(word string) (s, unit float64, ok bool) {
	if word == "" {
		return 0, 0, false
	}
	if c := word[len(word)-1]; c >= '0' && c <= '9' {
		i := strings.LastIndexFunc(word, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		switch {
		case i < 0:
			return 0, 0, false // a bare number: not a duration
		case word[i] == 'h':
			word += "m"
		case word[i] == 'm':
			word += "s"
		}
	}
	d, err := time.ParseDuration(word)
	if err != nil || d < 0 {
		return 0, 0, false
	}
	j := strings.LastIndexFunc(word, func(r rune) bool { return r >= '0' && r <= '9' || r == '.' })
	unit, _ = unitSeconds(strings.ReplaceAll(word[j+1:], "µ", "u"))
	return d.Seconds(), unit, true
}

// below returns the seconds of the unit below one of unit seconds, as a
// number after a part reads: minutes after hours, seconds after minutes;
// 0 for none.
func below(unit float64) float64 {
	switch unit {
	case 7 * 86400:
		return 86400
	case 86400:
		return 3600
	case 3600:
		return 60
	case 60:
		return 1
	}
	return 0
}

// unitSeconds returns the seconds of a unit of time as robots.txt files
// write it after a number: "s", "sec", "seconds" (and none), "ms", "m",
// "min", "minutes", "h", "hours", "d", "days", "w", "weeks", "mo",
// "months" (30 days), "y", "years" (365 days), in any case, trailing dots,
// commas and semicolons left out ("min,"). It reports whether it knows the
// unit.
func unitSeconds(unit string) (float64, bool) {
	switch strings.ToLower(strings.TrimRight(unit, ".,;")) {
	case "", "s", "sec", "secs", "second", "seconds":
		return 1, true
	case "ms", "msec", "msecs", "millisecond", "milliseconds":
		return 1e-3, true
	case "m", "min", "mins", "minute", "minutes":
		return 60, true
	case "h", "hr", "hrs", "hour", "hours":
		return 3600, true
	case "d", "day", "days":
		return 86400, true
	case "w", "wk", "wks", "week", "weeks":
		return 7 * 86400, true
	case "mo", "mon", "month", "months":
		return 30 * 86400, true
	case "y", "yr", "yrs", "year", "years":
		return 365 * 86400, true
	}
	return 1, false
}

// leadingDigits returns the decimal digits at the start of s.
func leadingDigits(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			return s[:i]
		}
	}
	return s
}

// parseRequestRate reads a Request-rate value, n requests per period:
// "1/5" or "1/5s" (seconds), "1/2m" or "1/10min" (minutes), "1/1h"
// (hours), "1/1d" (a day), units as unitSeconds reads them (another
// makes the record unreadable), written after a space too ("1/10 min");
// a time span that may follow ("1/5s 0600-0845") is ignored. It returns the period
// divided by n, in seconds.
func parseRequestRate(v string) (float64, bool) {
	var next string // the word after the rate: a unit, or a time span
	if i := strings.IndexAny(v, " \t"); i >= 0 {
		v, next = v[:i], strings.TrimLeft(v[i:], " \t")
		if j := strings.IndexAny(next, " \t"); j >= 0 {
			next = next[:j]
		}
	}
	slash := strings.IndexByte(v, '/')
	if slash < 0 {
		return 0, false
	}
	n, err := strconv.ParseFloat(v[:slash], 64)
	if err != nil || !(n > 0) || math.IsInf(n, 0) {
		return 0, false
	}
	p := v[slash+1:]
	num := leadingNumber(p)
	s, ok := parseSeconds(num)
	if !ok {
		return 0, false
	}
	unit := p[len(num):]
	if _, ok := unitSeconds(next); ok && unit == "" {
		unit = next // "1/10 min", as Crawl-delay's "10 min"
	}
	u, ok := unitSeconds(unit)
	if !ok {
		return 0, false
	}
	return s * u / n, true
}

// leadingNumber returns the number at the start of s: digits and dots,
// and an exponent.
func leadingNumber(s string) string {
	i := 0
	for i < len(s) && ('0' <= s[i] && s[i] <= '9' || s[i] == '.') {
		i++
	}
	// An exponent, "e3" or "E-2", when digits follow: "1e3s" is 1000
	// seconds, and "2e" or "5eons" end before their e.
	if i > 0 && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if d := leadingDigits(s[j:]); d != "" {
			i = j + len(d)
		}
	}
	return s[:i]
}

// parseSeconds parses a non-negative number; +Inf (written so, or out of
// range) is accepted, and capped by secondsInterval.
func parseSeconds(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 1) || !(f >= 0) {
		return 0, false
	}
	return f, true
}

// secondsInterval converts s seconds to a duration, at most maxCrawlInterval.
func secondsInterval(s float64) time.Duration {
	if s >= maxCrawlInterval.Seconds() {
		return maxCrawlInterval
	}
	return time.Duration(s * float64(time.Second))
}

// normalisePattern returns the path pattern of an allow or disallow record
// in the form paths are compared in: starting with '/' or '*' (a '/' is
// put before anything else), percent-encoding made canonical (see
// robotsEscape), runs of '*' made one.
func normalisePattern(p string) string {
	if p[0] != '/' && p[0] != '*' {
		p = "/" + p
	}
	p = robotsEscape(p, true)
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i+1] + queryDecoded(p[i+1:]) // see matchQuery
	}
	if strings.Contains(p, "**") {
		var b strings.Builder
		b.Grow(len(p))
		for i := 0; i < len(p); i++ {
			if p[i] == '*' && i > 0 && p[i-1] == '*' {
				continue
			}
			b.WriteByte(p[i])
		}
		p = b.String()
	}
	return p
}

// robotsEscape puts a path (with its query) or, when pattern is true, a
// path pattern into the one form both are compared in (RFC 9309 §2.2.2):
//   - octets outside printable US-ASCII, and those of it that are neither
//     reserved nor unreserved (RFC 3986 §2.2, §2.3: the double quote, '<',
//     '>', '\', '^', the backquote, '{', '|' and '}'), which net/http
//     always sends encoded, are percent-encoded; so are '[' and ']', which
//     it sends either way (a path parsed from a link keeps them, one built
//     from url.URL.Path or url.Values has them encoded) and servers read
//     alike;
//   - an encoded unreserved character (RFC 3986 §2.3) is decoded, and so
//     is an encoded character a path segment may hold as it is
//     ("!&'()+,;=:@", RFC 3986 §3.3), which clients encode or not as they
//     please (Go's url.URL.EscapedPath encodes "!'()", most servers
//     decode them alike): "/wiki/Foo_%28bar%29" is "/wiki/Foo_(bar)". So
//     it is in the query too, where "%26" and '&' differ to a server: a
//     pattern cannot say whether what follows its '*' is in the path or
//     in the query, and a rule aimed at the query ("/*=http%3A") must
//     match it. '/', '?', '*' and '$' stay encoded: they mean something
//     else as they are;
//   - '*' and '$' are encoded in a path, where they are the characters
//     themselves, and a pattern's "%2A" and "%24" match them (RFC 9309
//     §2.2.3: "/path/foo-%24" matches "/path/foo-$"); in a pattern, '*' is
//     the wildcard and a final '$' the end, and any other '$' is encoded;
//   - the hex digits of other encodings are upper-cased, and a '%' that
//     starts no encoding is itself encoded, as "%25", so that a decoded
//     character cannot complete it into one ("%0%61" is "%250a", not
//     "%0a", which a second pass would read differently).
//
// It returns s itself when nothing changes.
func robotsEscape(s string, pattern bool) string {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; mustEncode(c) || c == '%' || special(c, pattern, i == len(s)-1) {
			break
		}
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+8)
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) || isSegmentChar(v) {
				b = append(b, v)
			} else {
				b = append(b, '%', hex[v>>4], hex[v&15])
			}
			i += 2
		case mustEncode(c) || c == '%' || special(c, pattern, i == len(s)-1):
			b = append(b, '%', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// mustEncode reports whether robotsEscape percent-encodes the octet c
// wherever it is.
func mustEncode(c byte) bool {
	switch c {
	case '"', '<', '>', '\\', '^', '`', '{', '|', '}', '[', ']':
		return true
	}
	return c <= ' ' || c >= 0x7f
}

// special reports whether robotsEscape percent-encodes c, a character
// that a pattern gives a meaning: '*' and '$' in a path; in a pattern, a
// '$' that is not its last character.
func special(c byte, pattern, last bool) bool {
	if pattern {
		return c == '$' && !last
	}
	return c == '*' || c == '$'
}

// isSegmentChar reports whether c may stand unencoded in a path segment
// (RFC 3986 §3.3: a sub-delim, ':' or '@') and means the same encoded,
// for robotsEscape: neither '*' nor '$', which patterns give a meaning.
func isSegmentChar(c byte) bool {
	switch c {
	case '!', '&', '\'', '(', ')', '+', ',', ';', '=', ':', '@':
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// isUnreserved reports whether c is an unreserved character of RFC 3986
// §2.3: a letter, a digit, '-', '.', '_' or '~'.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// match returns the rule that decides path (already in the form of
// robotsEscape): the matching rule with the longest pattern, in octets
// (see octets), an allow winning a tie (RFC 9309 §2.2.2). It reports
// false when no rule matches, which allows path. Its cost is linear in the
// length of the patterns and, for each pattern, of path.
func (f *robotsFile) match(path string) (robotsRule, bool) {
	var best robotsRule
	found, most := false, 0
	for i := range f.ends {
		r := f.rule(i)
		n := octets(r.pattern)
		if found && (n < most || n == most && !r.allow) {
			continue
		}
		if robotsMatch(r.pattern, path) {
			best, found, most = r, true, n
		}
	}
	return best, found
}

// matchQuery is match of path, a path in the form of robotsEscape, whose
// query may spell '/' and '?' either way: in a query they are the same to
// servers as "%2F" and "%3F" (a query is not split in segments, nor ends
// at a second '?'), url.Values encodes them and links keep them, and RFC
// 9309 §2.2.2's table matches a rule "/foo/bar?baz=https://foo.bar" to
// "/foo/bar?baz=https%3A%2F%2Ffoo.bar". A pattern's query (after its
// first '?') is kept with them decoded (see normalisePattern); a pattern
// whose '*' spans the '?' ("/*=http%3A%2F%2F") does not say where its
// query begins, and keeps them as written. So path is matched as it is,
// with every one of them in its query decoded, then encoded, and the
// longest rule that matches any of them decides, an Allow winning a tie,
// as in match. In a path, "%2F" and '/' stay apart.
func (f *robotsFile) matchQuery(path string) (robotsRule, bool) {
	best, found := f.match(path)
	i := strings.IndexByte(path, '?')
	if i < 0 {
		return best, found
	}
	q := path[i+1:]
	if !strings.ContainsAny(q, "/?") && !strings.Contains(q, "%2F") && !strings.Contains(q, "%3F") {
		return best, found
	}
	try := func(alt string) {
		if alt == path {
			return
		}
		if r, ok := f.match(alt); ok && (!found || longer(r, best)) {
			best, found = r, true
		}
	}
	try(path[:i+1] + queryDecoded(q))
	try(path[:i+1] + queryEncoded(q))
	return best, found
}

// queryDecoded returns q, a query in the form of robotsEscape, with every
// "%2F" and "%3F" decoded.
func queryDecoded(q string) string {
	if !strings.Contains(q, "%2F") && !strings.Contains(q, "%3F") {
		return q
	}
	b := make([]byte, 0, len(q))
	for i := 0; i < len(q); i++ {
		if q[i] == '%' && i+2 < len(q) && q[i+1] == '2' && q[i+2] == 'F' {
			b, i = append(b, '/'), i+2
		} else if q[i] == '%' && i+2 < len(q) && q[i+1] == '3' && q[i+2] == 'F' {
			b, i = append(b, '?'), i+2
		} else {
			b = append(b, q[i])
		}
	}
	return string(b)
}

// queryEncoded returns q, a query in the form of robotsEscape, with every
// '/' and '?' encoded.
func queryEncoded(q string) string {
	if !strings.ContainsAny(q, "/?") {
		return q
	}
	b := make([]byte, 0, len(q)+16)
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case '/':
			b = append(b, "%2F"...)
		case '?':
			b = append(b, "%3F"...)
		default:
			b = append(b, q[i])
		}
	}
	return string(b)
}

// longer reports whether the rule a is the more specific of a and b: the
// longer pattern in octets, an Allow when they are as long.
func longer(a, b robotsRule) bool {
	n, m := octets(a.pattern), octets(b.pattern)
	return n > m || n == m && a.allow && !b.allow
}

// octets returns the length of a pattern in the form of robotsEscape
// counting each encoded octet once, as it is written decoded: which of
// two rules is the more specific does not hang on how either is encoded
// ("/a$b", encoded "/a%24b", is 4 octets, shorter than "/a*bc"). Every
// '%' there starts an encoding.
func octets(pattern string) int { return len(pattern) - 2*strings.Count(pattern, "%") }

// robotsMatch reports whether pattern matches path (RFC 9309 §2.2.3): the
// pattern matches a prefix of path, '*' standing for any run of
// characters and a final '$' for the end of path. Each literal run of the
// pattern is matched at its leftmost place after the previous one, which
// is enough with no other wildcard and keeps the cost linear.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		if anchored {
			return path == pattern
		}
		return strings.HasPrefix(path, pattern)
	}
	if !strings.HasPrefix(path, pattern[:star]) {
		return false
	}
	rest, pattern := path[star:], pattern[star+1:]
	for {
		star = strings.IndexByte(pattern, '*')
		if star < 0 {
			if anchored {
				return strings.HasSuffix(rest, pattern)
			}
			return strings.Contains(rest, pattern)
		}
		i := strings.Index(rest, pattern[:star])
		if i < 0 {
			return false
		}
		rest, pattern = rest[i+star:], pattern[star+1:]
	}
}
