package polite

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/politehttp/polite/internal/origin"
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

// ceil returns the key of k's entry in the local ceilings: its memKey,
// but for a custom key one no origin has (its scheme marked), so that a
// custom key written as an origin ("http://example.com", for every host
// of a domain) is not that origin's entry, whose floor its Crawl-delay
// sets: the floor paces the origin, never the key (see floorOrigin).
func (k budgetKey) ceil() memKey {
	if !k.custom || k.m.scheme == "" {
		return k.m // an origin's, or a custom key no origin's can be
	}
	switch k.m.scheme {
	case "http":
		return memKey{scheme: "\x00http", host: k.m.host}
	case "https":
		return memKey{scheme: "\x00https", host: k.m.host}
	}
	return memKey{scheme: "\x00" + k.m.scheme, host: k.m.host}
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
// its ASCII form (see origin.Normal). A host already in that form is used as it
// is, without allocating.
//
// A scheme or host longer than any a server can be reached at is kept as
// its digest (see digestLong), so that what a key keeps is bounded whatever a
// server redirects to.
func originKey(scheme, host string) budgetKey {
	return budgetKey{m: memKey{scheme: digestLong(origin.LowerASCII(scheme), maxSchemeLen), host: digestLong(origin.Normal(scheme, host), maxHostLen)}}
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

// lookupKey returns the budget key a caller names: a URL or an origin
// ("https://API.example:443/path" names "https://api.example"), normalised
// as a request's would be; anything else is a custom key, as it is.
func lookupKey(key string) (origin, raw memKey, isOrigin bool) {
	raw = splitKey(key)
	u, err := url.Parse(key)
	if z := zoneAt(key); z >= 0 && (err != nil || strings.HasSuffix(u.Hostname(), "%")) {
		// An origin as State.Key and Event.Key show it, its IPv6 zone
		// unescaped ("http://[fe80::1%en0]:8080"), which url.Parse
		// rejects, named a custom key; so did a zone of 25, an
		// interface's number ("[fe80::1%25]", an escaped '%' and no
		// zone to url.Parse, which go1.25 reads as an empty zone). (A
		// zone of 250 is shown as url.Parse reads zone 0: that key
		// names zone 0.)
		u, err = url.Parse(key[:z] + "%25" + key[z+1:])
	}
	if err != nil || u.Scheme == "" || u.Host == "" {
		return memKey{}, raw, false
	}
	return originKey(u.Scheme, u.Host).m, raw, true
}

// zoneAt returns the index in key of the '%' that starts the zone of a
// bracketed host ("http://user@[fe80::1%en0]:8080/"), after any user
// information; -1 if none. A '%' in a path's brackets ("/files/[50%]")
// starts none.
func zoneAt(key string) int {
	h := strings.Index(key, "://") + 3
	if h < 3 {
		return -1
	}
	end := len(key)
	if e := strings.IndexAny(key[h:], "/?#"); e >= 0 {
		end = h + e
	}
	if at := strings.LastIndexByte(key[h:end], '@'); at >= 0 {
		h += at + 1
	}
	if !strings.HasPrefix(key[h:], "[") {
		return -1
	}
	j := strings.IndexByte(key[h:], ']')
	if j <= 0 {
		return -1
	}
	if z := strings.IndexByte(key[h:h+j], '%'); z > 0 {
		return h + z
	}
	return -1
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
