// Package polite provides an [http.RoundTripper] that paces requests by what
// servers say about their rate limits, so that a client that listens never
// sees a 429, and that backs off safely when it does.
//
//	client := polite.Wrap(&http.Client{Timeout: 30 * time.Second})
//	resp, err := client.Get("https://api.example/items/1")
//	var werr *polite.WaitError
//	if errors.As(err, &werr) {
//		// The origin asked for a longer wait than we allow:
//		// reschedule after werr.Until.
//	}
//
// It reads the IETF RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers-11), the earlier drafts, legacy
// X-RateLimit-* fields and vendor dialects (GitHub, OpenAI, Anthropic and
// others; see package [github.com/politehttp/polite/parse]), and Retry-After.
//
// # Pacing
//
// Each request belongs to a budget, one per origin unless [Transport.Key]
// says otherwise. The origin is normalised: scheme and host lower-cased, a
// trailing dot removed, the scheme's default port dropped, an
// internationalised host in its ASCII (Punycode) form, so that
// "http://API.example:80/" and "http://api.example./" share one budget.
// Before a request is sent, its budget must allow it:
//
//   - no more than q requests start in any span of w, for every policy a
//     RateLimit-Policy field stated (unit requests): a large r with a short
//     t never lets more than q start within w (draft-11 §8.5), though the
//     r left may all start at once, before the window's end;
//   - no more than r requests start within t of a RateLimit observation (or a
//     dialect's remaining and reset), counting the requests in flight whose
//     answer has not arrived, which the server may not have counted yet;
//   - when r reaches 0, the whole origin pauses until t has passed; when r is
//     0 and no t is given, it pauses by exponential fallback;
//   - a concurrent-requests policy bounds the requests in flight; a
//     content-bytes policy is paced by the content bytes of the responses,
//     estimated from the recent ones (the unit the server counts: see package
//     [github.com/politehttp/polite/ratelimittest]; none for an answer to
//     HEAD, a 1xx, 204 or 304, whatever its Content-Length says);
//   - a quota in another unit (tokens, input-tokens, output-tokens, points)
//     must have room for what the request will cost in it (its [Cost]),
//     after what the requests in flight sent after its latest observation
//     have reserved; a quota the server replenishes continuously (OpenAI's
//     and Anthropic's, whose reset is the time until it is whole again)
//     makes a request wait only for what it lacks, at its refill rate, and
//     a request costing more than a whole quota fails at once with a
//     [*CostError];
//   - the ceilings hold whatever the server says: [Transport.MaxRate] and
//     [Transport.MaxConcurrency] bound one Transport's own requests per key,
//     whatever other Transports on the same Budget set; [Budget.MaxRate] and
//     [Budget.MaxConcurrency] bound all of a Budget's Transports together.
//
// Several policies apply at once and the tightest wins; observations of
// different partition keys (pk) are kept apart, and all of them apply: a
// [Transport.Key] that tells the partitions apart (by credential, say)
// paces each by its own, as it does GitHub's resources of one origin. An
// observation is stale once its t has passed: it is not read as a refill.
// After any pause, and on the first request to an origin, a single request
// probes; the others follow as its answer and the next ones come back: 4
// after the probe, then tripling each round trip for a key whose round
// trips take 200 ms or more; for a key that answers faster, more slowly,
// so that it grows as fast in wall time whatever its round trip, but by
// one request per answer at least (doubling each round trip) for a key
// that states its quotas (DESIGN.md §2, §6). A probe that has not answered
// after 3 seconds (or four of the origin's round trips, if longer; doubled
// for each probe in a row that timed out) lets another request probe; so
// does, after as long, a full ramp none of whose requests has answered (a
// slow page held the one slot a ramp opens with for minutes), lending it a
// slot until a slow request ends.
// Resets stated as instants (epoch seconds, HTTP-dates, also ending in
// "UTC" or a numeric zone such as "+0100") are measured from the server's clock, estimated from its Dates to
// well under a second; an origin caught stating its resets early (rounded
// down to the second) has them read a second later. A policy recognised as
// a sliding-window counter (a probe sent after its reset is refused while
// the previous window weighs) is paced smoothly, q-1 requests evenly over
// w. The rate-limit fields of a response from a cache (an Age greater than
// 0), and fields in trailers, never change a budget; a refusal a cache
// served pauses for what is left of the delay its Retry-After asks, which
// counts from when the response was made: its Age ago, as far as its Date
// bears that out. A pause is
// never stored for more than 24 hours, whatever a response says: past that,
// the origin probes again.
//
// # Streaming responses
//
// A request counts as in flight until its response body is read to its
// end, fails or is closed, its context ends (cancelled before Base has
// answered: once Base returns), or [Budget.Lease] (10 minutes by default)
// has passed since it started, whichever comes first: a server
// that streams its answer (server-sent events, a download) is still serving
// it. A response that arrives whole with its headers (no body, a response
// to HEAD, a 204 or 304, a Content-Length of at most 4 KiB) ends its
// request at once, and so does one that hands over the connection (a 101
// to an Upgrade, a 2xx to CONNECT): the tunnel is not the server's answer. Whatever the body, the response's outcome (the quotas it
// states, a pause, a refusal) is applied when its headers arrive, but for
// a refusal that may be retried whose body is a problem document (RFC
// 9457): what that says (the policies violated, a stop) is part of the
// outcome, which is applied once it is read, a second at most after the
// headers.
//
// While its body arrives, a request counts against concurrent-requests and
// content-bytes policies and the MaxConcurrency ceilings; it no longer
// counts against r, which the server's answer already counted, nor holds
// back the probe after a pause. A refusal ends its request with its
// headers: the server did not serve it.
//
// Every body must be closed. A body neither read nor closed when the
// request's context ends, or not finished when its lease expires, stops
// counting in flight then, and [EventAbandoned] reports it; a request that
// never ends, or a process that died mid-request, holds its slot only that
// long. A stream that should last longer than Budget.Lease needs a longer
// Lease: a context deadline ends a lease sooner, never later.
//
// What a budget learns from an answer (the observations, the pauses, the
// learner's windows, the probe's answer) is taken when the headers arrive,
// from the send to the headers, and so is the latency that
// Restraint.Adaptive samples (a stream's length says how much was asked,
// not how loaded the server is). The time a request holds its slot runs
// from the send to the end of the body, or to the headers when the body
// came with them.
//
// # Sharing
//
// Transports that share a [Budget] pace together, as one client. Requests
// held until the same instant (a pace's next start, a window's reset) start
// in the order they first asked; one that just arrived waits behind them.
// So do requests held by the Transport's own pace ([Transport.MaxRate], a
// Crawl-delay), in the order it first held them. Budgets in several
// processes pace together when they share a [Store]: the Budget keeps each
// key's state there ([KeyState], serialisable), runs
// every pacing rule itself, and waits on the Store for changes made
// elsewhere. The default is a [MemoryStore] private to the Budget. Should a
// Store fail, requests go on, paced by what this process sees, until it
// answers again. Package [github.com/politehttp/polite/storetest] checks a
// Store against the contract.
//
// # Learning
//
// Many servers say nothing until they refuse, and some advertise more than
// they grant. A refusal that no stated quota foresaw starts a measurement:
// the requests the origin accepted since its last pause are taken as its
// quota, and the time until it accepts again as its window. The learned
// quota then paces the origin like a stated one, each window begun by a
// lone probe, never shortening a wait the server gave. It grows
// additively while it holds requests back without a refusal: by one more
// request a window, or by a shorter window, in turn, so that a fixed window
// and a leaky or token bucket are both approached from below; a refused
// step is taken back, and other refusals halve its requests and double
// its window at most, measuring it again. A refusal while the fields said quota was left marks them
// unreliable: the learned quota then applies on top of them for a minute,
// doubling each time, up to an hour. An origin that never stated a quota
// opens to one request in flight after its probe and, while its round
// trips are short, ramps up as fast in wall time whatever they are (the
// number in flight doubling about every 70 ms), so that a refusal finds
// few requests in flight with it; once its round trips take 200 ms or
// more, as fast as one that states its quotas.
//
// # Crawling
//
// A crawler sets [Transport.Robots] to obey robots.txt (RFC 9309): each
// origin's file is fetched once, through Base, and kept for 24 hours; a
// path it disallows fails at once with a [*RobotsError] (matching
// [ErrDisallowed]) without being sent; its Crawl-delay or Request-rate
// spaces the origin's requests, whatever its rate-limit fields allow, and
// the stricter of the two holds. While robots.txt answers 5xx, every path
// of the origin is disallowed until it is fetched again. A request that
// dials an address and names the site in its Host
// ("http://192.0.2.10/page" with Host "site.example") obeys the site's
// robots.txt, fetched from that address with that Host, and its
// Crawl-delay spaces the site's requests.
// [Transport.Restraint] holds back requests to origins that state no rate
// limit: a few in flight at once, and fewer while an origin's latency
// rises above its own baseline.
//
//	tr := &polite.Transport{
//		Robots:    &polite.Robots{UserAgent: "mybot/1.0 (+https://mybot.example/)"},
//		Restraint: &polite.Restraint{Adaptive: true},
//	}
//
// # Observing
//
// [Transport.OnEvent] and [Transport.Logger] receive every wait (with what
// it waited for), retry, give-up, observation and *WaitError, and the
// failures and recoveries of a Store. A log record holds only its kind's
// fields: the key, the request's method and URL path (never its query, and
// no path when Transport.Key is set), the attempt, the status, the wait
// and its reason, the number of quotas read, an error (its text without
// the request's query, user information (an Opaque's that is an absolute
// URL too, as net/http sends it) or fragment (of 6 bytes or more, as a
// credential is hidden: a shorter one is a page's anchor), nor its path when Transport.Key
// is set, should Base's error quote its URL, escaped or not (escaped
// whole too, as a Base that relays the request in another URL does), nor the
// values of its fields that may carry a credential, named for one
// (Authorization, Cookie, or a name holding "key", "token", "secret",
// "session", "password", "signature"), nor the custom key (of 6 bytes or
// more, as every credential value is hidden: a shorter one is too common a
// string to replace in an error's text, and is no credential); an event's
// Err hides them as well); durations are rounded to the
// microsecond below a millisecond, to the millisecond below 10 seconds,
// and to a tenth of a second above. [Budget.Inspect] answers "why is this origin waiting,
// and until when": its policies, what is left, the pause, the learned
// quota, as a [State] that marshals to JSON; [Budget.Forget] clears what a budget knows of a key.
// Neither ever shows a partition key verbatim, nor a key from a custom
// Transport.Key, which may hold a credential: such a key appears in events,
// logs, errors and Inspect only as a fingerprint ("key-" and 8 hex digits,
// stable within one Budget).
//
// # Retries
//
// Transport interprets 429 (Too Many Requests) and 503 (Service
// Unavailable) responses as refusals, and a 403 (Forbidden) that says it
// is one: with a Retry-After, or a quota it states spent with its reset to
// come (or at most 2 s past: a reset rounded down), as GitHub
// answers past its limits (DESIGN.md §1.10). Any other 403 is an answer,
// handed back as it came. The wait before the next request to that origin is
// Retry-After when the response has it (it takes precedence, draft-11 §7),
// else the effective window t of the spent quota, plus a little jitter that
// only ever lengthens it; else exponential backoff with jitter (the first
// wait of a refusal no shorter than a second, see below; a transient
// failure's, below, may be):
//
//	attempt  wait (±50%)
//	1        1s
//	2        2s
//	3        4s
//	4        8s
//	5        16s
//	6        32s
//	7+       1m
//
// The attempt counts the origin's refusals in a row as well as the
// request's own: a request sent anew to an origin that refused the last
// five in a row with no wait waits about 32s (24s to 32s: the origin's
// doubling is spread at random, a doubling below the minute shortened by
// up to a quarter, the minute lengthened by up to a quarter, so that
// clients refused together come back apart; never below the request's own
// backoff), not a second, so that callers that each
// send a fresh request do not probe a refusing origin every second (the
// refusals of requests in flight together count once).
//
// While the learner (see Learning) measures an origin's window, the waits
// after a refusal that gave none are shorter: half the time the origin has
// refused so far, so that the window is known to within half of itself.
//
// Whatever a refusal says, the refused request is not sent again within a
// second, nor, when the refusal pauses the origin, any other request to it
// (but for a positive wait below a second, honoured once, below):
// Retry-After: 0, or a reset already past, waits a second, doubled
// with each such refusal in a row (up to a minute), as a refusal that gives
// no wait does, each spread at random by up to a quarter (the second and
// the minute lengthened, a doubling between shortened); a positive wait below a second
// (retry-after-ms, a decimal Retry-After such as 0.3, a reset of 120ms) is
// honoured once, then doubles likewise.
// A refusal of a step of growth the learner took (see Learning) does not
// pause the origin: the step is undone, and the pace that held goes on.
// Nor does a bare 429 (no wait, no quota) from an origin that states
// nothing and has taught nothing, when it comes after 32 acceptances or
// to a request sent with more in flight than earlier ones were accepted
// with: the next request goes alone, once fewer are in flight, and if it
// is accepted the refusal was shed load or a limit of requests in
// flight, not a rate (DESIGN.md §6, "Refusals of no rate"); refused, the
// origin pauses as for any.
//
// The pause applies to the whole origin, not only to the refused request. A
// 429 means the server did not process the request, so it is resent for any
// method whose body can be replayed (no body, or [http.Request.GetBody]); a
// 503, or a 403 read as a refusal, is resent only for idempotent methods
// (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) or requests carrying an
// Idempotency-Key or X-Idempotency-Key entry in their Header, whatever its
// value (a nil one, which net/http does not send, marks the request as it
// does for net/http's own retries). A request body is never read whole to
// make it replayable. Before a retry, at most 64 KiB of the
// refused response's body is drained, and the body is closed. Retries to
// one origin may use a fifth of its recent traffic, with a floor of two a
// second, so that retries cannot multiply an outage: a retry beyond that
// waits until the budget allows it (when that comes within MaxWait and
// half of what the deadline leaves; else it keeps its own wait, the
// origin's pause and probe spacing it), and only in an outage (once 40
// flights in a row were refused, or failed as below, none accepted, the
// refusals of requests in flight together counting once) goes back to the
// caller, as a give-up for the retry budget. A problem document (RFC 9457) of type abnormal-usage-detected
// stops retries for ten minutes, and the refusal goes back to the caller,
// to stop its batch; the document is read only from a refusal that could
// otherwise be retried (by its attempts, MaxWait and the deadline: in an
// outage or a stop it is read too, for a report of abnormal usage there
// starts or renews the stop). After
// [Transport.MaxAttempts], or when the wait asked for is longer than
// [Transport.MaxWait] or would outlast the request's context deadline, the
// refusal is returned to the caller at once, unaltered, with its body
// unread; [Transport.RetryAt] then says when its origin accepts a request
// again.
//
// Transient failures (a connection reset, refused or timed out; a 502 or
// 504) go back to the caller at once, unless [Transport.RetryTransient] is
// set. Then they are retried for requests that may be sent twice
// (idempotent methods, or an Idempotency-Key or X-Idempotency-Key header)
// whose body can be replayed, never once the request's context has ended,
// through the same backoff schedule, retry budget and MaxAttempts as
// refusals, with Retry-After as a floor. The wait is the request's own: a
// gateway's failure says nothing of the origin's rate limit, so the origin
// does not pause, and a retry the budget would space past the request's
// deadline goes back to the caller (a refusal's keeps its own wait, the
// origin's pause spacing it). Their flights count toward an outage, at
// most one a second (the failures of requests in flight together count
// once), a 502 or 504 that cannot go again among them; in one, each flight's failure pauses the origin as a refusal that
// gives no wait does there: a second, doubled with each flight, up to a
// minute, its requests then probing it one a pause. Which errors are transient is decided by their types and
// values, never their text: certificate and TLS failures (but a handshake
// that timed out, a timeout as any other), malformed responses, a "no such
// host" and a *url.Error never are.
//
// A program that keeps another retrying client (go-retryablehttp, resty)
// puts polite inside it as its transport, and lets one loop retry each
// failure: polite's for refusals, always; for transient failures, polite's
// when RetryTransient is set (the outer client then retries nothing),
// else the outer client's, for idempotent requests only. The outer client
// must not retry a refusal polite returned, nor a *WaitError. The nested
// module's bench/example_test.go shows both clients set up so.
//
// # Errors
//
// RoundTrip returns an error only when it has no response: the error of
// Base, unwrapped; the context's cause ([context.Cause], which is ctx.Err()
// when the context was ended without one, as net/http returns it) when the
// request's context ended while waiting (only the context is watched while waiting: the deprecated
// [http.Request.Cancel] reaches Base, not polite's waits); a [*WaitError]
// when the pacing wait is longer than MaxWait or
// would outlast the context deadline; a [*RobotsError] when
// [Transport.Robots] forbids the request (it matches [ErrDisallowed]); a
// [*CostError] when the request costs more than a whole quota of its
// origin; the error of the request's GetBody when a retry cannot rewind
// its body; an error for a request without a URL; or an error when Base
// returns neither a response nor an error (Base's too). In all but Base's
// and GetBody's cases the attempt that fails is not sent; when it is a
// retry, earlier attempts were, and were refused (a *WaitError says so in
// its Attempt; a context's error, ended while a retry waited, does not).
// A *WaitError matches [ErrWaitTooLong] with [errors.Is], and also
// [context.DeadlineExceeded] when the deadline was the limit; its Until and
// [Transport.RetryAt] for a refusal returned as a response are the same
// answer to "when may I retry" (RetryAt later, when a pace holds the
// request again after a pause). Its text gives the wait, the limit and the
// setting that changes it. [http.Client] wraps these errors in a
// [*url.Error]; errors.Is and errors.As see through it.
package polite
