// Package otelpolite records what [polite.Transport]s do as OpenTelemetry
// metrics: requests sent, refusals received, retries, give-ups, requests
// refused locally, time spent waiting, and the quota left per budget key.
//
// It is a module of its own, so that polite's go.mod stays free of
// OpenTelemetry. Five lines wire a Transport:
//
//	metrics, err := otelpolite.New(otelpolite.Config{MeterProvider: provider})
//	if err != nil { … }
//	t := &polite.Transport{}
//	metrics.Instrument(t)
//	client := &http.Client{Transport: t}
//
// Make one Metrics per MeterProvider, and Instrument every Transport with
// it: each Metrics registers the quota gauge's callback, and two on one
// provider report the same series each, the last observed hiding the
// other (so that a key two Transports share reports the quota of one, not
// the least left of both). [Metrics.Close] unregisters the callback of one
// no longer used. A Transport the program drops is not kept alive by the
// Metrics that instruments it. With a nil MeterProvider the global one is
// used. To export to Prometheus,
// make the provider with the reader of go.opentelemetry.io/otel/exporters/prometheus
// and serve promhttp.Handler() (see the package example).
//
// [Metrics.Instrument] sets the Transport's OnEvent, calling the one it had
// afterwards, and wraps its Base to count requests sent. [Metrics.OnEvent]
// can also be set by hand, as any OnEvent; the requests sent and the quota
// gauge then stay empty, since they need the Transport itself.
//
// # Instruments
//
// Names and attributes follow OpenTelemetry's semantic conventions; units
// are UCUM. The Prometheus exporter turns dots into underscores, appends
// _total to counters and _seconds to the histogram.
//
//	instrument                     kind       unit        attributes
//	polite.client.requests         counter    {request}   S
//	polite.client.refusals         counter    {response}  S, http.response.status_code, polite.reason
//	polite.client.retries          counter    {retry}     S, http.response.status_code, polite.reason
//	polite.client.give_ups         counter    {request}   S, http.response.status_code (when there was a response), polite.reason
//	polite.client.stops            counter    {response}  S, http.response.status_code, polite.reason
//	polite.client.local_refusals   counter    {request}   S, polite.reason
//	polite.client.events           counter    {event}     S, polite.event.kind
//	polite.client.wait.duration    histogram  s           S, polite.reason
//	polite.client.quota.remaining  gauge      {unit}      K, polite.quota.policy, polite.quota.unit, polite.quota.source, polite.quota.partition (when partitioned)
//
// S is server.address, server.port (the scheme's default when the URL has
// none, or one no TCP port is: 0, or past 65535), both of the host as polite keys it (lower case, no trailing dot,
// an internationalised host in its ASCII form, an IPv6 literal in its
// canonical form and an IPv4-mapped one as its IPv4 address, a port
// without leading zeros), and http.request.method (the standard methods, or
// Config.KnownMethods, any other as "_OTHER"), all from the request; they are absent when an event has no
// request. At most Config.MaxHosts hosts are named (100 by default, the
// first seen); events of any other count under server.address "_OTHER",
// with no port, so that a crawler led to ever more hosts adds no series. K
// is polite.key, server.address and server.port, of the key's first event
// with a request (a Store's event may have none). A host too long for
// polite to keep (beyond a DNS name and a port), whose key holds its
// digest ("http://~sha256-…"), is named by that digest in S and K alike,
// with no port; under a custom key, and on the requests counter, by the
// digest polite would keep for the origin ("~sha256-" and the SHA-256 of
// its host and port as polite keys them, the port left out when the
// scheme's own): a hostile link's host of a megabyte is never kept.
//
// A refusal is a 429 or 503 response, or a 403 that polite read as one
// (with Retry-After or a spent quota, as GitHub refuses): each one is
// counted once in
// polite.client.refusals, and once more by what polite did with it (retried,
// given back to the caller, or stopped on for abnormal usage). polite.reason
// is the wait the refusal asked for (retry-after, quota, backoff…; see
// [polite.Reason]), or, for a refusal given back because polite denied its
// retry, why it did (stopped, retry-budget, quota: the Event's Reason, as
// for its give-up). A local refusal is a request polite did not send
// because the wait it needed was too long (a [*polite.WaitError]). A
// transient failure that polite retries or gives up on (a 502 or 504 with
// [polite.Transport.RetryTransient], or a dropped connection) is no
// refusal: it counts in retries or give_ups alone. So does a retry that
// cannot be sent since its body cannot be rewound (GetBody fails): its
// refusal counted in retries, the request then counts in give_ups, with no
// status. The fetch of a robots.txt ([polite.Transport.Robots]) counts in
// requests alone: polite emits no event for it, so a refusal of it (a 429,
// after which the origin's paths are disallowed for a while) is not in
// refusals, nor is the request that its [*polite.RobotsError] kept from
// being sent at its first decision in local_refusals; one that robots.txt
// refuses after its wait (the file expired meanwhile) is a give-up of
// polite's, and counts in give_ups, with no status.
// polite.client.wait.duration records each wait a request made for its
// budget before being sent, retries' waits included, under the reason it
// waited longest for; its buckets run from 5 ms to 10 minutes.
//
// polite.client.quota.remaining reports, at each collection, the quota left
// under each budget key recently seen (when Transports with budgets of
// their own, instrumented by one Metrics, hold the same key, the least
// left among them), for every
// quota with a live count
// (the server's stated quotas, polite.quota.source "server", and one learned
// from refusals, "refusals"), in the unit named by polite.quota.unit
// ("requests", "content-bytes", "concurrent-requests", or a unit of cost
// such as "tokens"). polite.key is the key as polite's events show it: the
// origin of the request ("https://api.example") when the key is polite's
// default, and for a custom key its fingerprint ("key-" and 8 hex digits,
// as in logs, errors and Inspect; drawn from a secret of each Budget, so it
// changes when the process restarts). Any other form is reported as
// "sha256:" followed by the first 16 hex digits of its SHA-256 hash: a
// custom key may be built from a credential, and a credential never goes
// into a metric. The partition key
// is reported hashed, as [polite.Budget.Inspect] does. At most
// Config.MaxKeys keys are reported (100 by default); when a new one comes
// to a full set, those seen least recently in an event are dropped, down
// to seven eighths of it.
//
// # Events
//
// Each event a Transport reports adds one to polite.client.events under its
// kind, so that a kind this package does not know yet is still counted.
// Then, by kind:
//
//	kind        records
//	wait        polite.client.wait.duration (Event.Wait, in seconds)
//	observe     nothing more
//	retry       polite.client.refusals (of a 429, 503 or 403), polite.client.retries
//	give-up     polite.client.refusals (of a 429, 503 or 403), polite.client.give_ups
//	stop        polite.client.refusals, polite.client.stops
//	wait-error  polite.client.local_refusals (the event of a *polite.WaitError)
//
// polite.client.requests is counted by the Base wrapper of
// [Metrics.Instrument], once per request sent, retries included.
//
// # Cost
//
// Recording an event allocates nothing once its attributes were seen: each
// distinct set of attributes is built once and kept (up to 4096 of them)
// in a map read without a lock.
package otelpolite
