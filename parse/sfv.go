package parse

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// This file reads RFC 9651 Structured Fields (https://www.rfc-editor.org/rfc/rfc9651)
// without allocating: a scanner that checks the whole grammar of Lists
// (§4.2.1) and Dictionaries (§4.2.2), every bare item type of §3.3
// included, and hands each member's bare item and parameters to the
// readers of ietf.go and rlfields.go, which decode only what they keep.
// Its time is linear in the length of the field. It accepts exactly what
// github.com/dunglas/httpsfv accepts, which the tests and FuzzSFV check
// on every input; httpsfv builds a map per parameter set and costs
// microseconds per member, seconds for a 10 MB field.

// An sfKind is the type of a bare item (RFC 9651 §3.3), or an Inner List.
type sfKind uint8

const (
	sfInteger sfKind = iota + 1
	sfDecimal
	sfString
	sfToken
	sfBytes
	sfBoolean
	sfDate
	sfDisplay
	sfInner // an Inner List, as a list or dictionary member
)

// An sfValue is a bare item as scanned.
type sfValue struct {
	kind sfKind
	esc  bool   // a String holding escapes
	n    int64  // an Integer, a Date's seconds; a Boolean is 0 or 1
	raw  string // a String between its quotes, escapes kept; a Byte Sequence's base64 text; a Token
}

// str returns the value of a String.
func (v sfValue) str() string {
	if !v.esc {
		return v.raw
	}
	return unescape(v.raw)
}

// unescape removes the backslashes of a String's escapes (\" and \\,
// the only two RFC 9651 §3.3.3 allows).
func unescape(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' {
			i++
		}
		b.WriteByte(raw[i])
	}
	return b.String()
}

// decode returns the bytes of a Byte Sequence, never nil (an empty one is
// an empty slice).
func (v sfValue) decode() []byte {
	b, _ := base64.StdEncoding.DecodeString(v.raw) // valid: checked by bytes
	return b
}

// Character classes of RFC 9651.
const (
	cTchar  = 1 << iota // a Token character after the first (§3.3.4, with ":" and "/")
	cKey                // a key character after the first (§3.1.2)
	cBase64             // a Byte Sequence character (§3.3.5)
	cChar               // a String character other than DQUOTE and "\\" (§3.3.3)
)

var class = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		alpha := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		digit := '0' <= c && c <= '9'
		if alpha || digit || strings.IndexByte("!#$%&'*+-.^_`|~:/", byte(c)) >= 0 {
			t[c] |= cTchar
		}
		if 'a' <= c && c <= 'z' || digit || strings.IndexByte("_-.*", byte(c)) >= 0 {
			t[c] |= cKey
		}
		if alpha || digit || strings.IndexByte("+/=", byte(c)) >= 0 {
			t[c] |= cBase64
		}
		if 0x20 <= c && c < 0x7f && c != '"' && c != '\\' {
			t[c] |= cChar
		}
	}
	return t
}()

// An sfScanner reads a field value from s[i:].
type sfScanner struct {
	s string
	i int
}

// sp skips SP.
func (c *sfScanner) sp() {
	for c.i < len(c.s) && c.s[c.i] == ' ' {
		c.i++
	}
}

// ows skips SP and HTAB.
func (c *sfScanner) ows() {
	for c.i < len(c.s) && (c.s[c.i] == ' ' || c.s[c.i] == '\t') {
		c.i++
	}
}

// next moves past the end of a List or Dictionary member: optional white
// space, then the end of the field (more is false) or a comma and the
// start of another member. ok is false when neither follows, or the comma
// is trailing.
func (c *sfScanner) next() (more, ok bool) {
	c.ows()
	switch {
	case c.i == len(c.s):
		return false, true
	case c.s[c.i] != ',':
		return false, false
	}
	c.i++
	c.ows()
	more = c.i < len(c.s)
	return more, more
}

// member scans a List or Dictionary member's value: an Inner List with
// its parameters (then v.kind is sfInner), or a bare item, whose
// parameters are left for param.
func (c *sfScanner) member() (v sfValue, ok bool) {
	if c.i < len(c.s) && c.s[c.i] == '(' {
		return sfValue{kind: sfInner}, c.innerList() && c.skipParams()
	}
	return c.bareItem()
}

// innerList scans an Inner List (§4.2.1.2) up to its closing parenthesis.
func (c *sfScanner) innerList() bool {
	c.i++ // (
	for {
		c.sp()
		if c.i == len(c.s) {
			return false
		}
		if c.s[c.i] == ')' {
			c.i++
			return true
		}
		if _, ok := c.bareItem(); !ok || !c.skipParams() {
			return false
		}
		if c.i == len(c.s) || c.s[c.i] != ')' && c.s[c.i] != ' ' {
			return false
		}
	}
}

// Results of param.
const (
	paramEnd   = iota // no more parameters
	paramOK           // a parameter was read
	paramError        // a syntax error
)

// param scans one parameter (§4.2.3.2), ";" SP* key ["=" bare-item], if
// one starts here. A parameter without a value is the Boolean true.
func (c *sfScanner) param() (key string, v sfValue, status int) {
	if c.i == len(c.s) || c.s[c.i] != ';' {
		return "", v, paramEnd
	}
	c.i++
	c.sp()
	key, ok := c.key()
	if !ok {
		return "", v, paramError
	}
	if c.i == len(c.s) || c.s[c.i] != '=' {
		return key, sfValue{kind: sfBoolean, n: 1}, paramOK
	}
	c.i++
	if v, ok = c.bareItem(); !ok {
		return "", v, paramError
	}
	return key, v, paramOK
}

// skipParams scans the parameters of a member whose parameters do not
// matter.
func (c *sfScanner) skipParams() bool {
	for {
		switch _, _, st := c.param(); st {
		case paramEnd:
			return true
		case paramError:
			return false
		}
	}
}

// key scans a key (§4.2.3.3).
func (c *sfScanner) key() (string, bool) {
	start := c.i
	if c.i == len(c.s) || !('a' <= c.s[c.i] && c.s[c.i] <= 'z' || c.s[c.i] == '*') {
		return "", false
	}
	c.i++
	for c.i < len(c.s) && class[c.s[c.i]]&cKey != 0 {
		c.i++
	}
	return c.s[start:c.i], true
}

// bareItem scans a bare item (§4.2.3.1).
func (c *sfScanner) bareItem() (sfValue, bool) {
	if c.i == len(c.s) {
		return sfValue{}, false
	}
	switch b := c.s[c.i]; {
	case b == '"':
		return c.string()
	case b == '-' || isDigit(b):
		return c.number()
	case 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || b == '*':
		start := c.i
		c.i++
		for c.i < len(c.s) && class[c.s[c.i]]&cTchar != 0 {
			c.i++
		}
		return sfValue{kind: sfToken, raw: c.s[start:c.i]}, true
	case b == ':':
		return c.bytes()
	case b == '?':
		if c.i+1 < len(c.s) && (c.s[c.i+1] == '0' || c.s[c.i+1] == '1') {
			c.i += 2
			return sfValue{kind: sfBoolean, n: int64(c.s[c.i-1] - '0')}, true
		}
	case b == '@':
		c.i++
		if v, ok := c.number(); ok && v.kind == sfInteger {
			return sfValue{kind: sfDate, n: v.n}, true
		}
	case b == '%':
		return c.displayString()
	}
	return sfValue{}, false
}

// number scans an Integer or a Decimal (§4.2.4): at most 15 digits, or
// at most 12 digits, a dot and one to three digits.
func (c *sfScanner) number() (sfValue, bool) {
	i := c.i
	neg := i < len(c.s) && c.s[i] == '-'
	if neg {
		i++
	}
	start := i
	var n int64 // wraps past 18 digits, which are rejected below
	for i < len(c.s) && isDigit(c.s[i]) {
		n = n*10 + int64(c.s[i]-'0')
		i++
	}
	whole := i - start
	if whole == 0 {
		return sfValue{}, false
	}
	if i < len(c.s) && c.s[i] == '.' {
		i++
		frac := i
		for i < len(c.s) && isDigit(c.s[i]) {
			i++
		}
		if whole > 12 || i == frac || i-frac > 3 {
			return sfValue{}, false
		}
		c.i = i
		return sfValue{kind: sfDecimal}, true
	}
	if whole > 15 {
		return sfValue{}, false
	}
	c.i = i
	if neg {
		n = -n
	}
	return sfValue{kind: sfInteger, n: n}, true
}

// string scans a String (§4.2.5).
func (c *sfScanner) string() (sfValue, bool) {
	start := c.i + 1
	esc := false
	for i := start; ; i += 2 {
		for i < len(c.s) && class[c.s[i]]&cChar != 0 {
			i++
		}
		switch {
		case i == len(c.s):
			return sfValue{}, false
		case c.s[i] == '"':
			c.i = i + 1
			return sfValue{kind: sfString, raw: c.s[start:i], esc: esc}, true
		case c.s[i] != '\\' || i+1 == len(c.s) || c.s[i+1] != '"' && c.s[i+1] != '\\':
			return sfValue{}, false
		}
		esc = true
	}
}

// bytes scans a Byte Sequence (§4.2.7) whose base64 text decodes.
func (c *sfScanner) bytes() (sfValue, bool) {
	start := c.i + 1
	for i := start; i < len(c.s); i++ {
		b := c.s[i]
		if b == ':' {
			raw := c.s[start:i]
			if !validBase64(raw) {
				return sfValue{}, false
			}
			c.i = i + 1
			return sfValue{kind: sfBytes, raw: raw}, true
		}
		if class[b]&cBase64 == 0 {
			return sfValue{}, false
		}
	}
	return sfValue{}, false
}

// validBase64 reports whether [base64.StdEncoding] decodes s, made of
// base64 characters and "=": whole quanta of four, with "=" only as the
// padding at the end of the last one. Non-zero pad bits are accepted, as
// RFC 9651 §4.2.7 recommends and StdEncoding does.
func validBase64(s string) bool {
	if len(s)%4 != 0 {
		return false
	}
	i := strings.IndexByte(s, '=')
	switch {
	case i < 0:
		return true
	case i == len(s)-1:
		return true
	case i == len(s)-2:
		return s[len(s)-1] == '='
	default:
		return false
	}
}

// displayString scans a Display String (§4.2.10): percent-encoded
// octets with lower-case hex digits, forming valid UTF-8.
func (c *sfScanner) displayString() (sfValue, bool) {
	if c.i+1 == len(c.s) || c.s[c.i+1] != '"' {
		return sfValue{}, false
	}
	var u utf8Check
	for i := c.i + 2; i < len(c.s); i++ {
		b := c.s[i]
		switch {
		case b == '"':
			c.i = i + 1
			return sfValue{kind: sfDisplay}, u.n == 0
		case b == '%':
			if i+2 >= len(c.s) {
				return sfValue{}, false
			}
			hi, ok1 := unhex(c.s[i+1])
			lo, ok2 := unhex(c.s[i+2])
			if !ok1 || !ok2 {
				return sfValue{}, false
			}
			b = hi<<4 | lo
			i += 2
		case b < 0x20 || b >= 0x7f:
			return sfValue{}, false
		}
		if !u.add(b) {
			return sfValue{}, false
		}
	}
	return sfValue{}, false
}

// unhex reads a lower-case hex digit.
func unhex(b byte) (byte, bool) {
	switch {
	case isDigit(b):
		return b - '0', true
	case 'a' <= b && b <= 'f':
		return b - 'a' + 10, true
	}
	return 0, false
}

// A utf8Check checks that a stream of bytes is valid UTF-8, one rune at a
// time; n is the length of the rune in progress.
type utf8Check struct {
	buf [utf8.UTFMax]byte
	n   int
}

// add appends b, reporting false once the stream is invalid.
func (u *utf8Check) add(b byte) bool {
	if u.n == 0 && b < utf8.RuneSelf {
		return true
	}
	u.buf[u.n] = b
	u.n++
	if !utf8.FullRune(u.buf[:u.n]) {
		return true
	}
	ok := utf8.Valid(u.buf[:u.n])
	u.n = 0
	return ok
}
