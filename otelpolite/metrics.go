package otelpolite

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/origin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of the meter that [New] asks the
// MeterProvider for: this package's import path.
const ScopeName = "github.com/politehttp/polite/otelpolite"

// Config configures [New]. The zero value is ready to use.
type Config struct {
	// MeterProvider provides the meter of the instruments. If nil, the
	// global provider is used (otel.GetMeterProvider), which records
	// nothing until one is set with otel.SetMeterProvider.
	MeterProvider metric.MeterProvider

	// MaxKeys is the most budget keys the quota gauge reports; a new key
	// that finds MaxKeys held drops those seen least recently in an
	// event, so that seven eighths of MaxKeys are held with it (below 8,
	// MaxKeys: the one seen least recently goes), and one scan makes room
	// for many. Each key
	// reports one series per quota its server stated (polite keeps at
	// most 8 of requests and 8 of what requests cost, such as tokens, per
	// key) and one for a quota learned from refusals, so the gauge has at
	// most 17·MaxKeys series. If zero, 100: 1700 series, within the 2000
	// an instrument the OpenTelemetry SDK keeps by default (beyond which
	// it merges every new series into one otel.metric.overflow series, of
	// no key); raise it with the SDK's limit (WithCardinalityLimit). A
	// key is counted once per Transport that reports it. If negative,
	// the gauge reports nothing.
	MaxKeys int

	// MaxHosts is the most hosts (server.address with its server.port)
	// the counters and the wait histogram name: the first ones seen.
	// Events of any other host are counted under server.address "_OTHER",
	// with no port, so that a crawler sent to ever more hosts (which a
	// hostile page can arrange) does not add series without bound. If
	// zero, 100. A named host has a series per kind of event, method,
	// reason and status it saw: up to 19 each, 100 hosts stay within the
	// 2000 series an instrument the OpenTelemetry SDK keeps by default,
	// "_OTHER" and the events of the Store included; hosts that see more
	// (four methods each waiting for six reasons) need the SDK's limit
	// raised, or fewer hosts named. If negative, no host is named: every
	// event counts under "_OTHER".
	MaxHosts int

	// KnownMethods are the request methods http.request.method names as
	// they are, matched exactly (methods are case-sensitive); any other is
	// "_OTHER", so that a caller's methods cannot grow the series. It
	// replaces the default list whole, as OpenTelemetry's HTTP semantic
	// conventions ask of an override. If nil, the methods of RFC 9110,
	// PATCH and QUERY.
	KnownMethods []string
}

// otherHost is the server.address of events of hosts past Config.MaxHosts.
const otherHost = "_OTHER"

const (
	defaultMaxKeys = 100 // and MaxHosts: see Config
	maxQuotaSeries = 17  // per key: polite keeps at most 8 stated quotas of requests, 8 of costs and 1 learned
)

// Metrics records what polite Transports do as OpenTelemetry metrics. Create
// it with [New], then hand each Transport to [Metrics.Instrument], or set
// [Metrics.OnEvent] as a Transport's OnEvent.
//
// A Metrics is safe for concurrent use by multiple goroutines, and one
// Metrics may serve several Transports.
type Metrics struct {
	requests      metric.Int64Counter
	refusals      metric.Int64Counter
	retries       metric.Int64Counter
	giveUps       metric.Int64Counter
	stops         metric.Int64Counter
	localRefusals metric.Int64Counter
	events        metric.Int64Counter
	waits         metric.Float64Histogram
	remaining     metric.Int64ObservableGauge

	reg  metric.Registration
	keys *keySet

	// hosts are the hosts events are counted under by name, at most
	// maxHosts; copied on write, as sets is.
	hosts    atomic.Pointer[map[hostKey]string]
	hostsMu  sync.Mutex
	spells   atomic.Pointer[map[spellKey]hostKey] // see named
	spellsMu sync.Mutex
	maxHosts int

	known map[string]string // Config.KnownMethods, each to its own copy; nil: the default list

	// sets caches the measurement options of events, so that recording
	// one allocates nothing once its attributes were seen. It is copied on
	// write: reading takes no lock.
	sets   atomic.Pointer[map[attrKey]*options]
	setsMu sync.Mutex // serialises writers of sets
}

// options are the attributes of a measurement, ready to pass.
type options struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

// New returns a Metrics whose instruments come from c.MeterProvider. The
// error joins those of creating the instruments and registering the quota
// gauge's callback; on error, the Metrics returned is still usable and
// records with the instruments that could be created (the OpenTelemetry API
// returns no-op instruments on failure).
func New(c Config) (*Metrics, error) {
	mp := c.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(ScopeName)
	m := &Metrics{keys: newKeySet(c.MaxKeys), maxHosts: c.MaxHosts}
	if c.KnownMethods != nil {
		m.known = make(map[string]string, len(c.KnownMethods))
		for _, k := range c.KnownMethods {
			m.known[k] = strings.Clone(k)
		}
	}
	if m.maxHosts == 0 {
		m.maxHosts = defaultMaxKeys
	}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		i, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	m.requests = counter("polite.client.requests", "{request}",
		"Requests sent to the server, every attempt counted.")
	m.refusals = counter("polite.client.refusals", "{response}",
		"Responses that refused a request (429, 503, or a 403 with Retry-After or a spent quota).")
	m.retries = counter("polite.client.retries", "{retry}",
		"Refused requests, and transient failures, that polite will send again.")
	m.giveUps = counter("polite.client.give_ups", "{request}",
		"Refusals, transient failures and requests polite returned to the caller without a further attempt.")
	m.stops = counter("polite.client.stops", "{response}",
		"Responses reporting abnormal usage, after which the origin is not retried for a while.")
	m.localRefusals = counter("polite.client.local_refusals", "{request}",
		"Requests not sent because the wait they needed was too long (a *polite.WaitError).")
	m.events = counter("polite.client.events", "{event}",
		"Events polite reported, by kind.")
	var err error
	m.waits, err = meter.Float64Histogram("polite.client.wait.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Time a request waited for its budget before being sent."),
		metric.WithExplicitBucketBoundaries(waitBuckets...))
	errs = append(errs, err)
	m.remaining, err = meter.Int64ObservableGauge("polite.client.quota.remaining",
		metric.WithUnit("{unit}"),
		metric.WithDescription("Quota left under a budget key, in the unit named by polite.quota.unit."))
	errs = append(errs, err)
	if c.MaxKeys >= 0 {
		m.reg, err = meter.RegisterCallback(m.observe, m.remaining)
		errs = append(errs, err)
	}
	return m, errors.Join(errs...)
}

// waitBuckets are the histogram's bucket boundaries, in seconds: from the
// few milliseconds of pacing to polite's default MaxWait of 10 minutes.
var waitBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Close unregisters the quota gauge's callback, so that the MeterProvider no
// longer reads the Transports' budgets. The counters and the histogram go on
// recording. Close returns the error of unregistering, if any.
func (m *Metrics) Close() error {
	if m.reg == nil {
		return nil
	}
	return m.reg.Unregister()
}

// Instrument wires t to m: t.OnEvent is set to record each event in m and
// then call the OnEvent t had, if any; t.Base is wrapped to count the
// requests sent (polite.client.requests); and t's budget becomes readable
// by the quota gauge. Call it once per Transport, before the Transport's
// first use (a Transport's fields must not change afterwards).
func (m *Metrics) Instrument(t *polite.Transport) {
	next := t.OnEvent
	src := &source{t: weak.Make(t)}
	t.OnEvent = func(e polite.Event) {
		m.record(e, src)
		if next != nil {
			next(e)
		}
	}
	t.Base = &counting{base: t.Base, m: m}
}

// OnEvent records e. It has the signature of [polite.Transport.OnEvent], for
// wiring by hand (chain an existing OnEvent by calling it after this one).
// Wired this way, m counts everything but the requests sent, and the quota
// gauge reports nothing for the Transport: use [Metrics.Instrument] for
// those.
func (m *Metrics) OnEvent(e polite.Event) { m.record(e, nil) }

func (m *Metrics) record(e polite.Event, src *source) {
	ctx := context.Background()
	if e.Request != nil {
		ctx = e.Request.Context()
	}
	r := rules[e.Kind]
	m.events.Add(ctx, 1, m.attrs(e, attrKind).add...)
	cs := r.counters
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusForbidden:
		// A refusal: of these, polite retries or gives back a 403 only
		// when it read it as one.
	default:
		// No response (a dropped connection), or a transient failure
		// (a 502 or 504 retried with RetryTransient): no refusal.
		cs &^= countRefusal
	}
	if cs != 0 {
		m.add(ctx, cs, m.attrs(e, r.attrs))
	}
	if r.wait && e.Wait > 0 {
		m.waits.Record(ctx, e.Wait.Seconds(), m.attrs(e, attrReason).record...)
	}
	if src != nil && e.Key != "" && m.keys.max > 0 {
		m.keys.seen(e, src)
	}
}

// add adds one to each counter cs selects.
func (m *Metrics) add(ctx context.Context, cs counters, o *options) {
	for bit, c := range [...]metric.Int64Counter{m.refusals, m.retries, m.giveUps, m.stops, m.localRefusals} {
		if cs&(1<<bit) != 0 {
			c.Add(ctx, 1, o.add...)
		}
	}
}

// attrKey identifies the attribute set of an event, for the cache.
type attrKey struct {
	which  attrBits
	kind   polite.EventKind
	host   string
	port   int
	method string
	status int
	reason polite.Reason
}

// maxAttrSets bounds the cache of attribute sets; past it, sets are built
// for each event.
const maxAttrSets = 4096

// attrs returns the attributes of e that which selects.
func (m *Metrics) attrs(e polite.Event, which attrBits) *options {
	k := attrKey{which: which}
	if e.Request != nil && e.Request.URL != nil {
		host, port := m.named(e)
		k.host, k.port = m.host(host, port)
		k.method = m.method(e.Request.Method)
	}
	if which&attrKind != 0 {
		k.kind = e.Kind
	}
	if which&attrStatus != 0 {
		k.status = e.Status
	}
	if which&attrReason != 0 {
		k.reason = e.Reason
	}
	sets := m.sets.Load()
	if sets != nil {
		if o := (*sets)[k]; o != nil {
			return o
		}
	}
	opt := metric.WithAttributeSet(k.set())
	o := &options{add: []metric.AddOption{opt}, record: []metric.RecordOption{opt}}
	if sets == nil || len(*sets) < maxAttrSets {
		m.setsMu.Lock()
		old := m.sets.Load()
		if old == nil || len(*old) < maxAttrSets {
			next := make(map[attrKey]*options, 1+lenOf(old))
			if old != nil {
				maps.Copy(next, *old)
			}
			next[k] = o
			m.sets.Store(&next)
		}
		m.setsMu.Unlock()
	}
	return o
}

// hostKey is a host and its port.
type hostKey struct {
	host string
	port int
}

// spellKey is an authority as a request spells it, and the class of its
// scheme (0, or 80 for http and 443 for https: their default ports).
type spellKey struct {
	authority string
	scheme    int
}

// maxSpellings bounds the cache of authorities named; past it, an
// authority is named anew at each event.
const maxSpellings = 4096

// named returns the host and port that name the authority of e's request,
// as polite keys it (see hostPort and longHost), from a cache of the
// authorities seen: normalised at each event, an authority in upper case
// or beyond ASCII cost allocations every time. An authority longer than
// polite keeps is named anew each time: kept, a hostile link's would hold
// a megabyte.
func (m *Metrics) named(e polite.Event) (string, int) {
	u := e.Request.URL
	k := spellKey{authority: u.Host}
	switch {
	case strings.EqualFold(u.Scheme, "http"):
		k.scheme = 80
	case strings.EqualFold(u.Scheme, "https"):
		k.scheme = 443
	}
	if sp := m.spells.Load(); sp != nil {
		if n, ok := (*sp)[k]; ok {
			return n.host, n.port
		}
	}
	if long, ok := longHost(e, u.Scheme, u.Host); ok {
		return long, 0
	}
	host, port := hostPort(u.Scheme, u.Host)
	if len(u.Host) > maxHostLen {
		return host, port
	}
	m.spellsMu.Lock()
	defer m.spellsMu.Unlock()
	old := m.spells.Load()
	if old != nil && len(*old) >= maxSpellings {
		return host, port
	}
	next := make(map[spellKey]hostKey, 1+lenOfSpells(old))
	if old != nil {
		maps.Copy(next, *old)
	}
	n := hostKey{host: strings.Clone(host), port: port}
	next[spellKey{authority: strings.Clone(u.Host), scheme: k.scheme}] = n
	m.spells.Store(&next)
	return n.host, n.port
}

func lenOfSpells(m *map[spellKey]hostKey) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// host returns host and port as events name them: as they are for one of
// the first maxHosts seen, else otherHost and no port. The host returned
// is the copy the Metrics keeps: host is cut from a request's URL, which
// it would keep whole wherever it went (a cached attribute set, the SDK's
// aggregations).
func (m *Metrics) host(host string, port int) (string, int) {
	k := hostKey{host, port}
	if hs := m.hosts.Load(); hs != nil {
		if kept, ok := (*hs)[k]; ok {
			return kept, port
		}
		if len(*hs) >= m.maxHosts {
			return otherHost, 0
		}
	}
	if m.maxHosts <= 0 {
		return otherHost, 0
	}
	m.hostsMu.Lock()
	defer m.hostsMu.Unlock()
	old := m.hosts.Load()
	if old != nil {
		if kept, ok := (*old)[k]; ok {
			return kept, port
		}
		if len(*old) >= m.maxHosts {
			return otherHost, 0
		}
	}
	n := 1
	if old != nil {
		n += len(*old)
	}
	next := make(map[hostKey]string, n)
	if old != nil {
		maps.Copy(next, *old)
	}
	kept := strings.Clone(validText(host))
	if kept == host {
		k.host = kept // the key too, a copy
	} else {
		k.host = strings.Clone(host) // found by the bytes sent, shown valid
	}
	next[k] = kept
	m.hosts.Store(&next)
	return kept, port
}

func lenOf(m *map[attrKey]*options) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

func (k attrKey) set() attribute.Set {
	kv := make([]attribute.KeyValue, 0, 6)
	if k.host != "" {
		kv = append(kv, attribute.String("server.address", k.host))
		if k.port > 0 {
			kv = append(kv, attribute.Int("server.port", k.port))
		}
	}
	if k.method != "" {
		kv = append(kv, attribute.String("http.request.method", k.method))
	}
	if k.which&attrKind != 0 {
		kv = append(kv, attribute.String("polite.event.kind", string(k.kind)))
	}
	if k.which&attrStatus != 0 && k.status != 0 {
		kv = append(kv, attribute.Int("http.response.status_code", k.status))
	}
	if k.which&attrReason != 0 && k.reason != "" {
		kv = append(kv, attribute.String("polite.reason", string(k.reason)))
	}
	return attribute.NewSet(kv...)
}

// hostPort returns the host of an authority (without brackets for IPv6) and
// its port, or the default port of scheme when it has none or an invalid one,
// normalised as polite keys an origin (see origin.Normal): one origin
// spelled otherwise ("API.test.", "[2001:db8:0::1]", "[::ffff:192.0.2.1]",
// a Unicode host, ":08080") has one name on every instrument, the key's.
func hostPort(scheme, authority string) (string, int) {
	authority = origin.Normal(scheme, authority)
	host, port := authority, ""
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && strings.LastIndexByte(authority, ']') < i {
		if strings.HasPrefix(authority, "[") || strings.IndexByte(authority, ':') == i {
			host, port = authority[:i], authority[i+1:]
		}
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if p := atoiPort(port); p > 0 {
		return host, p
	}
	switch {
	case strings.EqualFold(scheme, "http"):
		return host, 80
	case strings.EqualFold(scheme, "https"):
		return host, 443
	}
	return host, 0
}

// atoiPort returns the port number port spells, or 0.
func atoiPort(port string) int {
	if len(port) == 0 || len(port) > 5 {
		return 0
	}
	n := 0
	for _, c := range []byte(port) {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	if n >= 1<<16 {
		return 0
	}
	return n
}

// method returns the value of http.request.method for a request's method
// r: the known methods as they are, any other as "_OTHER" (OpenTelemetry's
// HTTP semantic conventions), so that a caller's methods cannot grow the
// series.
func (m *Metrics) method(r string) string {
	if r == "" {
		r = http.MethodGet // as net/http reads it
	}
	if m.known != nil {
		if k, ok := m.known[r]; ok {
			return k
		}
		return "_OTHER"
	}
	return method(r)
}

// defaultMethods are the methods http.request.method names by default.
var defaultMethods = [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace, "QUERY"}

// method returns the value of http.request.method for m by the default
// list of known methods. It is never m itself, which a server's request
// cuts from its request line, query and all: kept in an attribute set, m
// kept the whole line (of up to a megabyte) for the life of the Metrics.
func method(m string) string {
	if m == "" {
		return http.MethodGet
	}
	for _, k := range defaultMethods {
		if m == k {
			return k
		}
	}
	return "_OTHER"
}

// counting is the Base of an instrumented Transport: it counts every request
// sent and passes it on.
type counting struct {
	base http.RoundTripper // nil: http.DefaultTransport
	m    *Metrics
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.m.requests.Add(req.Context(), 1, c.m.attrs(polite.Event{Request: req}, 0).add...)
	if c.base == nil {
		return http.DefaultTransport.RoundTrip(req)
	}
	return c.base.RoundTrip(req)
}

// CloseIdleConnections forwards to the wrapped RoundTripper, if it has the
// method.
func (c *counting) CloseIdleConnections() {
	base := c.base
	if base == nil {
		base = http.DefaultTransport
	}
	if ci, ok := base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
