package polite

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"
)

// budgetKey is the budget key of a request: an origin, or what a custom
// Transport.Key returned.
type budgetKey struct {
	m memKey
	// custom reports a key from Transport.Key: it may hold a credential,
	// so it is shown only as a fingerprint.
	custom bool
	// sh is the key's shard in the Budget's in-memory store, when known
	// (see keyMemo); nil: look it up.
	sh *memShard
	// memo is the memo that holds the key, when it is a memo's (see
	// keyMemo); nil otherwise.
	memo *keyMemo
}

// keyMemo is the budget key of an origin a Transport saw lately, so that
// the requests that follow to the same origin, nearly all of them, skip
// normalising it and finding its shard: the scheme and host as the
// request's URL carried them, and the key they give. It is never changed
// once shared.
type keyMemo struct {
	scheme, host string
	key          budgetKey
	mem          *MemoryStore // the store key.sh belongs to
}

// memoSlots is how many origins a Transport remembers, each in the slot
// its originHash picks, so that goroutines talking to a few origins each
// do not evict each other's.
const memoSlots = 8

// originOf returns the budget key of req's origin, through the Transport's
// memo of the origins seen lately: the memo's key, never changed, or buf,
// set to the key. On a miss the memo is replaced only when
// the origin missed twice in a row, so that origins that alternate in one
// slot do not allocate a memo per request, and never by a host longer than
// a key keeps (see digestLong), which the memo would keep whole.
func (t *Transport) originOf(req *http.Request, b *Budget, buf *budgetKey) *budgetKey {
	scheme, host := req.URL.Scheme, req.URL.Host
	slot := &t.memo[memoSlot(host)]
	if m := slot.Load(); m != nil && m.host == host && m.scheme == scheme && m.mem == b.mem {
		return &m.key
	}
	*buf = originKey(scheme, host)
	if h := originHash(scheme, host); t.missed.Swap(h) == h && len(host) <= maxHostLen {
		if b.mem != nil {
			buf.sh = b.mem.shard(buf.m)
		}
		// Copies: kept in the slot and in the key's entry, strings cut
		// from the request's URL would keep it whole.
		m := &keyMemo{scheme: strings.Clone(scheme), host: strings.Clone(host), key: *buf, mem: b.mem}
		m.key.m = m.key.m.clone()
		m.key.memo = m
		slot.Store(m)
	}
	return buf
}

// memoSlot returns the memo slot of host: a few of its bytes mixed, which
// tell apart most hosts that differ in a label or a number, at a fraction
// of the cost of hashing it all. Two origins in one slot only miss.
func memoSlot(host string) uint {
	n := uint(len(host))
	if n == 0 {
		return 0
	}
	x := n + uint(host[0]) + 3*uint(host[n/2]) + 5*uint(host[n-1]) + 7*uint(host[min(1, n-1)]) + 11*uint(host[n/3])
	return (x ^ x>>3) % memoSlots
}

// originHash is FNV-1a of a scheme and a host, never zero.
func originHash(scheme, host string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(scheme); i++ {
		h = (h ^ uint64(scheme[i])) * 1099511628211
	}
	h = (h ^ ':') * 1099511628211
	for i := 0; i < len(host); i++ {
		h = (h ^ uint64(host[i])) * 1099511628211
	}
	return h | 1
}

// originKey returns the budget key of an origin: the scheme and host
// lower-cased, the host's trailing dot removed, the scheme's default port
// dropped (80 for http, 443 for https) and an internationalised host in
// its ASCII form (see toASCII). A host already in that form is used as it
// is, without allocating.
//
// A scheme or host longer than any a server can be reached at is kept as
// its digest (see digestLong), so that what a key keeps is bounded whatever a
// server redirects to.
func originKey(scheme, host string) budgetKey {
	return budgetKey{m: memKey{scheme: digestLong(lowerASCII(scheme), maxSchemeLen), host: digestLong(normalHost(scheme, host), maxHostLen)}}
}

const (
	// maxHostLen is the longest host[:port] a key keeps as it is: a DNS
	// name (253 bytes, RFC 1035 §2.3.4) and a port.
	maxHostLen = 253 + len(":65535")
	// maxSchemeLen is the longest scheme a key keeps as it is.
	maxSchemeLen = 32
)

// digestLong returns s if it is at most max bytes long, else "~sha256-" and
// the hex SHA-256 digest of s: one name, 72 bytes, for one s, where a
// hostile server's redirects could make a key keep a host of a megabyte
// for each origin (the field limit of net/http). No host that DNS or an
// IP address can name begins with "~".
func digestLong(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "~sha256-" + hex.EncodeToString(sum[:])
}

// normalHost normalises the host[:port] of an origin.
func normalHost(scheme, hostport string) string {
	if isNormal(hostport) {
		return hostport
	}
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.Contains(hostport[i:], "]") {
		host, port = hostport[:i], hostport[i+1:]
	}
	port = noLeadingZeros(port) // net/http dials ":0443" as port 443
	switch {
	case port == "":
	case port == "80" && strings.EqualFold(scheme, "http"), port == "443" && strings.EqualFold(scheme, "https"):
		port = ""
	}
	host = trimDot(host)
	if !isLowerASCII(host) {
		host = toASCII(host)
	}
	if strings.HasPrefix(host, "[") {
		host = canonicalIP(host)
	}
	if port == "" {
		if len(host) <= len(hostport) && hostport[:len(host)] == host {
			return hostport[:len(host)] // no allocation
		}
		return host
	}
	if len(host)+1+len(port) == len(hostport) && hostport[:len(host)] == host {
		return hostport
	}
	return host + ":" + port
}

// canonicalIP returns a bracketed IPv6 literal in its canonical form
// (RFC 5952: lower case, no leading zeros, the longest run of zeros
// shortened), its zone kept as it is: "[2001:0DB8:0:0:0:0:0:1]" and
// "[2001:db8::1]" are one address, dialed alike; an IPv4-mapped one is
// its IPv4 address ("[::ffff:192.0.2.1]" is "192.0.2.1"). A literal that
// does not parse is returned as it is.
func canonicalIP(host string) string {
	if len(host) < 2 || host[len(host)-1] != ']' {
		return host
	}
	addr, zone, hasZone := strings.Cut(host[1:len(host)-1], "%")
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return host
	}
	if a.Is4In6() && !hasZone {
		return a.Unmap().String() // "[::ffff:192.0.2.1]" is 192.0.2.1
	}
	c := a.String()
	if c == addr {
		return host
	}
	if hasZone {
		return "[" + c + "%" + zone + "]"
	}
	return "[" + c + "]"
}

// trimDot returns host without one trailing dot, or ideographic or
// full-width full stop, which toASCII maps to a dot ("api.example。" is
// "api.example." too).
func trimDot(host string) string {
	for _, dot := range [...]string{".", "\u3002", "\uff0e", "\uff61"} {
		if strings.HasSuffix(host, dot) {
			return host[:len(host)-len(dot)]
		}
	}
	return host
}

// noLeadingZeros returns a port number without its leading zeros ("0"
// for a port of zeros).
func noLeadingZeros(port string) string {
	if len(port) < 2 || port[0] != '0' {
		return port
	}
	if port = strings.TrimLeft(port, "0"); port == "" {
		return "0"
	}
	return port
}

// isNormal reports whether a host[:port] is normal already as far as one
// pass can tell: no port, no trailing dot, no upper case, all ASCII.
func isNormal(hostport string) bool {
	for i := 0; i < len(hostport); i++ {
		if c := hostport[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') || c == ':' {
			return false
		}
	}
	return len(hostport) > 0 && hostport[len(hostport)-1] != '.'
}

// isLowerASCII reports whether s has no upper-case letter and no byte
// beyond ASCII.
func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func lowerASCII(s string) string {
	if s == "https" || s == "http" || isLowerASCII(s) {
		return s
	}
	return strings.ToLower(s)
}

// toASCII returns host lower-cased, with each label that has a character
// beyond ASCII in its Punycode form ("xn--" and RFC 3492), as IDNA writes
// it. It is a small subset of IDNA (RFC 5891, UTS #46): it lower-cases with
// Unicode's simple case mapping and maps the ideographic full stops to
// dots, but does not normalise to NFC, map other compatibility characters
// or reject disallowed ones. Hosts that differ only in such ways get
// different keys; a host in the same form every time, as URLs usually
// carry, always gets the same one. A bracketed IP literal is returned
// lower-cased, but for its zone (after '%'), an interface name whose case
// counts. "İ" (U+0130), the one character beyond ASCII that the simple
// mapping lower-cases to ASCII but IDNA does not ("i" and a combining dot
// above, U+0307), is mapped as IDNA maps it: "İbm.example" is not
// "ibm.example"; and so is "ẞ" (U+1E9E), which IDNA maps to "ss" where the
// simple mapping gives "ß": "STRAẞE.example" is dialed as
// "strasse.example", and keyed so, not as "straße.example", another host.
func toASCII(host string) string {
	if strings.HasPrefix(host, "[") {
		addr, zone, _ := strings.Cut(host, "%")
		if zone != "" {
			return strings.ToLower(addr) + "%" + zone
		}
		return strings.ToLower(host)
	}
	host = strings.ToLower(strings.NewReplacer("\u0130", "i\u0307", "\u1e9e", "ss").Replace(host))
	if isLowerASCII(host) {
		return host
	}
	host = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".").Replace(host)
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if !isLowerASCII(l) {
			if p, ok := punycode(l); ok {
				labels[i] = "xn--" + p
			}
		}
	}
	return strings.Join(labels, ".")
}

// punycode encodes s by RFC 3492 §6.3; false on overflow, and for a
// label of more than 63 characters, which no DNS label encodes (RFC 1035
// §2.3.4): the encoding takes time quadratic in the label's length.
func punycode(s string) (string, bool) {
	if utf8.RuneCountInString(s) > 63 {
		return "", false
	}
	const (
		base, tmin, tmax = 36, 1, 26
		skew, damp       = 38, 700
		initialBias      = 72
		initialN         = 128
		maxInt           = 1<<31 - 1
	)
	runes := []rune(s)
	var out []byte
	for _, r := range runes {
		if r < utf8.RuneSelf {
			out = append(out, byte(r))
		}
	}
	b := len(out)
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	digit := func(d int) byte {
		if d < 26 {
			return byte('a' + d)
		}
		return byte('0' + d - 26)
	}
	adapt := func(delta, points int, first bool) int {
		if first {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / points
		k := 0
		for delta > ((base-tmin)*tmax)/2 {
			delta /= base - tmin
			k += base
		}
		return k + (base-tmin+1)*delta/(delta+skew)
	}
	n, delta, bias := initialN, 0, initialBias
	for h < len(runes) {
		m := maxInt
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		if (m - n) > (maxInt-delta)/(h+1) {
			return "", false
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				if delta++; delta == maxInt {
					return "", false
				}
			}
			if int(r) == n {
				q := delta
				for k := base; ; k += base {
					t := k - bias
					switch {
					case t < tmin:
						t = tmin
					case t > tmax:
						t = tmax
					}
					if q < t {
						break
					}
					out = append(out, digit(t+(q-t)%(base-t)))
					q = (q - t) / (base - t)
				}
				out = append(out, digit(q))
				bias = adapt(delta, h+1, h == b)
				delta = 0
				h++
			}
		}
		delta++
		n++
	}
	return string(out), true
}

// lookupKey returns the budget key a caller names: a URL or an origin
// ("https://API.example:443/path" names "https://api.example"), normalised
// as a request's would be; anything else is a custom key, as it is.
func lookupKey(key string) (origin, raw memKey, isOrigin bool) {
	raw = splitKey(key)
	u, err := url.Parse(key)
	if err != nil {
		// An origin as State.Key and Event.Key show it: an IPv6 zone
		// unescaped ("http://[fe80::1%en0]:8080"), which url.Parse
		// rejects, named a custom key.
		// Only a host's, after any user information: a '%' in a
		// path's brackets ("/files/[50%]") makes no origin.
		h := strings.Index(key, "://") + 3
		if h >= 3 {
			end := len(key)
			if e := strings.IndexAny(key[h:], "/?#"); e >= 0 {
				end = h + e
			}
			if at := strings.LastIndexByte(key[h:end], '@'); at >= 0 {
				h += at + 1
			}
		}
		if h >= 3 && strings.HasPrefix(key[h:], "[") {
			if j := strings.IndexByte(key[h:], ']'); j > 0 {
				if z := strings.IndexByte(key[h:h+j], '%'); z > 0 && !strings.HasPrefix(key[h+z:], "%25") {
					u, err = url.Parse(key[:h+z] + "%25" + key[h+z+1:])
				}
			}
		}
	}
	if err != nil || u.Scheme == "" || u.Host == "" {
		return memKey{}, raw, false
	}
	return originKey(u.Scheme, u.Host).m, raw, true
}

// fingerprint returns a short stable name for a custom key: "key-" and 8
// hex digits of an HMAC-SHA256 of the key under the Budget's secret. It is
// the same for the same key within one Budget, and reveals nothing of the
// key.
func fingerprint(secret []byte, key string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(key))
	var sum [sha256.Size]byte
	return "key-" + hex.EncodeToString(m.Sum(sum[:0])[:4])
}
