package polite

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/internal/origin"
)

// Robots makes requests obey the robots.txt of their origin (RFC 9309), as
// a crawler must: a path the file disallows is not sent, and the pace it
// asks for with Crawl-delay or Request-rate (not part of RFC 9309, but
// widely honoured) becomes a floor on the origin's pacing.
//
// The robots.txt of an origin (scheme, host and port) is fetched once,
// with a GET of /robots.txt through the Transport's Base, before the first
// request to the origin is sent; requests to the origin that come while it
// is being fetched wait for it, each until its own context ends. The fetch
// does not end with the request that started it, but goes on for the
// others (within its 30 seconds). It is used for 24 hours (RFC 9309 §2.4),
// then fetched again. At most 512 KiB of it are read (§2.5), and up to
// five redirects are followed (§2.3.1.2), to the same scheme, or to http
// or https (from https to http too: refused, it would leave every path
// allowed). What it answers decides:
//
//   - 2xx: its rules apply. Those of the groups naming UserAgent apply, or,
//     if none does, those of the groups naming "*"; the longest matching
//     pattern wins, an allow winning a tie (§2.2).
//   - 4xx other than 429 (and a 403 that refuses for rate, below), more
//     than five redirects, or a redirect that cannot be followed:
//     robots.txt is unavailable, and every path is allowed (§2.3.1.3).
//   - 429, a 403 with Retry-After or a spent quota (a refusal for rate,
//     DESIGN.md §1.10), 5xx, a network error, or no complete answer within
//     30 seconds:
//     robots.txt is unreachable, and every path of the origin is
//     disallowed (§2.3.1.4) until it is fetched again, after 1 minute,
//     then 2, 4 ... up to 1 hour while it stays unreachable, or after its
//     Retry-After if that is longer (up to 24 hours). While an origin is
//     unreachable no request reaches it but those for robots.txt.
//
// A request that is not sent fails at once with a [*RobotsError]. Requests
// for /robots.txt itself are always allowed, and other schemes than http
// and https are not concerned.
//
// A request whose Host ([http.Request.Host]) names another authority than
// its URL's host, as a crawler's that dials a fixed address does
// ("http://192.0.2.10/private" with Host "site.example"), reaches the
// virtual host it names, whose robots.txt governs it (RFC 9309 §2.2):
// that robots.txt is fetched from the URL's scheme and address with the
// request's Host (normalised as an origin's host is), kept apart from the
// address's own and from other virtual hosts' (each counts as an origin
// against MaxOrigins), and a redirect of it keeps the Host while its
// Location names no host. Its Crawl-delay or Request-rate paces the origin
// the Host names (scheme and Host), whatever address its requests are
// sent to; the request's budget key is still its URL's origin (see
// [Transport.Key]). A Host with a byte no host has (userinfo, a path, a
// query), which net/http does not send, is ignored.
//
// A Robots holds the robots.txt of the origins it has seen: Transports
// sharing a Robots share them. The zero value obeys the "*" groups. A
// Robots is safe for concurrent use by multiple goroutines. Its fields must
// not be changed after first use, nor the Robots copied.
type Robots struct {
	// UserAgent is the product token matched, ignoring case, against the
	// user-agent lines of robots.txt (RFC 9309 §2.2.1), such as "mybot".
	// Only its leading letters, '-' and '_' are compared, so that
	// "mybot/1.2 (+https://mybot.example/)" matches the group "mybot".
	// If empty, only the groups naming "*" apply. It is also sent as the
	// User-Agent header of the robots.txt request when the request that
	// caused the fetch has none.
	UserAgent string

	// CrawlDelayOnly, if true, reads only Crawl-delay and Request-rate:
	// no request is refused, whatever the rules say and even while
	// robots.txt is unreachable. For clients that are not crawlers but
	// want to keep the pace an origin asks for.
	CrawlDelayOnly bool

	// MaxOrigins is the most origins whose robots.txt is kept at once (a
	// few more for an instant when requests to new origins race, or while
	// every origin kept is being fetched);
	// beyond it, the least recently used are forgotten (and fetched again
	// when next needed, never before the requests that waited for the
	// fetch read it), by the shard of the cache a new origin falls in
	// first. An origin whose robots.txt rules and name (and the error of
	// its last fetch, if it failed) take more than
	// 4 KiB counts as one origin more for each 4 KiB (rules kept take at
	// most three times the 512 KiB read): so the cache holds at most
	// about 5 KiB an origin counted, 80 MiB at the default, whatever the
	// servers send. If zero, 16384.
	MaxOrigins int

	once  sync.Once
	cache *robotsCache
}

// ErrDisallowed is matched by every [*RobotsError]: the request was not
// sent because the robots.txt of its origin disallows it.
var ErrDisallowed = errors.New("polite: disallowed by robots.txt")

// RobotsError reports that a request was not sent because of the
// robots.txt of its origin: a rule disallows its path, or robots.txt is
// unreachable, which disallows every path until Until. It matches
// [ErrDisallowed] with [errors.Is]. When robots.txt was unreachable because
// of a transport error, Unwrap returns that error.
type RobotsError struct {
	Origin string // scheme://host[:port] of the request's URL
	// Host is the request's Host when it names another authority than
	// Origin's host (a virtual host at that address, see Robots): the
	// robots.txt is that Host's, fetched from Origin. Empty otherwise.
	Host string
	// Agent is the user-agent of the group whose rule disallows the
	// path, as robots.txt writes it (its first 256 bytes and "…" when
	// longer), or "*"; empty when Unreachable. The groups naming the
	// crawler are one group (RFC 9309 §2.2.1), named as the first of them
	// names it: "User-agent: mybot" and, further on, "User-agent: MyBot"
	// both give "mybot".
	Agent string
	// Rule is the path pattern that disallows the path, in the form it
	// is compared in (percent-encoding normalised, RFC 9309 §2.2.2), such
	// as "/private/" or "/*.pdf$" (its first 256 bytes and "…" when
	// longer); empty when Unreachable.
	Rule string

	// Unreachable reports that robots.txt could not be fetched (a 429, a
	// 403 refusing for rate, or 5xx status, a transport error, or a
	// timeout), which disallows every
	// path of the origin (RFC 9309 §2.3.1.4).
	Unreachable bool
	// Status is the status code robots.txt answered when Unreachable; 0
	// when no response came.
	Status int
	// Until is when robots.txt will be fetched again, when Unreachable.
	Until time.Time
	// Err is the transport error that made robots.txt unreachable, if any.
	Err error
}

// Error says why robots.txt kept the request from being sent, and, when
// it is unreachable, when to try again.
func (e *RobotsError) Error() string {
	of := e.Origin
	if e.Host != "" {
		of += " (Host " + e.Host + ")"
	}
	if !e.Unreachable {
		return fmt.Sprintf("polite: robots.txt of %s disallows the path for %q (rule %q)", of, e.Agent, e.Rule)
	}
	why := "no response"
	switch {
	case e.Status != 0:
		why = fmt.Sprintf("status %d", e.Status)
	case e.Err != nil:
		why = e.Err.Error()
	}
	return fmt.Sprintf("polite: robots.txt of %s unreachable (%s): every path disallowed until %s", of, why, retryStamp(e.Until))
}

// Is reports whether target is [ErrDisallowed].
func (e *RobotsError) Is(target error) bool { return target == ErrDisallowed }

// Unwrap returns the transport error that made robots.txt unreachable, or
// nil.
func (e *RobotsError) Unwrap() error { return e.Err }

// Tuning of the robots.txt cache and fetch.
const (
	robotsMaxAge        = 24 * time.Hour   // RFC 9309 §2.4
	robotsRetryMin      = time.Minute      // first wait after an unreachable robots.txt
	robotsRetryMax      = time.Hour        // longest wait, doubling from robotsRetryMin
	robotsRetryAfterMax = 24 * time.Hour   // longest Retry-After honoured
	robotsFetchTimeout  = 30 * time.Second // for a whole fetch, redirects and body included
	robotsMaxRedirects  = 5                // RFC 9309 §2.3.1.2
	robotsShards        = 16
	defaultRobotsMax    = 1 << 14
)

// check decides req under the robots.txt of its origin, fetching it through
// base first if it must (see Robots). It returns the interval the
// origin's robots.txt asks between two requests (zero if none), and a
// *RobotsError if req must not be sent. While another request fetches the
// origin's robots.txt, check waits for it; if ctx ends first, it returns
// ctx.Err(). The fetch runs in a goroutine of its own, bounded by
// robotsFetchTimeout and not by the context of the request that started
// it: a request that stops waiting, that one included, leaves it to
// finish for the others (a robots.txt slower than every request's
// deadline was fetched again by each request, and never read). If Base
// panics, the panic goes on in the request that started the fetch, if it
// still waits, and the next request fetches again. req is never modified,
// and its body is not touched.
//
// check never waits for the budget: the robots.txt request is sent
// outside it, so that pacing cannot hold the fetch the pacing waits for.
func (r *Robots) check(ctx context.Context, base http.RoundTripper, req *http.Request) (time.Duration, error) {
	interval, _, err := r.checkUntil(ctx, base, req)
	return max(interval, 0), err
}

// checkUntil is check, and reports until when its verdict holds: the
// instant the robots.txt it read expires (zero: for ever, as for
// robots.txt itself, a URL robots.txt does not apply to, or
// CrawlDelayOnly, which disallows nothing). Its interval is -1 when none
// is known: for a request of robots.txt to an origin not fetched (or
// forgotten), and under CrawlDelayOnly for an origin unreachable with no
// answer read.
func (r *Robots) checkUntil(ctx context.Context, base http.RoundTripper, req *http.Request) (time.Duration, time.Time, error) {
	u := req.URL
	if u == nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return 0, time.Time{}, nil
	}
	path := robotsPath(u)
	site := robotsSite{origin: robotsOrigin(u), host: robotsHost(req)}
	key := site.key()
	c := r.robotsCache()
	if path == "/robots.txt" {
		// Always allowed, and never fetched for itself; but it is a
		// request to the origin like any other, spaced by the interval
		// already known: -1 when none is (an origin not fetched yet, or
		// forgotten to make room), which leaves the floor the Transport
		// keeps as it is.
		if d, ok := c.shard(key).interval(key); ok {
			return d, time.Time{}, nil
		}
		return -1, time.Time{}, nil
	}
	sh := c.shard(key)
	for {
		if err := ctx.Err(); err != nil {
			// Nothing to fetch for, and no place in the cache to take
			// (it could evict an origin fetched already).
			return 0, time.Time{}, err
		}
		e, v, wait, fetch := sh.begin(key, time.Now())
		switch {
		case wait != nil:
			select {
			case <-ctx.Done():
				return 0, time.Time{}, ctx.Err()
			case <-wait:
			}
		case fetch:
			f := c.startFetch(ctx, base, sh, e, site, req.Header.Get("User-Agent"))
			select {
			case <-ctx.Done():
				return 0, time.Time{}, ctx.Err() // the fetch goes on without it
			case <-f.done:
			}
			switch {
			case f.panicked:
				panic(f.panicVal)
			case f.exited:
				// Base ended its goroutine: so ends the request's, as
				// when Base ran in it (fetched again, it would do so
				// again, and the request would loop).
				runtime.Goexit()
			}
		}
		if wait != nil || fetch {
			// What the fetch found, read from its entry even if it
			// was forgotten since (see result); looked up again if
			// the fetch was abandoned.
			var ok bool
			if v, ok = sh.result(e, time.Now()); !ok {
				continue
			}
		}
		interval, err := c.decide(site, path, v)
		if c.delayOnly {
			// No verdict to outlast: the interval of a file fetched
			// again reaches the origin's floor through the requests
			// that fetch it.
			return interval, time.Time{}, err
		}
		return interval, v.until, err
	}
}

// decide is check's verdict on path from a view of its site's entry.
func (c *robotsCache) decide(site robotsSite, path string, v robotsView) (time.Duration, error) {
	var interval time.Duration
	if v.file != nil {
		interval = v.file.interval
	}
	if c.delayOnly {
		if v.file == nil && v.unreachable && !v.none {
			return -1, nil // no answer read: the floor kept stays
		}
		return interval, nil
	}
	if v.unreachable {
		return 0, &RobotsError{Origin: site.origin, Host: site.host, Unreachable: true, Status: v.status, Until: v.until, Err: v.err}
	}
	if v.file == nil {
		return 0, nil
	}
	if rule, ok := v.file.matchQuery(path); ok && !rule.allow {
		return interval, &RobotsError{Origin: site.origin, Host: site.host, Agent: v.file.agent, Rule: strings.Clone(shorten(rule.pattern, maxRobotsAgent))}
	}
	return interval, nil
}

func (r *Robots) robotsCache() *robotsCache {
	r.once.Do(func() {
		r.cache = newRobotsCache(productToken(strings.TrimSpace(r.UserAgent)), r.UserAgent, r.CrawlDelayOnly, r.MaxOrigins)
	})
	return r.cache
}

// sentPath returns the path of u as net/http sends it and a server
// resolves it, escaped: its EscapedPath, or an Opaque, whose path when it
// is a URL ("//host/path", "http://host/path", or "http:/path", which a
// server reads as the path "/path"; see [url.URL.RequestURI]). It may be
// empty.
func sentPath(u *url.URL) string {
	o := u.Opaque
	if o == "" {
		return u.EscapedPath()
	}
	rest, ok := opaqueRest(o)
	if !ok {
		if i := opaqueScheme(o); i > 0 {
			// A scheme and no authority: the server reads what
			// follows as the path, when it starts with '/'; else
			// no path, and the query after a '?' ("http:?x=1").
			p := o[i+1:]
			if strings.HasPrefix(p, "/") {
				return p
			}
			if q := strings.IndexByte(p, '?'); q >= 0 {
				return p[q:]
			}
			return ""
		}
		return o
	}
	// The authority ends at the first of "/?#" (RFC 3986 §3.2): the
	// path, if any, starts there, and a query there follows no path.
	if i := strings.IndexAny(rest, "/?#"); i >= 0 && rest[i] != '#' {
		return rest[i:]
	}
	return ""
}

// opaqueScheme returns where the scheme o starts with ends, at its ':'
// (RFC 3986 §3.1: a letter, then letters, digits, '+', '-' or '.'), or 0
// when o starts with none.
func opaqueScheme(o string) int {
	for i := 0; i < len(o); i++ {
		switch c := o[i]; {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return 0
		}
	}
	return 0
}

// opaqueRest returns what follows the "//" of o, an Opaque that is an
// absolute URL ("//host/path", or a scheme then "://host/path"): its
// authority and path; ok is false for another Opaque.
func opaqueRest(o string) (rest string, ok bool) {
	if rest, ok := strings.CutPrefix(o, "//"); ok {
		return rest, true
	}
	if i := opaqueScheme(o); i > 0 {
		return strings.CutPrefix(o[i+1:], "//")
	}
	return "", false
}

// opaqueAuthority returns the host (and port) of u's Opaque when it is an
// absolute URL, which net/http sends as the request-target: a server
// then takes the request's host from it and ignores the Host field (RFC
// 9112 §3.2.2). It is read as a server reads it: userinfo dropped,
// percent-encoding decoded ("%C3%A9.example" is "é.example", which
// url.URL.String writes so). ok is false for another Opaque; the host is
// empty for an authority that names none, or that does not parse (which
// a server refuses).
func opaqueAuthority(u *url.URL) (host string, ok bool) {
	auth, ok := opaqueAuthorityText(u)
	if !ok {
		return "", false
	}
	a, err := url.Parse("//" + auth)
	if err != nil {
		return "", true
	}
	return a.Host, true
}

// opaqueAuthorityText returns the authority of u's Opaque as written, when
// the Opaque is an absolute URL (see opaqueRest).
func opaqueAuthorityText(u *url.URL) (auth string, ok bool) {
	rest, ok := opaqueRest(u.Opaque)
	if !ok {
		return "", false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
}

// opaqueUser returns the user information of u's Opaque when it is an
// absolute URL that holds one ("//name:password@host/path"), parsed (nil
// should it not parse) and as the Opaque writes it, before its "@".
func opaqueUser(u *url.URL) (user *url.Userinfo, written string) {
	auth, _ := opaqueAuthorityText(u)
	i := strings.LastIndex(auth, "@")
	if i < 0 {
		return nil, ""
	}
	if a, err := url.Parse("//" + auth); err == nil {
		user = a.User
	}
	return user, auth[:i]
}

// robotsPath returns the path and query of u in the form robots.txt
// patterns are compared in (see robotsEscape), its dot segments removed as
// the server resolves them (RFC 3986 §5.2.4: "/a/../b" is "/b"). An Opaque
// that is an absolute URL, "//host/path" or "http://host/path", which
// net/http sends as it is (see [url.URL.RequestURI]), has its path matched;
// its authority names the site, as a Host does (see robotsHost).
func robotsPath(u *url.URL) string {
	p := sentPath(u)
	if p == "" || p[0] == '?' {
		p = "/" + p // an empty path, as a server reads it
	}
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	p = robotsEscape(p, false)
	path, _, _ := strings.Cut(p, "?")
	if clean := removeDotSegments(path); clean != path {
		p = clean + p[len(path):]
	}
	return p
}

// removeDotSegments returns the path p without its "." and ".." segments,
// as RFC 3986 §5.2.4 removes them; p itself when it has none. A path that
// does not start with '/' is returned as it is. It takes time linear in
// the length of p.
func removeDotSegments(p string) string {
	if p == "" || p[0] != '/' || !strings.Contains(p, "/.") {
		return p
	}
	out := make([]byte, 0, len(p))
	for p != "" {
		seg := p[1:] // p starts with '/'
		end := strings.IndexByte(seg, '/')
		if end < 0 {
			end = len(seg)
		}
		s := seg[:end]
		p = seg[end:]
		switch s {
		case ".":
		case "..":
			out = out[:max(bytes.LastIndexByte(out, '/'), 0)]
		default:
			out = append(out, '/')
			out = append(out, s...)
			continue
		}
		if p == "" { // a path ending in a dot segment ends in '/'
			out = append(out, '/')
		}
	}
	return string(out)
}

// robotsOrigin returns the origin of u in the one form its budget key has
// (see originKey): scheme and host in lower case (an IPv6 zone, an
// interface name, as it is), without a trailing dot or the scheme's
// default port, an internationalised host in its ASCII form, the form
// net/http dials it in.
func robotsOrigin(u *url.URL) string {
	// Normalised as a budget key is, but never digested (see digestLong):
	// robots.txt is fetched from it. The cache weighs a long one by its
	// length (see robotsFile.weight).
	return origin.LowerASCII(u.Scheme) + "://" + origin.Normal(u.Scheme, u.Host)
}

// robotsSite is the authority whose robots.txt governs a request: its
// origin (see robotsOrigin), where robots.txt is fetched from, and the
// Host the request names another authority by, if any (see robotsHost),
// which the fetch sends.
type robotsSite struct {
	origin string
	host   string // "" when the URL's host is the authority
}

// key returns the key of s's robots.txt in the cache: its origin, or,
// with a Host, the Host, a space and the origin. An origin's key starts
// with its scheme and "://"; a Host has no '/' (see robotsHost), so the
// two never meet.
func (s robotsSite) key() string {
	if s.host == "" {
		return s.origin
	}
	return s.host + " " + s.origin
}

// robotsHost returns the Host of req (http.Request.Host) when it names
// another authority than its URL's host, normalised as an origin's host is
// (see origin.Normal): the virtual host reached by a crawler that dials a
// fixed address ("http://192.0.2.10/private" with Host "site.example"),
// whose robots.txt governs the request (RFC 9309 §2.2). It returns "" when
// req sets no Host or its URL's, and for a Host with a byte no host has
// (userinfo, a path, a query, a space), which net/http does not send (it
// sends an empty Host then): so none reaches a RobotsError or a key.
// An Opaque that is an absolute URL names the site in place of Host,
// which the server then ignores (see opaqueAuthority): one decided by the
// robots.txt of the address it was sent to reached paths the site's own
// disallows.
func robotsHost(req *http.Request) string {
	h := req.Host
	if a, ok := opaqueAuthority(req.URL); ok && a != "" {
		// (One with no host leaves the Host field to the server.)
		h = a
	}
	if h == "" || h == req.URL.Host {
		return ""
	}
	h = origin.Normal(req.URL.Scheme, h)
	if !isHostHeader(h) || h == origin.Normal(req.URL.Scheme, req.URL.Host) {
		return ""
	}
	return h
}

// isHostHeader reports whether h is not empty and has only bytes a
// Host field may have, as net/http checks before sending one: letters,
// digits, and the punctuation of an IP literal, a port, an IPv6 zone or
// a reg-name (RFC 3986 §3.2.2).
func isHostHeader(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!$%&'()*+,-.:;=[]_~", c) >= 0) {
			return false
		}
	}
	return h != ""
}

// robotsCache holds the robots.txt of many origins, in shards that each
// have their own lock, so that origins do not contend.
type robotsCache struct {
	token     string // product token of Robots.UserAgent
	userAgent string // Robots.UserAgent, sent when a request has none
	delayOnly bool
	seed      maphash.Seed
	shards    [robotsShards]robotsShard
	// count is the weight of the origins kept in all shards, at most max:
	// MaxOrigins bounds the cache as a whole, however the origins fall
	// into shards (a bound a shard would refetch some origins below it).
	// An origin weighs one, and one more for each robotsWeightBytes of
	// its rules and its key (see robotsFile.weight).
	count atomic.Int64
	max   int64
	// fetched counts the fetches of robots.txt ended (a file read, or
	// found unreachable), of any origin: a verdict decided before the
	// count moved may be by a file replaced since (see verdict.stale).
	fetched atomic.Uint64
}

func newRobotsCache(token, userAgent string, delayOnly bool, maxOrigins int) *robotsCache {
	if maxOrigins <= 0 {
		maxOrigins = defaultRobotsMax
	}
	c := &robotsCache{token: token, userAgent: userAgent, delayOnly: delayOnly, seed: maphash.MakeSeed(), max: int64(maxOrigins)}
	for i := range c.shards {
		c.shards[i].init(c)
	}
	return c
}

func (c *robotsCache) shard(origin string) *robotsShard {
	return &c.shards[maphash.String(c.seed, origin)%robotsShards]
}

// makeRoom forgets origins until the cache has room for need more of
// weight, the least recently used of s first (whose lock the caller
// holds), then of another shard free at once. When every origin kept is
// being fetched, or the other shards are busy, it makes none, and the
// cache holds more until the next new origin makes room again.
func (c *robotsCache) makeRoom(s *robotsShard, need int64) {
	for c.count.Load()+need > c.max {
		if s.evict() {
			continue
		}
		evicted := false
		for i := range c.shards {
			o := &c.shards[i]
			if o == s || !o.mu.TryLock() {
				continue
			}
			evicted = o.evict()
			o.mu.Unlock()
			if evicted {
				break
			}
		}
		if !evicted {
			return
		}
	}
}

// robotsShard is a map of origins to their robots.txt, with a
// least-recently-used list; its cache bounds the origins of all shards.
// No goroutine sweeps it: entries are dropped lazily, when new ones need
// room or when they have expired.
type robotsShard struct {
	mu    sync.Mutex
	m     map[string]*robotsEntry
	lru   robotsEntry // sentinel: lru.next is the most recently used
	cache *robotsCache
}

// robotsEntry is what is known of one origin's robots.txt.
type robotsEntry struct {
	key        string
	prev, next *robotsEntry

	// weight is what the entry counts against MaxOrigins: see
	// robotsCache.count.
	weight int64
	// fetching is non-nil while a request fetches robots.txt; it is
	// closed when the fetch ends or is abandoned.
	fetching chan struct{}
	// expires is when robots.txt must be fetched again: 24 hours after a
	// fetch, or, when unreachable, the end of the wait. Zero before the
	// first fetch ends.
	expires time.Time
	// file is the robots.txt last fetched; nil when unavailable (every
	// path allowed). It is kept while robots.txt is unreachable, for its
	// interval.
	file        *robotsFile
	unreachable bool
	// none reports that the last answer read was unavailable (no file:
	// every path allowed, no Crawl-delay known to be none); kept while
	// unreachable, as file is.
	none   bool
	fails  int   // consecutive unreachable fetches
	status int   // of the last unreachable fetch; 0 without response
	err    error // of the last unreachable fetch, if a transport error
}

// robotsView is a copy of what check needs of an entry, taken under the
// shard's lock.
type robotsView struct {
	file        *robotsFile
	unreachable bool
	none        bool // see robotsEntry.none
	until       time.Time
	status      int
	err         error
}

// robotsResult is what one fetch found.
type robotsResult struct {
	file        *robotsFile // for a 2xx; nil otherwise
	unreachable bool
	status      int
	err         error
	retryAfter  time.Duration // of an unreachable answer, if it gave one
}

func (s *robotsShard) init(c *robotsCache) {
	s.m = make(map[string]*robotsEntry)
	s.lru.next, s.lru.prev = &s.lru, &s.lru
	s.cache = c
}

// drop forgets e.
func (s *robotsShard) drop(e *robotsEntry) {
	e.unlink()
	delete(s.m, e.key)
	s.cache.count.Add(-e.weight)
}

// interval returns the interval the robots.txt of key asks between two
// requests, as last fetched; zero when none is known. It fetches nothing.
func (s *robotsShard) interval(key string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := s.m[key]; {
	case e == nil:
		return 0, false // not fetched yet, or forgotten
	case e.file != nil:
		return e.file.interval, true
	case e.none:
		return 0, true // unavailable: no Crawl-delay, and kept while unreachable
	default:
		return 0, false // being fetched the first time, or unreachable with no answer read
	}
}

// begin looks up key at now. If the entry can be used, it returns a view
// of it. If another request is fetching it, it returns the channel to wait
// on. Otherwise the caller must fetch it (fetch is true), and call end or
// abandon with e when done; until then, others wait.
func (s *robotsShard) begin(key string, now time.Time) (e *robotsEntry, v robotsView, wait <-chan struct{}, fetch bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropExpired(key, now)
	e = s.m[key]
	if e == nil {
		w := (*robotsFile)(nil).weight(key, nil)
		s.cache.makeRoom(s, w)
		e = &robotsEntry{key: key, weight: w}
		s.m[key] = e
		s.cache.count.Add(e.weight)
	} else {
		e.unlink()
	}
	e.pushFront(&s.lru)
	switch {
	case e.fetching != nil:
		return e, v, e.fetching, false
	case e.expires.IsZero() || !now.Before(e.expires):
		e.fetching = make(chan struct{})
		return e, v, nil, true
	}
	return e, e.view(), nil, false
}

// view returns a view of e. s must be locked.
func (e *robotsEntry) view() robotsView {
	return robotsView{file: e.file, unreachable: e.unreachable, none: e.none, until: e.expires, status: e.status, err: e.err}
}

// result returns, to a request that waited at now for e's fetch (or made
// it), a view of what that fetch found, whether or not e was forgotten
// since to make room: a fetch that ends with a file heavier than its
// entry counted makes room, and so does a new origin, and either could
// evict an entry whose fetch had just ended before its waiters read it,
// which fetched it again (an origin's robots.txt 3 times in one burst of
// requests, under a MaxOrigins the burst's origins outweighed). False
// when the fetch was abandoned, or e expired or is fetched again: the
// request looks it up again.
func (s *robotsShard) result(e *robotsEntry, now time.Time) (robotsView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.fetching != nil || e.expires.IsZero() || !now.Before(e.expires) {
		return robotsView{}, false
	}
	return e.view(), true
}

// end records the result of e's fetch at now, and wakes the requests
// waiting for it.
func (s *robotsShard) end(e *robotsEntry, r robotsResult, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.wake(e) // even if what ends it panics: its waiters fetch again
	s.cache.fetched.Add(1)
	w := r.file.weight(e.key, nil)
	if !r.unreachable {
		e.file, e.unreachable, e.fails, e.status, e.err = r.file, false, 0, 0, nil
		e.none = r.file == nil
		e.expires = now.Add(robotsMaxAge)
	} else {
		e.unreachable, e.status, e.err = true, r.status, boundedErr(r.err)
		wait := robotsRetryMin << min(e.fails, 10)
		wait = min(wait, robotsRetryMax)
		wait = max(wait, min(r.retryAfter, robotsRetryAfterMax))
		e.fails++
		e.expires = now.Add(wait)
		w = e.file.weight(e.key, e.err)
	}
	if w != e.weight {
		s.cache.count.Add(w - e.weight)
		e.weight = w
		// Made while e is still being fetched, which keeps it.
		s.cache.makeRoom(s, 0)
	}
}

// abandon records that e's fetch was given up (Base panicked or ended its
// goroutine): the next request fetches again.
func (s *robotsShard) abandon(e *robotsEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wake(e)
}

func (s *robotsShard) wake(e *robotsEntry) {
	if e.fetching != nil { // entries being fetched are never evicted
		close(e.fetching)
		e.fetching = nil
	}
}

// dropExpired forgets up to two least recently used entries that need
// fetching again anyway, other than key's: a robots.txt past its 24 hours,
// or an unreachable one whose wait ended a day ago (after that, the
// doubling of its wait starts over).
func (s *robotsShard) dropExpired(key string, now time.Time) {
	for range 2 {
		e := s.lru.prev
		if e == &s.lru || e.key == key || e.fetching != nil || e.expires.IsZero() {
			return
		}
		limit := e.expires
		if e.unreachable {
			limit = limit.Add(robotsMaxAge)
		}
		if now.Before(limit) {
			return
		}
		s.drop(e)
	}
}

// evict forgets the least recently used entry that no request is
// fetching, and reports whether it found one.
func (s *robotsShard) evict() bool {
	for e := s.lru.prev; e != &s.lru; e = e.prev {
		if e.fetching == nil {
			s.drop(e)
			return true
		}
	}
	return false
}

func (e *robotsEntry) unlink() {
	if e.prev != nil {
		e.prev.next, e.next.prev = e.next, e.prev
		e.prev, e.next = nil, nil
	}
}

func (e *robotsEntry) pushFront(head *robotsEntry) {
	e.prev, e.next = head, head.next
	head.next.prev = e
	head.next = e
}

// robotsWeightBytes is the bytes of rules that count as one origin more
// against MaxOrigins.
const robotsWeightBytes = 4 << 10

// weight returns what the origin key, whose robots.txt is f (nil: none
// read), counts against MaxOrigins: one, and one more for each
// robotsWeightBytes of its rules, of its key (a host a link chose may be
// long too) and of the error it keeps, err (nil: none; a hostile server's
// may be maxRobotsErr long, and hold the certificates of its handshake:
// see errHeld).
func (f *robotsFile) weight(key string, err error) int64 {
	n := len(key)
	if err != nil {
		msg, _ := errText(err)
		n += len(msg) + errHeld(err)
	}
	if f != nil {
		n += len(f.patterns) + 4*len(f.ends) + len(f.agent)
	}
	return 1 + int64(n)/robotsWeightBytes
}

// errRobotsTimeout is the cause of a robots.txt fetch that took longer than
// robotsFetchTimeout.
var errRobotsTimeout = errors.New("polite: robots.txt fetch timed out")

// robotsFetch is a fetch under way in a goroutine of its own.
type robotsFetch struct {
	done     chan struct{} // closed when the fetch ended, or its bound did
	once     sync.Once     // closes done
	panicked bool          // Base panicked, with panicVal
	panicVal any
	exited   bool // Base called runtime.Goexit (t.FailNow in a test's Base)
}

// finish ends f once: set, run first, records how. It reports whether this
// call ended it (false: ended already, and set not run).
//
// If set panics or ends the goroutine, f records it as Base's own, and
// ends: the Once is spent, and the requests waiting see a fetch abandoned,
// not one that ended with nothing recorded (which they fetched again at
// once, for ever).
func (f *robotsFetch) finish(set func()) bool {
	won := false
	f.once.Do(func() {
		ended := false
		defer func() {
			if !ended {
				if v := recover(); v != nil {
					f.panicked, f.panicVal = true, v
				} else {
					f.exited = true
				}
			}
			close(f.done)
		}()
		set()
		ended, won = true, true
	})
	return won
}

// startFetch fetches e's robots.txt, that of site, for a request whose
// context is ctx and whose User-Agent is ua, in a goroutine of its own: the
// values of ctx go with it, its end does not. If Base panics or ends the
// goroutine, the fetch is abandoned (the next request fetches again), and
// f says so. A fetch that has not ended a second after robotsFetchTimeout
// (when its context ends) ends then, unreachable, whatever Base does: one
// whose RoundTrip ignored its request's context held every request to the
// origin for good. What it answers later, a panic included, is dropped.
// (The second lets a Base that watches the context end the fetch itself,
// its body closed, first.)
func (c *robotsCache) startFetch(ctx context.Context, base http.RoundTripper, sh *robotsShard, e *robotsEntry, site robotsSite, ua string) *robotsFetch {
	f := &robotsFetch{done: make(chan struct{})}
	ctx = context.WithoutCancel(ctx)
	bound := time.AfterFunc(robotsFetchTimeout+time.Second, func() {
		f.finish(func() { sh.end(e, robotsResult{unreachable: true, err: errRobotsTimeout}, time.Now()) })
	})
	go func() {
		returned := false
		defer func() {
			bound.Stop()
			if returned {
				return
			}
			v := recover()
			f.finish(func() {
				sh.abandon(e)
				if v != nil {
					f.panicked, f.panicVal = true, v
				} else {
					f.exited = true
				}
			})
		}()
		r := c.fetch(ctx, base, site, ua)
		f.finish(func() { sh.end(e, r, time.Now()) })
		returned = true
	}()
	return f
}

// fetch GETs site's robots.txt through base (RFC 9309 §2.3), from its
// origin with its Host, if any, following up to robotsMaxRedirects
// redirects, and reads what it says. A redirect keeps the Host while its
// Location names no host of its own, as http.Client keeps a Host across
// a relative Location.
func (c *robotsCache) fetch(ctx context.Context, base http.RoundTripper, site robotsSite, ua string) robotsResult {
	ctx, cancel := context.WithTimeoutCause(ctx, robotsFetchTimeout, errRobotsTimeout)
	defer cancel()
	if ua == "" {
		ua = c.userAgent
	}
	// The origin's host is unescaped: an IPv6 zone's '%' is escaped
	// again, as in the URL it came from.
	next := strings.ReplaceAll(site.origin, "%", "%25") + "/robots.txt"
	host := site.host
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			// A URL that cannot be built: unreachable, not unavailable,
			// which would allow every path unread.
			return robotsResult{unreachable: true, err: err}
		}
		if ua != "" {
			req.Header.Set("User-Agent", ua)
		}
		if host != "" {
			req.Host = host
		}
		sent := time.Now()
		resp, err := base.RoundTrip(req)
		if err != nil {
			if resp != nil && resp.Body != nil {
				resp.Body.Close()
			}
			return robotsResult{unreachable: true, err: fetchErr(ctx, err)}
		}
		if resp == nil {
			return robotsResult{unreachable: true, err: errNilResponse}
		}
		if resp.Body == nil {
			resp.Body = http.NoBody // as http.Client reads it
		}
		switch code := resp.StatusCode; {
		case code >= 200 && code < 300:
			// Read while the fetch lasts: its context's end closes the
			// body, for a Base whose bodies do not watch the context.
			stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
			body, err := io.ReadAll(io.LimitReader(resp.Body, maxRobotsBytes+1))
			if stop() { // else closed by the context's end
				resp.Body.Close()
			}
			if err != nil {
				return robotsResult{unreachable: true, err: fetchErr(ctx, err)}
			}
			return robotsResult{file: parseRobots(body, c.token)}
		case code == http.StatusTooManyRequests || code >= 500 ||
			code == http.StatusForbidden && forbiddenAnswer(resp.Header, time.Now(), false):
			// Refused for rate, a 403 that says so too (DESIGN.md
			// §1.10): unreachable for now, not unavailable. A
			// Retry-After date is read by when the request was sent,
			// as for a page (see offWait).
			wait, _ := retryAfter(resp.Header, time.Now(), time.Time{}, sent, nil)
			discard(ctx, resp.Body)
			return robotsResult{unreachable: true, status: code, retryAfter: wait}
		case code == http.StatusMovedPermanently, code == http.StatusFound, code == http.StatusSeeOther,
			code == http.StatusTemporaryRedirect, code == http.StatusPermanentRedirect:
			discard(ctx, resp.Body)
			if hop == robotsMaxRedirects {
				return robotsResult{} // unavailable (§2.3.1.2)
			}
			var named, ok bool
			if next, named, ok = redirectTarget(req.URL, resp.Header.Get("Location")); !ok {
				return robotsResult{}
			}
			if named {
				host = "" // the host the Location names is the authority
			}
		default: // 4xx, and other answers that say nothing: unavailable
			discard(ctx, resp.Body)
			return robotsResult{}
		}
	}
}

// fetchErr returns the error to report for a failed fetch under ctx: err,
// unless the fetch timed out.
func fetchErr(ctx context.Context, err error) error {
	if context.Cause(ctx) == errRobotsTimeout {
		return errRobotsTimeout
	}
	return err
}

// maxRobotsErr is the most bytes of a fetch's error message an entry
// keeps whole (see boundedErr): more than a long signed URL's error.
const maxRobotsErr = 8 << 10

// boundedErr returns err, or, when its message is longer than
// maxRobotsErr, an error of its first 1 KiB: net/http quotes a
// status line it cannot read whole in its error, up to its header limit,
// and an unreachable origin's entry keeps its error until the next fetch
// (a megabyte an origin, from a hostile server). An error whose Error
// method panics (a nil *T returned as an error) is replaced by one
// naming its type: kept, it panicked in the fetch's end,
// which then never woke the requests waiting for it, and in every
// RobotsError's Error. Such errors unwrap to nothing.
func boundedErr(err error) error {
	if err == nil {
		return nil
	}
	msg, ok := errText(err)
	switch {
	case !ok:
		return errors.New(msg)
	case len(msg) > maxRobotsErr:
		return errors.New(strings.ToValidUTF8(msg[:1<<10], "") + "…")
	}
	return err
}

// errText returns err's message, and false, with its type only, when its
// Error method panics (fmt, printing it, panics too when the panic's value
// is err itself).
func errText(err error) (msg string, ok bool) {
	defer func() {
		if recover() != nil {
			msg, ok = fmt.Sprintf("an error of type %T whose Error method panicked", err), false
		}
	}()
	return err.Error(), true
}

// certWeight is what one certificate an error holds counts as, for each
// byte of its DER: a certificate parsed off a handshake keeps its DER and
// parsed copies of much of it (a certificate of 200 KB held about 600 KB
// on a loopback handshake).
const certWeight = 3

// errHeld returns the bytes err holds beyond its message, as far as the
// errors net/http and crypto/tls return show it: the certificates of a
// handshake that failed to verify, which a hostile server makes as large
// as a handshake allows (256 KiB), a distinct one for each of its host
// names. It looks at 64 errors of err's tree at most, and at each of the
// first 16 certificates once; a method of an error that panics (a nil *T) ends the
// count.
func errHeld(err error) (n int) {
	defer func() { _ = recover() }()
	var seen []*x509.Certificate
	add := func(c *x509.Certificate) {
		switch {
		case c == nil || slices.Contains(seen, c):
			return
		case len(seen) < 16: // more are counted as many times as held
			seen = append(seen, c)
		}
		n += certWeight * len(c.Raw)
	}
	stack := []error{err}
	for visited := 0; len(stack) > 0 && visited < 64; visited++ {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch e := e.(type) {
		case *tls.CertificateVerificationError:
			if e != nil {
				for _, c := range e.UnverifiedCertificates {
					add(c)
				}
			}
		case x509.UnknownAuthorityError:
			add(e.Cert)
		case *x509.UnknownAuthorityError:
			if e != nil {
				add(e.Cert)
			}
		case x509.HostnameError:
			add(e.Certificate)
		case *x509.HostnameError:
			if e != nil {
				add(e.Certificate)
			}
		case x509.CertificateInvalidError:
			add(e.Cert)
		case *x509.CertificateInvalidError:
			if e != nil {
				add(e.Cert)
			}
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if w := u.Unwrap(); w != nil {
				stack = append(stack, w)
			}
		case interface{ Unwrap() []error }:
			for _, w := range u.Unwrap() {
				if w != nil && visited+len(stack) < 64 {
					stack = append(stack, w)
				}
			}
		}
	}
	return n
}

// redirectTarget resolves a redirect's Location against from, and reports
// whether the Location names a host of its own, and whether it may be
// followed: to the same scheme, or to http or https (RFC 9309 §2.3.1.2
// follows redirects across authorities). A redirect from https to http is
// followed too: refused, it would leave robots.txt unavailable and every
// path allowed, unread, which a site that serves its robots.txt over http
// only does not mean.
func redirectTarget(from *url.URL, loc string) (target string, named, ok bool) {
	if loc == "" {
		return "", false, false
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return "", false, false
	}
	to := from.ResolveReference(ref)
	if to.Host == "" || to.Scheme != from.Scheme && to.Scheme != "http" && to.Scheme != "https" {
		return "", false, false
	}
	to.Fragment, to.RawFragment = "", ""
	return to.String(), ref.Host != "", true
}

// robotsIn decides req under the robots.txt of its origin (see
// Transport.Robots), before its first wait for the budget key key, and
// again before an attempt whose wait outlasted the verdict: it returns a
// *RobotsError if req must not be sent, or the context's error, and then
// closes req's body unless it was sent already (sent). The interval
// robots.txt asks for becomes key's floor, and is returned, with until
// when the verdict holds: req brings the floor back to an entry of the
// local ceilings dropped while it waited (see ceilings.reserve). It waits
// for a fetch of robots.txt until ctx ends. (verdict.decide calls it.)
func (t *Transport) robotsIn(ctx context.Context, req *http.Request, key budgetKey, sent bool) (time.Duration, time.Time, error) {
	checked := false
	defer func() {
		if !checked && !sent && req.Body != nil {
			// Base panicked fetching robots.txt: the panic goes on,
			// req's body closed, as send closes it.
			req.Body.Close()
		}
	}()
	interval, until, err := t.Robots.checkUntil(ctx, t.base(), req)
	checked = true
	if err != nil {
		if !sent && req.Body != nil {
			req.Body.Close()
		}
		return 0, until, err
	}
	if interval < 0 {
		return 0, until, nil // unknown: the floor kept stays
	}
	if interval > 0 || t.ceil.floors.Load() {
		// The floor of the origin, whatever the request's key (see
		// ceilings.reserveFloor).
		t.ceil.setFloor(floorOrigin(req, key), interval)
	}
	return interval, until, nil
}

// errPastLimit is redecide's error when the fetch it waits for outlasts
// the wait MaxWait honours.
var errPastLimit = errors.New("polite: robots.txt fetched past MaxWait")

// verdict is what robots.txt decided of a request: the floor it asks
// between starts to the origin, and until when the decision holds (zero:
// for ever).
type verdict struct {
	floor time.Duration
	until time.Time
	seq   uint64 // the Robots' fetches ended before it was decided (see robotsCache.fetched)
}

// stale reports whether the verdict v no longer holds at now, for a
// request of the Transport t: the file it read expired, or, for a request
// that waited since (waited), one of the fetches ended since may have
// replaced it (the origin forgotten to make room, and fetched again): a
// retry is never sent by a file no longer in force. Decided again, a
// request whose file is still in force finds it in the cache.
func (v *verdict) stale(now time.Time, t *Transport, waited bool) bool {
	if v.until.IsZero() {
		return false // for ever
	}
	return !now.Before(v.until) || waited && t.Robots.robotsCache().fetched.Load() != v.seq
}

// decide sets v to what robots.txt says of req (see Transport.robotsIn),
// waiting for a fetch until ctx ends.
func (v *verdict) decide(ctx context.Context, t *Transport, req *http.Request, key budgetKey, sent bool) error {
	floor, until, err := t.robotsIn(ctx, req, key, sent)
	if err == nil {
		// Counted after: a fetch this decision waited for is not one
		// that may have replaced its file. (One of the same origin
		// ending in between, a moment's race, goes unseen.)
		v.floor, v.until, v.seq = floor, until, t.Robots.robotsCache().fetched.Load()
	}
	return err
}

// redecide decides req again under the robots.txt of its origin (see
// robotsIn), for an attempt held (see Transport.hold) past the verdict rv
// it was decided by, before it may be granted: its places in the lines of
// the local pace are kept meanwhile, so that the requests behind it wait
// for the fetch of a file expired too, rather than being granted while it
// fetches and sent with it once it is granted (a grant held through the
// fetch counted the request's start at the grant). A turn it claimed in
// the budget lapses, as any claim not asked again does (see control's
// turn.go), and a request that asked after it may go first, paced after
// the last start the budget granted. A request the file forbids fails
// with its *RobotsError, which an event reports as recheck's. The fetch
// is waited for until limit, the end of the longest wait MaxWait
// honours, at most: past it, redecide returns errPastLimit, and the
// request fails as one held that long does (the fetch goes on for the
// others).
func (t *Transport) redecide(req *http.Request, b *Budget, key budgetKey, attempt int, rv *verdict, g *lease, limit time.Time) error {
	checked := false
	defer func() {
		if !checked && attempt == 1 && req.Body != nil {
			// Base panicked fetching robots.txt: the panic goes on,
			// the body of the request never sent closed, as send
			// closes it (an error is the caller's to close it for).
			req.Body.Close()
		}
	}()
	ctx, cancel := context.WithDeadline(req.Context(), limit)
	defer cancel()
	err := rv.decide(ctx, t, req, key, true)
	checked = true
	if err != nil && ctx.Err() != nil && req.Context().Err() == nil {
		return errPastLimit
	}
	if err != nil {
		var re *RobotsError
		if t.observed() && errors.As(err, &re) && req.Context().Err() == nil {
			t.emit(Event{Kind: EventGiveUp, Time: time.Now(), Key: b.display(key), Request: req, Attempt: attempt, Err: eventError(err, req, key)})
		}
		return err
	}
	g.floor = rv.floor
	return nil
}

// recheck decides req again under the robots.txt of its origin (see
// robotsIn), for an attempt granted g whose wait outlasted the verdict it
// was decided by, when the verdict ended after hold decided it again
// (see redecide), between that and the grant. The grant is held meanwhile: the fetch of a file
// expired is a request to the origin too, and a grant given back and
// asked anew would wait again behind the start the local ceilings keep
// for it (asked again at each expiry, a request paced slower than an
// unreachable robots.txt is fetched again was never sent). When req must
// not be sent, or Base panics fetching, g ends unsent, and a refusal is
// reported as the attempt's end.
func (t *Transport) recheck(req *http.Request, b *Budget, key *budgetKey, g *lease, attempt int, rv *verdict) (err error) {
	done := false
	defer func() {
		if !done {
			t.finish(req, b, *key, g, time.Now(), &control.Outcome{Failed: true, Unsent: true})
		}
	}()
	err = rv.decide(req.Context(), t, req, *key, attempt > 1)
	done = true
	if err == nil {
		if g.ceil.ok {
			// The request starts now: Restraint's latency is the
			// origin's, not that of the fetch held before it.
			g.ceil.start = time.Now()
		}
		return nil
	}
	t.finish(req, b, *key, g, time.Now(), &control.Outcome{Failed: true, Unsent: true})
	var re *RobotsError
	if t.observed() && errors.As(err, &re) && req.Context().Err() == nil {
		// (A context that ended during the fetch gives up no refusal, as
		// no wait it ends does.)
		t.emit(Event{Kind: EventGiveUp, Time: time.Now(), Key: b.display(*key), Request: req, Attempt: attempt, Err: eventError(err, req, *key)})
	}
	return err
}

// floorOrigin returns the key of the origin whose floor (a robots.txt
// Crawl-delay) paces req, under the budget key key: the origin its Host
// names when that is another than its URL's host (see robotsHost), a
// virtual host reached at an address, or else its URL's origin, which is
// key unless key is custom (Transport.Key).
func floorOrigin(req *http.Request, key budgetKey) memKey {
	if h := robotsHost(req); h != "" {
		return originKey(req.URL.Scheme, h).m
	}
	if key.custom {
		return originKey(req.URL.Scheme, req.URL.Host).m
	}
	return key.m
}
