package otelpolite

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"weak"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/origin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// source is an instrumented Transport, whose budget the gauge reads. It
// holds it weakly: the gauge's keys and the MeterProvider's callback kept
// every Transport a program dropped alive, its budget with it, and read
// it at every collection.
type source struct {
	t weak.Pointer[polite.Transport]
}

// quota is one quota of a budget key, as the gauge reports it.
type quota struct {
	policy    string // policy name; "" when the server named none
	partition string // partition key, hashed by polite; "" when none
	unit      string // "requests", "content-bytes", "concurrent-requests"
	source    string // "server", or "refusals" for a learned quota
	remaining int64
}

// quotas returns the quotas of key in src's budget at now that have a live
// remaining count, at most maxQuotaSeries of them, unless events showed
// key as a custom key's fingerprint, shown (Event.Key), and the state
// Inspect finds for it is shown otherwise: another key's. It is the one place that
// reads polite's inspection API.
func quotas(src *source, key, shown string, now time.Time) []quota {
	t := src.t.Value()
	if t == nil {
		return nil // dropped: see keySet.sweep
	}
	st, ok := t.Inspect(key, now)
	if !ok || fingerprinted(shown) && st.Key != shown {
		// Another key's state: a custom key shaped like a URL that the
		// budget forgot is, for Inspect, the origin it names, whose
		// quota was reported under the custom key's fingerprint. (An
		// origin's state that a custom key naming the origin shares is
		// shown by a fingerprint, and is still the origin's.)
		return nil
	}
	ps := st.Policies
	if st.Learned != nil {
		ps = append(ps[:len(ps):len(ps)], *st.Learned)
	}
	var out []quota
	for _, p := range ps {
		if p.Remaining < 0 || len(out) == maxQuotaSeries {
			continue
		}
		out = append(out, quota{policy: validText(p.Name), partition: p.Partition, unit: validText(p.Unit), source: p.Source, remaining: p.Remaining})
	}
	return out
}

// keySet holds the budget keys seen in events, at most max of them; when
// full, the eighth seen least recently makes room (see evict). A key
// already held is noted without a lock.
type keySet struct {
	max int
	m   sync.Map // keyID -> *keyEntry
	mu  sync.Mutex
	n   int // entries in m; under mu
	// sweeps counts the scans evict made; under mu.
	sweeps int
	// events counts the events seen, in the order seen: an entry's seen
	// is the count at its last. Ordered by Event.Time instead, keys seen
	// at one instant were evicted at random, the newest among them, and
	// so was a key whose event carried an earlier Time (a refusal's may,
	// by up to a second).
	events atomic.Int64
}

type keyID struct {
	src *source
	key string // Event.Key
}

type keyEntry struct {
	inspect string // the key to inspect src's budget with; never exported
	attrs   []attribute.KeyValue
	seen    atomic.Int64 // the keySet's count of events at the key's last one
	partial bool         // made from an event without a request: see seen
}

func newKeySet(max int) *keySet {
	if max == 0 {
		max = defaultMaxKeys
	}
	return &keySet{max: max}
}

// seen notes that e, from src, concerns e.Key.
func (s *keySet) seen(e polite.Event, src *source) {
	id := keyID{src: src, key: e.Key}
	now := s.events.Add(1)
	old, ok := s.m.Load(id)
	if ok {
		old.(*keyEntry).seen.Store(now)
		if !old.(*keyEntry).partial || e.Request == nil {
			return
		}
	}
	t := src.t.Value()
	if t == nil {
		return // an event of a Transport dropped since (a body it left ended)
	}
	k := &keyEntry{inspect: e.Key, attrs: keyAttrs(e, t.Key != nil), partial: e.Request == nil}
	if t.Key != nil && e.Request != nil {
		// Event.Key may be a fingerprint of the key, by which the budget
		// cannot be inspected: ask Key again. A copy: Key may cut it from
		// the request's URL, which it would keep whole for as long as the
		// key is kept.
		k.inspect = strings.Clone(t.Key(e.Request))
	}
	k.seen.Store(now)

	s.mu.Lock()
	defer s.mu.Unlock()
	if ok {
		// The first event of the key had no request (a Store's, found
		// after RoundTrip returned): its entry lacked server.address and
		// server.port, and a custom key's could not be inspected. This
		// one has it, and replaces it.
		s.m.CompareAndSwap(id, old, k)
		return
	}
	if _, loaded := s.m.LoadOrStore(id, k); loaded {
		return
	}
	s.n++
	if s.n > s.max {
		s.evict()
	}
}

// evict drops the keys seen least recently, down to seven eighths of max,
// under s.mu: one scan of every key held makes room for max/8 new keys.
// (Dropping one key a scan, each event of a new key scanned them all
// under the lock once the set was full, as a crawler visiting more
// origins than MaxKeys keeps it: 0.1 ms an event at 1000
// keys, 1.7 ms at 10000, every request of the process waiting behind it.)
func (s *keySet) evict() {
	type held struct {
		id   any
		seen int64
	}
	all := make([]held, 0, s.n)
	s.m.Range(func(id, k any) bool {
		all = append(all, held{id, k.(*keyEntry).seen.Load()})
		return true
	})
	s.sweeps++
	drop := len(all) - (s.max - s.max/8)
	if drop <= 0 {
		return
	}
	slices.SortFunc(all, func(a, b held) int { return cmp.Compare(a.seen, b.seen) })
	for _, h := range all[:drop] {
		s.m.Delete(h.id)
	}
	s.n -= drop
}

// forget drops the entries ids, of Transports the program dropped.
func (s *keySet) forget(ids []keyID) {
	if len(ids) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if _, ok := s.m.LoadAndDelete(id); ok {
			s.n--
		}
	}
}

// keyAttrs returns the attributes that identify e's key on the gauge:
// polite.key, and server.address and server.port of e's request. When the
// key is the request's origin (always, unless custom: the Transport has a
// Key of its own), they are read from the key, in the one form polite
// gives it: Transports whose first requests spelled the host differently
// ("API.test.", "api.test", "[2001:db8:0::1]", "[2001:db8::1]", a Unicode
// host and its ASCII form) report one series. Either way the host is a
// copy: cut from the request's URL, it would keep the URL whole for as
// long as the key is kept.
func keyAttrs(e polite.Event, custom bool) []attribute.KeyValue {
	kv := []attribute.KeyValue{attribute.String("polite.key", displayKey(e))}
	if _, host, ok := digestOrigin(e.Key); ok {
		// A host too long to keep (and its port): the key keeps its
		// digest, which stands for it here too.
		return append(kv, attribute.String("server.address", host))
	}
	if e.Request != nil && e.Request.URL != nil {
		scheme, hostport := e.Request.URL.Scheme, e.Request.URL.Host
		if s, h, ok := strings.Cut(e.Key, "://"); ok && (!custom || sameOrigin(e.Key, scheme, hostport)) {
			scheme, hostport = s, h
		}
		host, port := hostPort(scheme, hostport)
		if long, ok := longHost(e, scheme, hostport); ok {
			return append(kv, attribute.String("server.address", long))
		}
		host = strings.Clone(validText(host)) // hostPort normalised it as polite keys it: a zone keeps its case
		kv = append(kv, attribute.String("server.address", host))
		if port > 0 {
			kv = append(kv, attribute.Int("server.port", port))
		}
	}
	return kv
}

// validText returns s, or, when it is not valid UTF-8, s with each
// invalid byte sequence replaced by U+FFFD: a host decoded from a URL
// ("%ff.test") or a name from a header may hold any bytes, and an
// attribute that is not UTF-8 fails a Prometheus scrape whole (every
// metric of the process) and OTLP's encoding.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// displayKey returns e's key as it may be shown: the key itself when it is
// the origin of e's request (polite's default key, which polite normalises
// further than sameOrigin does: an internationalised host in its ASCII
// form, a port without leading zeros), or an origin alone, or polite's
// fingerprint of a custom key ("key-" and 8 hex digits, as events, logs
// and errors show it), else "sha256:" and the first 16 hex digits of its
// SHA-256 hash, since a key may be built from a credential.
func displayKey(e polite.Event) string {
	if e.Request != nil && e.Request.URL != nil && sameOrigin(e.Key, e.Request.URL.Scheme, e.Request.URL.Host) {
		return validText(e.Key)
	}
	if _, _, ok := digestOrigin(e.Key); ok || fingerprinted(e.Key) || originOnly(e.Key) {
		return e.Key
	}
	sum := sha256.Sum256([]byte(e.Key))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// originOnly reports whether key is an http or https origin and nothing
// more, as polite shows a default key: scheme and host in lower case and
// ASCII, with no user information, path, query or fragment.
func originOnly(key string) bool {
	scheme, host, ok := strings.Cut(key, "://")
	if !ok || scheme != "http" && scheme != "https" || host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == ':', c == '[', c == ']':
		default:
			return false // upper case, '@', '/', '?', '#', '%', or not ASCII
		}
	}
	return true
}

// maxHostLen is the longest host[:port] polite keeps in a key as it is:
// a DNS name (253 bytes, RFC 1035 §2.3.4) and a port.
const maxHostLen = 253 + len(":65535")

// longHost returns the name that stands for authority, that of e's
// request (scheme its scheme), when it is too long to name (a link's or a
// redirect's, up to net/http's megabyte of header), and reports whether it
// is: the digest polite keeps in e's key when the key is the request's
// origin ("~sha256-…", as the quota gauge names it too), else the digest
// polite keeps for such an origin: "~sha256-" and the hex SHA-256 of its
// host[:port] as polite normalises it (see origin.Normal), when that is
// longer than polite keeps. (Hashed as spelled, a Unicode host, a port of
// leading zeros or an IPv6 literal written out was named otherwise by the
// requests counter than by the events and the gauge.)
func longHost(e polite.Event, scheme, authority string) (string, bool) {
	if _, h, ok := digestOrigin(e.Key); ok {
		return h, true
	}
	if len(authority) <= maxHostLen && isASCII(authority) {
		return "", false // normalised, no longer than polite keeps
	}
	h := origin.Normal(scheme, authority)
	if len(h) <= maxHostLen {
		return "", false
	}
	sum := sha256.Sum256([]byte(h))
	return "~sha256-" + hex.EncodeToString(sum[:]), true
}

// isASCII reports whether s has no byte beyond ASCII: normalised, it is no
// longer.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// digestOrigin reports whether key is an origin whose host polite keeps as
// its digest, being too long ("http://~sha256-" and 64 lower-case hex
// digits), and returns its scheme and digested host.
func digestOrigin(key string) (scheme, host string, ok bool) {
	scheme, host, ok = strings.Cut(key, "://")
	if !ok || scheme != "http" && scheme != "https" || len(host) != len("~sha256-")+64 || host[:len("~sha256-")] != "~sha256-" {
		return "", "", false
	}
	for _, c := range host[len("~sha256-"):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", "", false
		}
	}
	return scheme, host, true
}

// fingerprinted reports whether key is polite's fingerprint of a custom
// key: "key-" and 8 lower-case hex digits.
func fingerprinted(key string) bool {
	if len(key) != len("key-")+8 || key[:4] != "key-" {
		return false
	}
	for _, c := range key[4:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// sameOrigin reports whether key spells the origin scheme://host, allowing
// for case, a trailing dot on the host and a default port given or not.
func sameOrigin(key, scheme, host string) bool {
	return key != "" && plainOrigin(key) == plainOrigin(scheme+"://"+host)
}

func plainOrigin(s string) string {
	s = strings.ToLower(s)
	scheme, host, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	switch {
	case scheme == "http":
		host = strings.TrimSuffix(host, ":80")
	case scheme == "https":
		host = strings.TrimSuffix(host, ":443")
	}
	return scheme + "://" + strings.TrimSuffix(host, ".")
}

// observe is the gauge's callback: it reports the quotas of every key kept.
// It stops at the first key it has not read when ctx ends: reading a key
// kept by a Store that does not answer takes up to 10 s, and a key after
// another would make a collection take that many times over.
func (m *Metrics) observe(ctx context.Context, o metric.Observer) error {
	type item struct {
		src        *source
		key, shown string
		kv         []attribute.KeyValue
	}
	var items []item
	var dropped []keyID
	m.keys.m.Range(func(id, k any) bool {
		e := k.(*keyEntry)
		if id.(keyID).src.t.Value() == nil {
			dropped = append(dropped, id.(keyID))
			return true
		}
		items = append(items, item{id.(keyID).src, e.inspect, id.(keyID).key, e.attrs})
		return true
	})
	m.keys.forget(dropped)

	// Budgets of several Transports may hold the same key (the same
	// origin): their series would carry the same attributes, and the
	// last observed would hide the others. One series each, at the
	// least remaining among them.
	type series struct {
		set       attribute.Set
		remaining int64
	}
	var out []series
	index := make(map[attribute.Distinct]int)
	now := time.Now()
	var err error
	for _, it := range items {
		if err = ctx.Err(); err != nil {
			break // what was read is still reported
		}
		for _, q := range quotas(it.src, it.key, it.shown, now) {
			kv := append(it.kv[:len(it.kv):len(it.kv)],
				attribute.String("polite.quota.policy", q.policy),
				attribute.String("polite.quota.unit", q.unit),
				attribute.String("polite.quota.source", q.source))
			if q.partition != "" {
				kv = append(kv, attribute.String("polite.quota.partition", q.partition))
			}
			set := attribute.NewSet(kv...)
			if i, ok := index[set.Equivalent()]; ok {
				out[i].remaining = min(out[i].remaining, q.remaining)
				continue
			}
			index[set.Equivalent()] = len(out)
			out = append(out, series{set, q.remaining})
		}
	}
	for _, s := range out {
		o.ObserveInt64(m.remaining, s.remaining, metric.WithAttributeSet(s.set))
	}
	return err
}

var _ http.RoundTripper = (*counting)(nil)
