package polite

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// EventKind says what an [Event] reports.
type EventKind string

// The kinds of [Event].
const (
	// EventWait: a request waited for its budget before being sent. Wait is
	// how long it waited and Reason why (what it waited longest for).
	EventWait EventKind = "wait"
	// EventRetry: a refused response will be retried after Wait, for Reason;
	// with Transport.RetryTransient, also a transient failure (Reason
	// ReasonTransient; Status 0 and Err set for a connection error).
	EventRetry EventKind = "retry"
	// EventGiveUp: a refused response goes back to the caller: attempts are
	// spent, the wait is too long, or the request cannot be replayed. Wait
	// is the wait the server asked for, when known. A retry whose
	// GetBody fails gives up too, with GetBody's error in Err: the
	// caller gets that error.
	// With Transport.RetryTransient, a transient failure that goes back to
	// the caller is a give-up too, with Reason ReasonTransient (or why the
	// retry budget denied it) and Status 0 for a connection error. So is
	// an attempt that waited past the robots.txt it was decided by and
	// is refused by the file in force (see Transport.Robots), with the
	// *RobotsError in Err and Status 0, and a retry that a quota another
	// answer stated meanwhile has no room for, with the *CostError the
	// caller gets in Err, Reason ReasonQuota and Status 0.
	EventGiveUp EventKind = "give-up"
	// EventObserve: a response carried rate-limit fields that the budget
	// read. Quotas says how many.
	EventObserve EventKind = "observe"
	// EventStop: the server reported abnormal usage (RFC 9457 problem type
	// abnormal-usage-detected); the response goes back to the caller and
	// the batch that sent it should stop, not retry harder.
	EventStop EventKind = "stop"
	// EventStoreDown: the Budget's Store failed (Err says how); requests go
	// on with a private in-memory state per key, pacing by what this
	// process sees, until the Store answers again. Reported once per
	// failure, not once per request.
	EventStoreDown EventKind = "store-down"
	// EventStoreUp: the Budget's Store answers again after EventStoreDown.
	EventStoreUp EventKind = "store-up"
	// EventWaitError: an attempt was not sent, because the wait it needed
	// was too long (a retry's, when Attempt is above 1: an earlier attempt
	// was sent); Err is the *WaitError the caller gets, Wait its Delay and
	// Reason its Reason.
	EventWaitError EventKind = "wait-error"
)

// Event reports one thing a Transport did or learned, to [Transport.OnEvent]
// and [Transport.Logger]. It never carries a partition key, and never a
// key from a custom Transport.Key, which may hold a credential, other than
// as its fingerprint; in Err, a custom key of 6 bytes or more is hidden
// where a Store's or Base's error quotes it (a shorter one, no credential,
// is too common a string to replace). Logged with log/slog (slog.Any("event", e)), it is
// what the Transport's Logger records of it (see [Event.LogValue]).
type Event struct {
	Kind EventKind // what happened
	// Time is when it happened, by the Transport's clock: for an event
	// about an answer, when its headers arrived (reading a refusal's
	// problem document may report it up to a second later); for
	// EventWait, when the wait ended; otherwise when the Transport
	// reported it.
	Time time.Time
	// Key is the budget key: the origin, or, for a key from a custom
	// Transport.Key, its fingerprint ("key-" and 8 hex digits; the same
	// for the same key within one Budget, as in State.Key).
	Key     string
	Request *http.Request // the caller's request; it must not be modified. Nil for an EventStoreDown or EventStoreUp found after RoundTrip returned (by a wait that ended)
	Attempt int           // 1 for the first send of a request
	Status  int           // status of the response, when there is one
	Wait    time.Duration // EventWait: time waited; EventRetry, EventGiveUp: time asked for (EventRetry: the least, for a probe of a server that states nothing, which may wait longer: see DESIGN.md §6)
	Reason  Reason        // why it waits, or waited
	Quotas  int           // EventObserve: how many quotas the response described
	// Err is the Store's error for EventStoreDown, the *WaitError for
	// EventWaitError, Base's error for the EventRetry or EventGiveUp of
	// a transient connection failure, and GetBody's error for the
	// EventGiveUp of a retry that could not rewind its body (Status 0:
	// the attempt was not sent), the *RobotsError of an attempt
	// robots.txt refused after its wait, and the *CostError of a retry no
	// quota has room for. Base's and GetBody's errors are wrapped:
	// their text hides what a log record hides of the request (its
	// credentials, query and custom key, should the error quote them),
	// and errors.Is and errors.As find the error itself.
	Err error
}

// emit reports e to OnEvent and Logger, if set.
//
// A log record carries only what its kind has: always the key; but for
// the Store's health, the request's method and URL path (never its query, which may hold a secret,
// and no path at all when the Transport has a custom Key, which may be
// built from it) and attempt; the status of a response; the wait and its
// reason; the number of quotas an observation read; an error. Durations
// are rounded (see roundDuration).
func (t *Transport) emit(e Event) {
	if t.OnEvent != nil {
		t.OnEvent(e)
	}
	if t.Logger == nil {
		return
	}
	level := slog.LevelDebug
	switch e.Kind {
	case EventGiveUp, EventStop, EventStoreDown, EventWaitError, EventAbandoned:
		level = slog.LevelWarn
	case EventRetry, EventStoreUp:
		level = slog.LevelInfo
	}
	ctx := context.Background()
	if e.Request != nil {
		ctx = e.Request.Context()
	}
	if !t.Logger.Enabled(ctx, level) {
		return
	}
	var buf [9]slog.Attr
	attrs := e.attrs(buf[:0], t.Key != nil)
	t.Logger.LogAttrs(ctx, level, "polite: "+string(e.Kind), attrs...)
}

// attrs appends to attrs what a log record of e carries (see emit); custom
// says the Transport has a custom Key, which may be built from the
// request's path: the path is then left out.
func (e *Event) attrs(attrs []slog.Attr, custom bool) []slog.Attr {
	attrs = append(attrs, slog.String("key", e.Key))
	if r := e.Request; r != nil && e.Kind != EventStoreDown && e.Kind != EventStoreUp {
		attrs = append(attrs, slog.String("method", logMethod(r.Method)))
		if !custom && r.URL != nil {
			attrs = append(attrs, slog.String("path", logPath(r.URL)))
		}
		attrs = append(attrs, slog.Int("attempt", e.Attempt))
	}
	if e.Status != 0 {
		attrs = append(attrs, slog.Int("status", e.Status))
	}
	switch e.Kind {
	case EventWait, EventRetry, EventWaitError:
		attrs = append(attrs, slog.Duration("wait", roundDuration(e.Wait)), slog.String("reason", string(e.Reason)))
	case EventGiveUp, EventStop, EventAbandoned:
		if e.Wait > 0 {
			attrs = append(attrs, slog.Duration("wait", roundDuration(e.Wait)))
		}
		if e.Reason != "" {
			attrs = append(attrs, slog.String("reason", string(e.Reason)))
		}
	case EventObserve:
		attrs = append(attrs, slog.Int("quotas", e.Quotas))
	}
	if we, ok := e.Err.(*WaitError); ok && we != nil { // a typed nil is logged as any error is
		limit := "max-wait"
		if we.Deadline {
			limit = "deadline"
		}
		attrs = append(attrs, slog.String("limit", limit), slog.String("until", retryStamp(we.Until)))
	} else if e.Err != nil {
		attrs = append(attrs, slog.String("error", logError(e.Err, e.Request, custom, "")))
	}
	return attrs
}

// LogValue makes e, logged by a handler of the caller's (slog.Any("event",
// e)), a group of what the Transport's Logger records of it: its kind,
// its time (when set), then the attributes emit documents. It shows nothing more: never
// the request's query, credentials or a custom key, and no path when the
// key is a custom key's fingerprint, which may be built from it. (As a
// struct, an Event logs its Request whole to a text handler, and fails
// to encode to a JSON one.)
func (e Event) LogValue() slog.Value {
	var buf [11]slog.Attr
	attrs := append(buf[:0], slog.String("kind", string(e.Kind)))
	if !e.Time.IsZero() {
		attrs = append(attrs, slog.Time("time", e.Time))
	}
	return slog.GroupValue(e.attrs(attrs, isFingerprint(e.Key))...)
}

// isFingerprint reports whether key is as fingerprint writes a custom key:
// "key-" and 8 hex digits.
func isFingerprint(key string) bool {
	if len(key) != len("key-")+8 || key[:4] != "key-" {
		return false
	}
	for _, c := range []byte(key[4:]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// baseError is Base's or GetBody's error as an Event carries it: its text
// is as a log shows it (see logError), so that a handler that prints it
// prints none of the request's credentials; errors.Is and errors.As find
// the error itself.
type baseError struct {
	err error
	msg string
}

func (e *baseError) Error() string { return e.msg }
func (e *baseError) Unwrap() error { return e.err }

// GoString is Error for %#v, which would otherwise print the error whole.
func (e *baseError) GoString() string { return "&polite.baseError{" + strconv.Quote(e.msg) + "}" }

// Format writes e as its text for every verb, and as GoString for %#v
// (see formatError).
func (e *baseError) Format(f fmt.State, verb rune) { formatError(f, verb, e.msg, e.GoString) }

// eventError returns err, Base's or GetBody's error for req under key, as
// an Event carries it (see baseError); nil for nil.
func eventError(err error, req *http.Request, key budgetKey) error {
	if err == nil {
		return nil
	}
	custom := ""
	if key.custom {
		custom = key.m.String()
	}
	return &baseError{err: err, msg: logError(err, req, key.custom, custom)}
}

// logError returns err's text as a log shows it: without the values of
// r's credential fields (see credentialField), nor key, the request's
// custom budget key when not "" (it may be a credential, from any field),
// nor r's query or
// user information (its password, and its user name, which may be a
// token, as the URL writes them before its "@" or before a password
// masked; a user name alone is left, as it may name the host too:
// "gitlab" in "gitlab.example"),
// which Base's error may quote (a URL in its text), nor, when the
// Transport has a custom Key, r's path; each is replaced by "...", as it
// appears in a URL (percent-escaped), decoded, escaped again as a whole
// URL is in another's query or path (a Base that relays the request), or
// within a Go-quoted string (%q, as *url.Error writes its URL).
func logError(err error, r *http.Request, custom bool, key string) string {
	msg := fmt.Sprint(err) // as fmt prints it: an Error method that panics (on a typed nil) does not
	var hidden []string    // every spelling of every secret, hidden longest first
	if len(key) >= minCredential {
		hidden = append(hidden, keySpellings(key)...)
	}
	if r == nil || r.URL == nil {
		return hideAll(msg, hidden)
	}
	u := r.URL
	var buf [16]string
	secrets := append(buf[:0], u.RawQuery)
	if _, q, ok := strings.Cut(u.Opaque, "?"); ok {
		// A query written in an Opaque, which net/http sends as it
		// is, and a server reads as the query; decoded too, as
		// RawQuery's.
		secrets = append(secrets, q)
		if d, err := url.QueryUnescape(q); err == nil && d != q {
			secrets = append(secrets, d)
		}
	}
	if q, err := url.QueryUnescape(u.RawQuery); err == nil && q != u.RawQuery {
		secrets = append(secrets, q) // as a Base that logs its decoded values writes it
	}
	// Each value of the query alone: a Base that adds a parameter
	// (a timestamp, a signature) writes the query anew, its parameters
	// sorted, and one that rejects a value quotes it alone.
	secrets = queryValues(secrets, u.RawQuery)
	if _, q, ok := strings.Cut(u.Opaque, "?"); ok {
		secrets = queryValues(secrets, q)
	}
	if len(u.Fragment) >= minCredential {
		// Never sent, but written by url.URL.String and Redacted, which
		// a Base's error may quote: OAuth's implicit flow puts a token
		// there ("#access_token=..."). A shorter one, a page's anchor
		// ("#1", "#top") a crawler kept, would mask every occurrence in
		// the text, as a credential that short would.
		secrets = append(secrets, u.EscapedFragment(), u.Fragment)
	}
	// The user information: the URL's, and that of an Opaque that is an
	// absolute URL, which net/http sends as it is whatever the URL's
	// (as the Opaque writes it too).
	ouser, written := opaqueUser(u)
	users := [2]*url.Userinfo{u.User, ouser}
	var wbuf [3]string
	spelled := wbuf[:0] // each user information as written, "name:password@"
	for _, ui := range users {
		if ui == nil {
			continue
		}
		w := ui.String() + "@" // as a URL writes it: "name:escaped-password@"
		if w == "@" {
			continue // none ("//@host"): hiding "@" hid the name before a password it ended
		}
		spelled = append(spelled, w)
		if p, ok := ui.Password(); ok {
			secrets = append(secrets, p)
			if _, e, _ := strings.Cut(w, ":"); len(e) > 1 && e[:len(e)-1] != p {
				secrets = append(secrets, e[:len(e)-1]) // escaped, as the URL writes it
			}
		}
	}
	if written != "" {
		spelled = append(spelled, written+"@")
		if _, p, ok := strings.Cut(written, ":"); ok && p != "" {
			secrets = append(secrets, p)
		}
	}
	if custom {
		// The path as sent (an Opaque's too), and decoded; an Opaque
		// whole, whatever of it is the path (net/http sends it as it
		// is, and a Base's error may quote it).
		if len(u.Opaque) > 1 {
			secrets = append(secrets, u.Opaque)
		}
		if p := sentPath(u); len(p) > 1 {
			secrets = append(secrets, p)
			if d, err := url.PathUnescape(p); err == nil && d != p {
				secrets = append(secrets, d)
			} else if u.Opaque == "" && u.Path != p {
				secrets = append(secrets, u.Path)
			}
		}
	}
	// The user information as written, first: the rest below would cut
	// it (its password within it, escaped or not).
	msg = hideAll(msg, spelled)
	for _, ui := range users {
		if ui == nil {
			continue
		}
		if _, ok := ui.Password(); ok {
			// The user name before a password masked, as
			// url.URL.Redacted ("name:xxxxx@") and *url.Error
			// ("name:***@") write it, before the password itself is
			// hidden, which the name may hold.
			name := ui.Username()
			msg = hideUser(msg, url.User(name).String())
			msg = hideUser(msg, name)
			if q := strconv.Quote(name); q[1:len(q)-1] != name {
				msg = hideUser(msg, q[1:len(q)-1])
			}
		}
	}
	secrets = append(secrets, spelled...)
	for _, x := range secrets {
		if x != "" {
			// As it is, and escaped whole as a URL's query or path
			// writes it: a Base that relays the request quotes its
			// URL so ("?url=https%3A%2F%2Fapi.example%2F%3Ftoken%3D...").
			hidden = append(hidden, keySpellings(x)...)
		}
	}
	var creds []string // every spelling of every credential
	for k, vs := range r.Header {
		if !credentialField(k) {
			continue
		}
		for _, v := range vs {
			creds = append(creds, v, strings.TrimSpace(v)) // as given, and as net/http sends it
			if strings.EqualFold(k, "Cookie") {
				// Each cookie, and its value, as one may be quoted
				// alone.
				for c := range strings.SplitSeq(v, ";") {
					c = strings.TrimSpace(c)
					creds = append(creds, c)
					if _, val, ok := strings.Cut(c, "="); ok {
						// Quoted, as sent, and bare, as
						// Request.Cookie reads it.
						creds = append(creds, val, strings.Trim(val, `"`))
					}
				}
				continue
			}
			// The scheme ends at a space, or a tab, which servers read
			// as one (RFC 9110 §11.4 allows only spaces; a token after
			// "Bearer\t" was shown).
			tv := strings.TrimSpace(v)
			i := strings.IndexAny(tv, " \t")
			if i < 0 {
				continue
			}
			scheme, cred := tv[:i], strings.TrimSpace(tv[i+1:])
			creds = append(creds, cred) // the token after its scheme ("Bearer")
			if strings.EqualFold(scheme, "Basic") {
				b, err := base64.StdEncoding.DecodeString(cred)
				if err != nil {
					b, err = base64.RawStdEncoding.DecodeString(cred)
				}
				if err == nil {
					user, pw, _ := strings.Cut(string(b), ":")
					creds = append(creds, string(b), pw) // user:password, decoded
					if pw == "" {
						creds = append(creds, user) // an API key as the user (Stripe's "sk_...:")
					}
				}
			}
		}
	}
	for _, c := range creds {
		if len(c) >= minCredential {
			hidden = append(hidden, c)
		}
	}
	return hideAll(msg, hidden)
}

// hideAll returns msg with every occurrence of each of xs, as it is and
// within a Go-quoted string, replaced by "...", those that touch or
// overlap by one "...": each is found in msg as it came, so that one
// hidden cannot cut another (a custom key within the query, a path or a
// token, or overlapping a path as a key of origin and first segment
// does), which would leave the rest of the other shown.
func hideAll(msg string, xs []string) string { return replaceAll(msg, xs, "...") }

// queryValues appends to dst each value of the query q of minCredential
// bytes or more, as written and decoded; the first maxQueryValues of them.
// A shorter one ("go", "1") would mask every occurrence in the text, as
// a credential that short would. A parameter ends at '&'; one that holds
// ';', which many servers split on too, gives its value whole and the
// value of each of its parts. A parameter with no '=' is its own value
// when it looks like a token ("?v=2&sk-live-..."; see tokenLike), not a
// word ("?stream", "&timeout") whose hiding blanked the word wherever
// the text has it.
func queryValues(dst []string, q string) []string {
	n := 0
	add := func(param string) bool {
		v, ok := paramValue(param)
		if !ok || len(v) < minCredential {
			return true
		}
		if n++; n > maxQueryValues {
			return false
		}
		dst = append(dst, v)
		if d, err := url.QueryUnescape(v); err == nil && d != v && len(d) >= minCredential {
			dst = append(dst, d)
		}
		return true
	}
	for param := range strings.SplitSeq(q, "&") {
		if !add(param) {
			break
		}
		if strings.IndexByte(param, ';') < 0 {
			continue
		}
		for part := range strings.SplitSeq(param, ";") {
			if !add(part) {
				return dst
			}
		}
	}
	return dst
}

// paramValue returns the value of a query's parameter: what follows its
// first '=', or, with none, the parameter itself when tokenLike; ok is
// false for a bare word.
func paramValue(param string) (v string, ok bool) {
	if _, v, ok := strings.Cut(param, "="); ok {
		return v, true
	}
	return param, tokenLike(param)
}

// tokenLike reports whether a bare query parameter may be a credential: it
// holds a digit, or is 16 bytes or more, as API keys do; a word ("pretty",
// "stream") is neither.
func tokenLike(s string) bool {
	return len(s) >= 16 || strings.ContainsAny(s, "0123456789")
}

// maxQueryValues bounds the values of one query hidden one by one, and
// with them the time hiding takes: a query of more, which no API key
// needs, is still hidden whole.
const maxQueryValues = 32

// keySpellings returns the ways a text may spell key: as it is, and
// escaped as a URL's query, a path segment or a path writes it (a Store
// reached over HTTP, a Base's URL). replaceAll adds each Go-quoted.
func keySpellings(key string) []string {
	return []string{key, url.QueryEscape(key), url.PathEscape(key), (&url.URL{Path: key}).EscapedPath()}
}

// replaceAll is hideAll with repl in place of "...", in time linear in
// len(msg) for each of xs (spellings alike are looked for once), and
// memory of 4 bytes a byte of msg once one is found: the end of the
// longest occurrence that starts at each byte, swept once.
func replaceAll(msg string, xs []string, repl string) string {
	if len(msg) > math.MaxInt32 {
		return repl // no error is so long; hidden whole, rather than shown
	}
	var cover []int32 // cover[i]: the end of the longest occurrence starting at i; 0: none
	mark := func(x string) {
		occurrences(msg, x, func(i int) {
			if cover == nil {
				cover = make([]int32, len(msg))
			}
			cover[i] = max(cover[i], int32(i+len(x)))
		})
	}
	looked := make(map[string]bool, 2*len(xs)) // each spelling once: the escapes of a key often agree
	look := func(x string) {
		if x != "" && !looked[x] {
			looked[x] = true
			mark(x)
		}
	}
	for _, x := range xs {
		look(x)
		if x == "" {
			continue
		}
		if q := strconv.Quote(x); q[1:len(q)-1] != x {
			look(q[1 : len(q)-1])
		}
	}
	if cover == nil {
		return msg
	}
	var b strings.Builder
	at := 0             // msg[:at] is written
	start, end := -1, 0 // the span being merged, [start, end); start < 0: none
	flush := func() {
		b.WriteString(msg[at:start])
		b.WriteString(repl)
		at = end
	}
	for i, c := range cover {
		switch {
		case c == 0:
		case start >= 0 && i <= end: // touches or overlaps the span: one "..."
			end = max(end, int(c))
		default:
			if start >= 0 {
				flush()
			}
			start, end = i, int(c)
		}
	}
	if start >= 0 {
		flush()
	}
	b.WriteString(msg[at:])
	return b.String()
}

// credentialField reports whether the request header field k may carry
// a credential, whose value logError hides should Base's error quote it:
// a name that holds, in any case, one of credentialWords (Authorization,
// Cookie, X-Api-Key, X-Auth-Token, Shopify's X-Shopify-Access-Token,
// GitLab's Private-Token, Google's X-Goog-Api-Key, AWS's
// X-Amz-Security-Token). A field so named that holds none (an
// Idempotency-Key) is hidden too: a log loses little by it.
func credentialField(k string) bool {
	k = strings.ToLower(k)
	for _, w := range credentialWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// credentialWords are the words, in lower case, whose presence in a
// request header field's name makes it one that may carry a credential.
var credentialWords = [...]string{"auth", "cookie", "key", "token", "secret", "session", "password", "passwd", "credential", "signature"}

// minCredential is the shortest credential (or custom key) logError
// hides: a shorter one would blank its letters wherever they are in the
// message.
const minCredential = 6

// occurrences calls f with the start of each occurrence of x in s,
// overlapping ones included (a path ending in '/' that the text repeats
// overlaps itself), in time linear in len(s) and len(x): a search from
// each match's next byte would take len(x) steps a byte of a text that
// repeats x's first byte. x without a border (no proper prefix that is
// also its suffix) cannot overlap itself, and is found by strings.Index;
// x with one, by Knuth, Morris and Pratt's algorithm.
func occurrences(s, x string, f func(int)) {
	if x == "" || len(x) > len(s) {
		return
	}
	border := make([]int, len(x)) // border[i]: the longest proper border of x[:i+1]
	for i, k := 1, 0; i < len(x); i++ {
		for k > 0 && x[i] != x[k] {
			k = border[k-1]
		}
		if x[i] == x[k] {
			k++
		}
		border[i] = k
	}
	if border[len(x)-1] == 0 {
		for i := 0; i <= len(s)-len(x); {
			j := strings.Index(s[i:], x)
			if j < 0 {
				return
			}
			f(i + j)
			i += j + len(x)
		}
		return
	}
	for i, k := 0, 0; i < len(s); i++ {
		for k > 0 && s[i] != x[k] {
			k = border[k-1]
		}
		if s[i] == x[k] {
			k++
		}
		if k == len(x) {
			f(i + 1 - len(x))
			k = border[k-1]
		}
	}
}

// maxMask bounds the bytes of a masked password hideUser looks across.
const maxMask = 64

// hideUser returns msg with name replaced by "..." where it is user
// information: followed by ":", a masked password (no "/", "@", space or
// quote) of at most maxMask bytes, and "@". Elsewhere (a host of the same
// name) it is left.
func hideUser(msg, name string) string {
	if name == "" {
		return msg
	}
	var b strings.Builder
	rest := msg
	for {
		i := strings.Index(rest, name+":")
		if i < 0 {
			break
		}
		after := rest[i+len(name)+1:]
		j := strings.IndexAny(after[:min(len(after), maxMask+1)], "/@ \"'")
		b.WriteString(rest[:i])
		if j >= 0 && after[j] == '@' {
			b.WriteString("...")
		} else {
			b.WriteString(name)
		}
		b.WriteString(":")
		rest = after
	}
	if b.Len() == 0 {
		return msg
	}
	b.WriteString(rest)
	return b.String()
}

// maxLogPath bounds the bytes of a URL path a log record shows.
const maxLogPath = 256

// maxLogMethod bounds the bytes of a method a log record shows: a
// server's request, passed on by a reverse proxy, takes its method from a
// client's request line, a token of any length net/http reads (up to a
// megabyte), where the methods of RFC 9110 and WebDAV take 16 at most.
const maxLogMethod = 32

// logMethod returns the method m as a log shows it: GET when empty, cut
// at maxLogMethod bytes (a token: ASCII).
func logMethod(m string) string {
	switch {
	case m == "":
		return http.MethodGet
	case len(m) > maxLogMethod:
		return m[:maxLogMethod] + "..."
	}
	return m
}

// logPath returns u's path as a log shows it: escaped, as sent (an
// Opaque's too), without the query or the user information, "/" when
// empty, cut at maxLogPath bytes.
func logPath(u *url.URL) string {
	p := sentPath(u)
	if u.Opaque != "" {
		p, _, _ = strings.Cut(p, "?") // a query written in it
	}
	if p == "" {
		p = "/"
	}
	if len(p) > maxLogPath {
		p = p[:maxLogPath] + "..."
	}
	return p
}

// roundDuration rounds d for a log or an error text: to the microsecond
// below a millisecond, to the millisecond below 10 seconds, and to a tenth
// of a second above, so that "440.897µs" reads "441µs", "1.2345678s" reads
// "1.235s" and "23h59m59.999912479s" reads "24h0m0s".
func roundDuration(d time.Duration) time.Duration {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a < time.Millisecond:
		return d.Round(time.Microsecond)
	case a < 10*time.Second:
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
