// Package ratelimittest provides rate-limited HTTP servers for tests, in the
// manner of [net/http/httptest].
//
// A [Handler] enforces one or more policies ([Policy]: fixed window, sliding
// log, sliding-window counters, token bucket, nginx's leaky bucket,
// concurrency) and advertises them in one of several header dialects
// ([Dialect]): the IETF RateLimit and RateLimit-Policy fields of
// draft-ietf-httpapi-ratelimit-headers-11, their earlier drafts, the legacy
// X-RateLimit-* triplets (reset in delta seconds, epoch seconds or an
// HTTP-date), GitHub's, go-chi/httprate's and OpenAI's shapes, Retry-After
// alone, or nothing at all. It can misbehave on purpose (malformed fields,
// absurd, zero or missing Retry-After, inflated quotas, cached responses,
// maintenance windows, resets rounded down, dates in UTC, refusals that
// drip, first requests that hang), it can stream its responses, and it
// counts what it saw ([Stats]).
//
// Over loopback sockets, in real time, use [NewServer]:
//
//	srv := ratelimittest.NewServer(ratelimittest.Config{
//		Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Second}},
//	})
//	defer srv.Close()
//	resp, err := srv.Client().Get(srv.URL)
//
// Inside a testing/synctest bubble, where sockets do not work, create the
// Handler inside the bubble and reach it through a [Transport]; its windows
// and Config.Latency then pass in virtual time, and durations can be
// asserted exactly:
//
//	synctest.Test(t, func(t *testing.T) {
//		h := ratelimittest.NewHandler(cfg)
//		c := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}
//		start := time.Now()
//		// … requests through c …
//		if got, want := time.Since(start), ratelimittest.Ideal(cfg, n, workers); got != want { … }
//	})
//
// The Transport returns a response as soon as its header is sent, so a
// streamed body (see Streaming below) or a dripping refusal arrives over
// virtual time too.
//
// [Ideal] computes how long a perfect client would take, to compare a real
// client against.
//
// A [TokenHandler] (over loopback: [NewTokenServer]) is shaped like the API
// of a large language model instead, OpenAI's or Anthropic's: it charges
// each request its prompt and output tokens against quotas of requests and
// tokens per minute, answers with the API's JSON bodies and usage, and
// states its quotas in the API's own fields. [IdealTokens] is its [Ideal].
//
// # Honest fields
//
// Unless a fault says otherwise, every response tells the truth as it
// stands when the response is written (after Config.Latency):
//
//   - The remaining quota (IETF r) is what is still available, after this
//     request was counted if it was admitted. A refused request is not
//     counted, so its remaining quota is what is left (usually 0).
//   - The reset (IETF t, legacy Reset) is the effective window of draft-11:
//     the time, in whole seconds rounded up, within which the client cannot
//     get more than the remaining quota admitted, even if it spends all of it
//     at once. It is therefore never 0: for a fixed window it is the time to
//     the window's end; for a sliding log, until the oldest admission leaves
//     the log (a whole Window when the log is empty); for a sliding-window
//     counter, until one more unit (a request, or a byte of a content-bytes
//     policy, as draft-11 counts its quota) would be admitted after the
//     remaining quota is spent; for a token bucket, until the next token
//     after the remaining ones are spent. A request of several units may
//     have to wait longer: its refusal's Retry-After says how long. A Concurrency policy has none: IETF omits t,
//     and the other dialects say one second.
//   - OpenAI's reset is the time until the quota is whole again.
//   - Epoch resets are rounded up to a whole second, and every response
//     carries a Date header from the same clock, so an epoch minus Date is
//     never shorter than the true delay (see Whole-second resets for the
//     other choice).
//   - A refusal's Retry-After is the time until every policy would admit
//     the request, in whole seconds rounded up, at least 1 (1 when a
//     Concurrency policy is full: the server cannot know when a request will
//     finish), and none when no policy ever will (a Quota of 0, a cost
//     above the whole quota). XRateLimitDate sends that instant as an HTTP-date, rounded
//     as its reset is; HTTPRate sends the window length instead, as
//     go-chi/httprate does; GitHub and Bare429 send none.
//
// # Content bytes
//
// A policy whose Unit is "content-bytes" counts the content bytes of the
// response bodies sent for admitted requests. The default Next sends
// Config.BodySize bytes, so the Handler knows the cost at admission: a
// request is admitted only if BodySize bytes are still available, and the
// advertised remaining quota is the number of bytes still available. With
// a custom Next, each admitted request is charged BodySize bytes at
// admission, and any bytes Next writes beyond that are charged when it
// returns; fewer are not refunded. A streamed body (Config.Stream) is
// charged whole, its event framing included, at admission. An answer to
// HEAD has no content (RFC 9110 §9.3.2): it is charged none, whatever
// Next writes.
//
// # Whole-second resets
//
// The epoch resets (XRateLimitEpoch, GitHub, HTTPRate) and the HTTP-dates
// (XRateLimitDate) can only state whole seconds, and the Date header is
// truncated to one. Config.ResetRounding chooses how the true instant is
// rounded: [RoundUp] (the default; express-rate-limit's legacy
// X-RateLimit-Reset) never states an instant early, but reset minus Date
// can exceed the true delay by up to two seconds, a second from each
// rounding (3 s for a 2 s window, or for a delay of 1.02 s);
// [RoundDown] (ulule/limiter, sethvargo/go-limiter) can state an instant up
// to a second early, so that on a refusal late in a window the reset
// equals the Date: "now". ulule/limiter sends no Retry-After on its
// refusals: set Config.RetryAfter negative. The windows of a Handler start
// at its creation, which inside a testing/synctest bubble falls on a whole
// second; Config.Phase moves their ends between whole seconds, as on a
// server whose windows start at a client's first request, so that the
// rounding shows.
//
// # Sliding-window counters
//
// [SlidingWindow] and [SlidingWindowRounded] weigh the previous aligned
// window by the share of it the last Window still covers:
// count = prev*(1-elapsed/Window) + cur, rounded up or to the nearest
// integer (go-chi/httprate). The [HTTPRate] dialect states what that
// middleware states: X-RateLimit-Reset is the end of the current window,
// though a request sent then is still refused while the previous window
// weighs, and a refusal's Retry-After is the window length, whatever the
// wait. The honest dialects state the effective window instead (see Honest
// fields).
//
// # Leaky bucket
//
// [LeakyBucket] is nginx's limit_req with nodelay: Quota per Window is the
// rate, Policy.Burst the burst. As ngx_http_limit_req_module counts, the
// rate is kept in thousandths of a request per second, rounded down, the
// excess in thousandths of a request and time in whole milliseconds; a
// request at millisecond m makes it
// max(0, excess - rate*(m-last)/1000 + 1000), the leak rounded down, and
// is refused if that exceeds Burst*1000, without changing anything. A fresh
// or drained bucket therefore admits Burst+1 requests at once, then one
// every Window/Quota. A rate under one request in 1000 seconds (slower than
// nginx can be told) would round down to none; it is kept exact instead,
// so that the bucket never leaks faster than Quota per Window.
// Served with the [Bare429] dialect, it answers as
// nginx configured with "limit_req_status 429" does: a bare 429, no
// rate-limit fields, no Retry-After. The honest dialects advertise Quota per
// Window, the requests that can be sent at once as remaining (at most
// Burst+1), and the time until one more can as reset.
//
// # Dates in UTC
//
// Config.UTCDates makes the HTTP-dates in rate-limit fields and
// Retry-After (those of [XRateLimitDate] and of Config.Maintenance) end in
// "UTC" rather than "GMT", as Go code that formats with time.RFC1123 writes
// them; RFC 9110 §5.6.7 allows only "GMT". The Date header keeps "GMT".
//
// # Retry-After: 0, or none
//
// Config.RetryAfterZero makes every refusal say "Retry-After: 0" in every
// dialect, as a hostile or broken server does: a client that obeys it
// literally retries at once, in a loop. A negative Config.RetryAfter sends
// no Retry-After at all; a positive one replaces the honest value.
//
// # Slow refusals
//
// Config.Drip makes every refusal send its header at once and then its
// body, padded to Config.DripBytes, one byte every Drip, flushed each time.
// The Handler stops when the request's context ends or a write fails: a
// client that closes the body, or whose context ends, ends the drip. A
// client that drains refusal bodies without a time bound is held for
// DripBytes*Drip.
//
// # Hanging first responses
//
// Config.Hang holds each of the first Config.HangRequests requests (since
// creation or Reset) before anything else happens to it: for Hang, or
// until the request's context ends if Hang is negative. The held request
// is then admitted or refused as usual, at the time the hang ends; one
// whose context ends first gets no response. Meanwhile the other requests
// are served. Stats.Hung counts the held requests. [Ideal] lets each of
// them keep a worker busy for Hang, while the other workers carry on.
//
// # Streaming
//
// Config.Stream makes the default Next answer as a server-sent events
// endpoint does: the header (Content-Type: text/event-stream, no
// Content-Length) at once, then Config.StreamEvents events evenly over
// Stream, each flushed. An admitted request stays in flight until its body
// is written, or its context ends: a [Concurrency] policy counts it, as
// "concurrent-requests", until then, and so does Stats.PeakInFlight, the
// most requests or streams in flight at the server at once. A custom Next
// that streams (writes, then flushes through [http.ResponseController]) is
// counted the same way, until it returns. Over a [Transport], the client
// gets the response when the header is flushed and reads the events as
// they are written; closing the body early, or the end of the request's
// context, ends the stream and frees its slot. [Ideal] counts a streamed
// request in flight for Latency plus Stream: the perfect client reads each
// stream to its end before it counts the request done.
package ratelimittest
