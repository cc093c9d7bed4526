// Package ratelimittest provides rate-limited HTTP servers for tests, in the
// manner of [net/http/httptest].
//
// A [Handler] enforces one or more policies ([Policy]: fixed window, sliding
// log, sliding-window counter, token bucket, concurrency) and advertises them
// in one of several header dialects ([Dialect]): the IETF RateLimit and
// RateLimit-Policy fields of draft-ietf-httpapi-ratelimit-headers-11, their
// earlier drafts, the legacy X-RateLimit-* triplets, GitHub's and OpenAI's
// shapes, Retry-After alone, or nothing at all. It can misbehave on purpose
// (malformed fields, absurd Retry-After, inflated quotas, cached responses,
// maintenance windows) and it counts what it saw ([Stats]).
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
//     counter, until one more request would be admitted after the remaining
//     quota is spent; for a token bucket, until the next token after the
//     remaining ones are spent. A Concurrency policy has none: IETF omits t,
//     and the other dialects say one second.
//   - OpenAI's reset is the time until the quota is whole again.
//   - Epoch resets are rounded up to a whole second, and every response
//     carries a Date header from the same clock, so an epoch minus Date is
//     never shorter than the true delay.
//   - A refusal's Retry-After is the time until every policy would admit
//     the request, in whole seconds rounded up, at least 1 (1 when a
//     Concurrency policy is full: the server cannot know when a request will
//     finish). GitHub and Bare429 send none.
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
// returns; fewer are not refunded.
package ratelimittest
