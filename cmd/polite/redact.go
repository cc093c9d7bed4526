package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/origin"
)

// What polite prints never carries a credential (SECURITY.md): a URL's
// user information and query (which may hold an API key) are elided, and a
// partition key is shown by a hash.

// shownURL returns the URL raw as the commands print it: without its user
// information, and with its query, if any, replaced by "?…".
func shownURL(raw string) string {
	// A URL with no authority parsed may still carry a credential:
	// "user:password@host/x" parses as the scheme "user", opaque.
	if u, err := url.Parse(raw); err == nil && u.Opaque == "" && u.Host != "" {
		j, auth := authority(raw)
		if j >= 0 && (strings.LastIndexByte(raw, '@') > j+2+strings.LastIndexByte(auth, '@') ||
			u.User == nil && strings.Contains(u.Hostname(), ":") && !strings.HasPrefix(u.Host, "[")) {
			// An '@' past the one that ends the authority's user
			// information (past the "//" when it has none): user
			// information with a '/', '?' or '#' in its password parses
			// so too, its first part read as a host and port
			// ("http://user:1234#secret@host/"), or its part past an
			// '@' ("http://user:p@ss/secret@host/", password
			// "p@ss/secret"), and the two cannot be told apart.
			//
			// A host with a colon past its port, not an IP literal: the
			// first part of user information whose password holds a ':'
			// and a '#', '/' or '?' ("http://alice:pw:80#x@host/" is
			// parsed to its fragment as host "alice:pw", port 80).
			return raw[:j+2] + "…"
		}
		query := u.RawQuery != "" || u.ForceQuery
		fragment := u.Fragment != "" || u.RawFragment != ""
		u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
		s := u.String()
		if query {
			s += "?…"
		}
		if fragment {
			s += "#…"
		}
		return s
	}
	// Not a URL: cut what could be user information, then a query, by
	// hand (a password may hold a '?': the last '@' ends it). A '?' or
	// '#' before the last '@' may begin the query or fragment as well as
	// be part of a password, the '@' in the query or fragment
	// ("?email=a@b"): neither can be told from the other, and all past
	// the scheme is elided.
	s := raw
	if q, at := strings.IndexAny(s, "?#"), strings.LastIndexByte(s, '@'); q >= 0 && q < at {
		if j, _ := authority(s); j >= 0 {
			return s[:j+2] + "…"
		}
		return "…"
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		if j, _ := authority(s); j >= 0 && j < i {
			s = s[:j+2] + s[i+1:]
		} else {
			s = s[i+1:]
		}
	}
	if j, auth := authority(s); j >= 0 {
		// An authority that does not parse may be the first part of
		// user information whose password holds a '#', '/' or '?', the
		// rest cut off before the '@' (url.Parse drops a fragment first:
		// "http://user:pass#x@host/" fails as "http://user:pass", its
		// port no number; "https://to{ken#x@host/" as "https://to{ken",
		// a host with a byte no host has).
		if _, err := url.Parse("http://" + auth); err != nil {
			return s[:j+2] + "…"
		}
	}
	fragment := false
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, fragment = s[:i], true
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i] + "?…"
	}
	if fragment {
		s += "#…"
	}
	return s
}

// authority returns where the "//" that begins the authority of s is (-1
// if it has none: no "//", or one after anything but a scheme and its ':'
// (RFC 3986 §3.1), such as one in the path, query or fragment, or in the
// password of user information with no scheme, "alice:pa//ss@host") and
// what follows it up to a '/', '?' or '#'.
func authority(s string) (int, string) {
	j := strings.Index(s, "//")
	if j < 0 || j > 0 && !scheme(s[:j]) {
		return -1, ""
	}
	auth := s[j+2:]
	if k := strings.IndexAny(auth, "/?#"); k >= 0 {
		auth = auth[:k]
	}
	return j, auth
}

// scheme reports whether s is a scheme and its ':' (RFC 3986 §3.1:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":").
func scheme(s string) bool {
	if len(s) < 2 || s[len(s)-1] != ':' {
		return false
	}
	for i := range len(s) - 1 {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// shownError is an error whose text shows the URL of a *url.Error as
// shownURL does; it wraps the error, for errors.Is and errors.As.
type shownError struct {
	text string
	err  error
}

func (e *shownError) Error() string { return e.text }
func (e *shownError) Unwrap() error { return e.err }

// showError returns err, its text as shownText gives it, escaped (see
// escaped): an error may name a host a redirect's Location gave ("lookup
// \u009b2J.invalid: no such host"). It is for text; JSON escapes what
// does not print itself (see jsonSafe).
func showError(err error) error {
	s := escaped(shownText(err))
	if s == err.Error() {
		return err
	}
	return &shownError{text: s, err: err}
}

// shownText returns err's text, its URL shown as shownURL does when it is a
// *url.Error (which net/http's Client returns, with the whole URL but its
// password in its text).
func shownText(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err.Error()
	}
	return ue.Op + " " + strconv.Quote(shownURL(ue.URL)) + ": " + urlErrText(ue)
}

// escaped returns s with each rune that does not print escaped as Go
// writes it in a string (\x9b for a byte that is no UTF-8, \u009b for a
// C1 control, \u202e for a bidi override): what the server sent reaches
// the output (an Age, an Access-Control-Allow-Origin in inspect's
// findings, a redirect's host in an error), and net/http lets bytes from
// 0x80 through, CSI and OSC among them, which reached the terminal raw.
// (The JSON outputs escape them as JSON does: see jsonSafe.)
func escaped(s string) string {
	if printable(s) == s {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
				continue
			}
		}
		if !strconv.IsPrint(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// urlErrText returns the text of ue's Err, each quotation in it of a URL
// shown as shownURL shows it: the URL of a redirect's Location that did
// not parse, quoted by net/http, may hold a query. Any other quotation is
// elided, and so is what it quotes of a URL that did not parse itself: a
// password with a '/' in it ends the authority early, and the error
// quotes its first part as a port.
func urlErrText(ue *url.Error) string {
	s := quotedElided(ue)
	if j, auth := authority(ue.URL); j >= 0 && strings.HasSuffix(shownURL(ue.URL), "//…") {
		// The authority is elided: it may hold a password, and the
		// error may name it unquoted ("lookup alice:hunter2: no such
		// host"), whole, without its port, or past its '@'.
		parts := []string{auth, auth[:max(strings.LastIndexByte(auth, ':'), 0)], auth[strings.LastIndexByte(auth, '@')+1:]}
		if u, err := url.Parse(ue.URL); err == nil && u.Host != "" {
			// polite's own errors (a RobotsError's origin, a
			// WaitError's key) name the origin as it normalises it: in
			// lower case, what is not ASCII unescaped, the default
			// port cut ("http://alice:hunter2:80" for
			// "Alice:Hunter2:80", "pässwörd" for "p%C3%A4ssw%C3%B6rd");
			// elided as an origin, never as a bare word, which other
			// text may hold ("lookup", "tcp").
			scheme := strings.ToLower(u.Scheme)
			if n := origin.Normal(scheme, u.Host); n != "" {
				s = strings.ReplaceAll(s, scheme+"://"+n, scheme+"://…")
				// net/http dials the host in Punycode, and a TLS
				// error names it so, bare ("not xn--tss-qla").
				if h := origin.Normal(scheme, u.Hostname()); !isASCII(u.Hostname()) && h != "" {
					parts = append(parts, h)
				}
			}
			if strings.Contains(u.Host, ":") {
				parts = append(parts, u.Host) // unescaped, with its port
			}
		}
		for _, part := range parts {
			switch {
			case len(part) < 2:
			case strings.ContainsAny(part, ":@"):
				s = strings.ReplaceAll(s, part, "…") // an address
			default:
				// A bare name (a user name, or a host that may be a
				// piece of a password: "tpass" of "alice:s3cr@tpass/x@h")
				// is elided as a whole word, as errors name a host
				// ("not tpass", "lookup tpass"), not inside another
				// ("tc" of "tcp").
				s = replaceWord(s, part, "…")
			}
		}
		// The URL percent-encodes what is not ASCII, and the error names
		// the host looked up as the resolver got it: raw, or in
		// Punycode ("lookup xn--hunter2-cxa").
		var dns *net.DNSError
		if errors.As(ue.Err, &dns) && dns.Name != "" {
			s = strings.ReplaceAll(s, "lookup "+dns.Name, "lookup …")
		}
	}
	return s
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// replaceWord returns s with each occurrence of word that is a whole word
// (no letter, digit, '-', '_' or non-ASCII byte just before or after it)
// replaced by with.
func replaceWord(s, word, with string) string {
	inWord := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c >= 0x80
	}
	var b strings.Builder
	last := 0 // s[:last] is written
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], word)
		if i < 0 {
			break
		}
		i += from
		end := i + len(word)
		if (i == 0 || !inWord(s[i-1])) && (end == len(s) || !inWord(s[end])) {
			b.WriteString(s[last:i])
			b.WriteString(with)
			last, from = end, end
			continue
		}
		// Not a whole word here: one may begin inside this match
		// ("s3" of "xs3.s3"), so the search goes on from its next byte.
		from = i + 1
	}
	b.WriteString(s[last:])
	return b.String()
}

// quotedElided returns the text of ue's Err with its quotations shown as
// urlErrText says, and the Host a *polite.RobotsError names elided: it is
// the value of -H 'Host: …'. The rule such an error names is shown: it is
// the server's robots.txt's, and says which of its lines refused the URL.
func quotedElided(ue *url.Error) string {
	s := ue.Err.Error()
	rerr := (*polite.RobotsError)(nil)
	robots := errors.As(ue.Err, &rerr)
	if robots && rerr.Host != "" {
		s = strings.ReplaceAll(s, "(Host "+rerr.Host+")", "(Host …)")
	}
	s = eachQuotation(s, func(q string) string {
		if u, err := strconv.Unquote(q); ue.Op != "parse" && err == nil && strings.Contains(u, "//") {
			// A URL (a redirect's Location), shown as one; any other
			// quotation, a part of one (a port that is the first part
			// of a password), is elided.
			return strconv.Quote(shownURL(u))
		}
		return `"…"`
	})
	if elided := `(rule "…")`; robots && !rerr.Unreachable && strings.HasSuffix(s, elided) {
		s = strings.TrimSuffix(s, elided) + "(rule " + strconv.Quote(rerr.Rule) + ")"
	}
	return s
}

// shownQuotations returns s with each quotation in it shown as shownURL
// shows a URL, and what follows a quotation that does not end elided.
func shownQuotations(s string) string {
	return eachQuotation(s, func(q string) string {
		u, _ := strconv.Unquote(q)
		return strconv.Quote(shownURL(u))
	})
}

// eachQuotation returns s with each Go quotation in it (as
// strconv.QuotedPrefix reads one) replaced by shown of it; a quotation
// that does not end is elided with the rest of s, as "…" quoted.
func eachQuotation(s string, shown func(q string) string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		q, err := strconv.QuotedPrefix(s[i:])
		if err != nil {
			b.WriteString(`"…"`)
			return b.String() // not a quotation that ends: cut the rest
		}
		b.WriteString(shown(q))
		s = s[i+len(q):]
	}
}

// shownArgs returns args quoted as %q quotes them, each shown as shownArg
// shows it: an argument given by mistake may be a URL with a credential,
// or a credential.
func shownArgs(args []string) string {
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = shownArg(a)
	}
	return fmt.Sprintf("%q", shown)
}

// shownArg returns an argument as the commands print it: a URL with a
// scheme as shownURL shows it, anything else elided, as "…". An argument
// that is no URL may be a credential, split off by the shell from an -H
// value left unquoted (-H Authorization: Bearer $TOKEN).
func shownArg(a string) string {
	if !hasScheme(a) {
		return "…"
	}
	return shownURL(a)
}

// hasScheme reports whether s starts with a scheme and "://", as a URL
// with a host does; a "://" after a '/', '?' or '#' is not one.
func hasScheme(s string) bool {
	i := strings.Index(s, "://")
	return i > 0 && scheme(s[:i+1])
}

// shownField returns the value of a draft-11 field as the commands quote
// it: each partition key (a pk parameter, well formed or not) shown by its
// hash, as shownPartition shows it, since it may be a credential. A pk is
// its name in any case, spaces or not before its '=', and its value runs
// to the next ';' or ',' outside a String (escapes read) and an Inner List:
// what a malformed value holds, past a quote escaped or a space, is hashed
// with it.
func shownField(v string) string {
	var b strings.Builder
	for {
		i := pkValue(v)
		if i < 0 {
			b.WriteString(v)
			return b.String()
		}
		n := paramEnd(v[i:])
		b.WriteString(v[:i])
		b.WriteString(shownPartition([]byte(strings.Trim(v[i:i+n], " \t"))))
		v = v[i+n:]
	}
}

// pkValue returns where the value of the first pk parameter of v starts,
// after its '='; -1 when there is none.
func pkValue(v string) int {
	for i := 0; i+1 < len(v); i++ {
		if v[i]|0x20 != 'p' || v[i+1]|0x20 != 'k' {
			continue
		}
		j := i + 2
		for j < len(v) && (v[j] == ' ' || v[j] == '\t') {
			j++
		}
		if j < len(v) && v[j] == '=' {
			return j + 1
		}
	}
	return -1
}

// paramEnd returns where the parameter value that s starts with ends: at
// the first ';' or ',' outside a String and an Inner List, or at the end.
func paramEnd(s string) int {
	quoted, depth := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++ // the escaped byte
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0 && (c == ';' || c == ','):
			return i
		}
	}
	return len(s)
}

// shownPartition returns a partition key as the commands print it:
// "sha256:" and the first 16 hex digits of its hash, as polite's own
// inspection does; "" when there is none.
func shownPartition(pk []byte) string {
	if len(pk) == 0 {
		return ""
	}
	sum := sha256.Sum256(pk)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// writeJSON writes v to w as one line of JSON (HTML left as it is), each
// rune in it that does not print written as a JSON escape (see jsonSafe).
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonSafe(b.Bytes()))
	return err
}

// jsonSafe returns b, JSON text, with each rune that does not print (a C1
// control, a bidi override, DEL) written as a JSON escape ("\u202e"):
// encoding/json escapes the controls below 0x20 alone, and let the others
// reach a terminal raw. A JSON escape reads back as the same string, so
// that a policy's name, say, is the server's still.
func jsonSafe(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == '\n' || r >= ' ' && r != utf8.RuneError && strconv.IsPrint(r):
			out = append(out, b[i:i+size]...)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		default: // a byte that is no UTF-8 too, which encoding/json never writes
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	return out
}

// minSecret is the shortest value of a credential field the commands
// elide where a server echoes it: a shorter one would blank words of the
// report wherever its letters are.
const minSecret = 6

// secrets returns the credentials of the collected headers whose names may
// carry one (see credentialName), and of the userinfo of urls, each at
// least minSecret bytes, as servers echo them: a field's value whole, and
// without its first word (a scheme: "Bearer sk-…" echoed as "sk-…", in an
// Authorization or an X-Auth-Token alike); a Basic credential decoded,
// and its password (or its user, when the password is empty: an API key
// as the user, as Stripe's "sk_…:"); a Cookie's values that may be
// credentials (see credentialCookie); a URL's password, its user and
// password, and the Basic credential net/http sends for them; the values
// of a URL's query (?api_key=…), decoded. Longest first, so that one that
// holds another is elided whole.
func (h headerFlag) secrets(urls ...string) []string { return h.secretsOf(urls, true) }

// credentials is secrets without the values of the URLs' queries, which
// may be words and numbers of the report (?sort=status, ?size=100000):
// what JSON output elides in its numbers too (see elideJSON).
func (h headerFlag) credentials(urls ...string) []string { return h.secretsOf(urls, false) }

// secretsOf is secrets, the values of the URLs' queries with query.
func (h headerFlag) secretsOf(urls []string, query bool) []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecret {
			out = append(out, v)
		}
	}
	basic := func(userPass string) {
		add(userPass)
		if user, pass, _ := strings.Cut(userPass, ":"); pass != "" {
			add(pass)
		} else {
			add(user)
		}
	}
	for _, s := range h {
		name, value, _ := strings.Cut(s, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !credentialName(name) {
			continue
		}
		add(value)
		if strings.EqualFold(name, "Cookie") {
			for c := range strings.SplitSeq(value, ";") {
				if n, v, ok := strings.Cut(c, "="); ok && credentialCookie(strings.TrimSpace(n), strings.Trim(strings.TrimSpace(v), `"`)) {
					add(strings.Trim(strings.TrimSpace(v), `"`))
				}
			}
			continue
		}
		if i := strings.IndexAny(value, " \t"); i >= 0 {
			scheme, cred := value[:i], strings.TrimSpace(value[i:])
			add(cred)
			if strings.EqualFold(scheme, "Basic") {
				// Padded or not: servers decode either.
				b, err := base64.StdEncoding.DecodeString(cred)
				if err != nil {
					b, err = base64.RawStdEncoding.DecodeString(cred)
				}
				if err == nil {
					basic(string(b))
				}
			}
		}
	}
	for _, raw := range urls {
		target, _ := assumeHTTP(strings.TrimSpace(raw))
		u, err := url.Parse(target)
		if err != nil {
			continue
		}
		// Each value of the query, and of a fragment so written: the
		// commands never show a URL's query, which may hold an API key,
		// and a server may echo one (a resource named after it, a
		// problem's title, a redirect's path).
		if query {
			queryValues(add, u.RawQuery)
			queryValues(add, u.Fragment)
		}
		if u.User == nil {
			continue
		}
		// What net/http sends for the userinfo: Basic user:password,
		// decoded (url.Parse unescapes both).
		pass, _ := u.User.Password()
		userPass := u.User.Username() + ":" + pass
		basic(userPass)
		add(base64.StdEncoding.EncodeToString([]byte(userPass)))
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// queryValues calls add with each value of the query q, decoded when it
// decodes, for the first maxQueryValues parameters with a value. A
// parameter ends at '&'; one that holds ';', which many servers split on
// too, gives its value whole and the value of each of its parts. A
// parameter with no '=' is its own value when it looks like a token
// ("?sk-live-…"; see tokenLike), not a word ("&stream"), which elided
// would blank that word wherever the report has it.
func queryValues(add func(string), q string) {
	n := 0
	value := func(param string) bool {
		_, v, ok := strings.Cut(param, "=")
		if !ok && tokenLike(param) {
			v = param
		}
		if v == "" {
			return true
		}
		if n++; n > maxQueryValues {
			return false
		}
		if d, err := url.QueryUnescape(v); err == nil {
			v = d
		}
		add(v)
		return true
	}
	for param := range strings.SplitSeq(q, "&") {
		if !value(param) {
			return
		}
		if strings.IndexByte(param, ';') < 0 {
			continue
		}
		for part := range strings.SplitSeq(param, ";") {
			if !value(part) {
				return
			}
		}
	}
}

// tokenLike reports whether a bare query parameter may be a credential: it
// holds a digit, or is 16 bytes or more, as API keys do; a word ("pretty",
// "stream") is neither.
func tokenLike(s string) bool {
	return len(s) >= 16 || strings.ContainsAny(s, "0123456789")
}

// maxQueryValues bounds the values of a URL's query elided one by one: a
// query of more, which no API key needs, is never shown anyway.
const maxQueryValues = 32

// credentialCookie reports whether a cookie of this name and value may be
// a credential: its name holds a word of credentialName's, or "sid" or
// "sess" (PHPSESSID, connect.sid, _gh_sess), or its value is 16 bytes or
// more, as a token is. A preference (theme=dark, region=eu-west-1) is
// shown: elided, its words vanished from the report wherever they were.
func credentialCookie(name, value string) bool {
	lower := strings.ToLower(name)
	return credentialName(name) || strings.Contains(lower, "sid") || strings.Contains(lower, "sess") || len(value) >= 16
}

// credentialName reports whether a request header field of this name may
// carry a credential: a name holding, in any case, one of the words
// polite's own logs judge so by (Authorization, Cookie, X-Api-Key,
// X-Auth-Token, Private-Token, X-Amz-Security-Token…). A name so made that
// holds none (an Idempotency-Key) is elided too: a report loses little.
func credentialName(name string) bool {
	name = strings.ToLower(name)
	for _, w := range [...]string{"auth", "cookie", "key", "token", "secret", "session", "password", "passwd", "credential", "signature"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// elideSecrets returns s with each secret replaced by "…" wherever it
// occurs in any spelling the commands' output may give it (see spellings),
// the longest first, then wherever it occurs percent-encoded, in part or
// whole (see elideEncoded).
func elideSecrets(s string, secrets []string) string {
	var all []string
	for _, x := range secrets {
		all = append(all, spellings(x)...)
	}
	slices.SortFunc(all, func(a, b string) int { return len(b) - len(a) })
	for _, x := range slices.Compact(all) {
		s = strings.ReplaceAll(s, x, "…")
	}
	for _, x := range secrets {
		s = elideEncoded(s, x)
	}
	return s
}

// elideJSON returns b, JSON text (one value, as writeJSON or json.Marshal
// writes it), with each secret elided in its strings as elideSecrets
// elides it, and each number holding one of numeric written as the string
// "…"; its object keys, the commands' own names, are left as they are.
// Elided over the text, a value of a URL's query that was also a number
// or a key of the report (?size=100000, ?sort=status) made it "bytes":…
// or "…":200, which no JSON reader takes.
func elideJSON(b []byte, secrets, numeric []string) []byte {
	var out []byte
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(b)) // past the closing quote
			lit := b[i:j]
			k := j
			for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
				k++
			}
			var v string
			if k < len(b) && b[k] == ':' || json.Unmarshal(lit, &v) != nil {
				out = append(out, lit...) // a key, kept
			} else if e := elideSecrets(v, secrets); e != v {
				out = append(out, jsonQuote(e)...)
			} else {
				out = append(out, lit...)
			}
			i = j
		case c == '-' || '0' <= c && c <= '9':
			j := i + 1
			for j < len(b) && strings.IndexByte("0123456789.eE+-", b[j]) >= 0 {
				j++
			}
			if num := string(b[i:j]); slices.ContainsFunc(numeric, func(x string) bool { return strings.Contains(num, x) }) {
				out = append(out, `"…"`...)
			} else {
				out = append(out, b[i:j]...)
			}
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// spellings returns x as the commands' output may spell it: as sent,
// escaped as Go escapes what does not print, quoted as Go quotes it (a
// policy's name, a finding's quotation), as a JSON string (writeJSON, and
// encoding/json's HTML escapes of a get record), and a Go quotation as a
// JSON string (a finding of inspect -json): quotes left out.
func spellings(x string) []string {
	inner := func(q string) string { return q[1 : len(q)-1] }
	marshal := func(v string) string {
		b, _ := json.Marshal(v) // HTML escaped, as a get record is
		return inner(string(b))
	}
	asJSON := func(v string) string { return inner(string(jsonQuote(v))) }
	goq := inner(strconv.Quote(x))
	return []string{x, escaped(x), goq, asJSON(x), marshal(x), asJSON(goq), marshal(goq), asJSON(escaped(x))}
}

// elideEncoded returns s with each occurrence of x in which any byte may
// be percent-encoded, its hex digits in either case, and a space may be a
// '+', replaced by "…": a redirect's Location, shown as the server
// encoded it, may encode a credential as any library does (Go's
// url.PathEscape, Python's quote leaving '/', lower-case hex). It takes
// time len(s) times len(x) at most, and none when s holds no '%' or '+'.
func elideEncoded(s, x string) string {
	if x == "" || !strings.ContainsAny(s, "%+") {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if n := matchEncoded(s[i:], x); n > 0 {
			b.WriteString(s[last:i])
			b.WriteString("…")
			last = i + n
			i = last - 1
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matchEncoded returns the length of the prefix of s that spells x, each
// byte of it as it is or percent-encoded (a space as '+' too); 0 when s
// does not start with x so spelled.
func matchEncoded(s, x string) int {
	j := 0
	for k := 0; k < len(x); k++ {
		switch c := x[k]; {
		case j < len(s) && (s[j] == c || c == ' ' && s[j] == '+'):
			j++
		case j+2 < len(s) && s[j] == '%' && unhex(s[j+1])<<4|unhex(s[j+2]) == int(c) && unhex(s[j+1]) >= 0 && unhex(s[j+2]) >= 0:
			j += 3
		default:
			return 0
		}
	}
	return j
}

// unhex returns the value of the hex digit c, in either case; -1 if it is
// none.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// jsonQuote returns x as writeJSON spells a string, quotes included.
func jsonQuote(x string) []byte {
	var b bytes.Buffer
	writeJSON(&b, x)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
