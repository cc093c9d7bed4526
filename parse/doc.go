// Package parse reads what HTTP responses say about rate limits.
//
// [Header] turns the rate-limit fields of a response, in any of the
// dialects servers send, into one list of [Quota] values with the same
// units everywhere: counts, a window and a reset as [time.Duration]s, a
// quota unit. [Policies] and [Limits] are strict readers of the two fields
// of the IETF RateLimit draft, RateLimit-Policy and RateLimit
// (https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/,
// revision 11), built on RFC 9651 Structured Fields
// (https://www.rfc-editor.org/rfc/rfc9651). A [Reader] reads the
// responses of one server as Header does, without reading again the
// policies and the Date the server repeats. [HTTPDate] parses the three
// forms of RFC 9110 HTTP-date, and [FromCache] reports whether a response
// came from a cache, when its rate-limit fields should be ignored.
//
//	quotas := parse.Header(resp.Header, time.Now())
//	for _, q := range quotas {
//		fmt.Println(q.Policy, q.Remaining, q.Unit, "of", q.Limit, "resets in", q.Reset)
//	}
//
// # Dialects
//
// Header reports in Quota.Dialect the family each quota was read from.
// Families are read in this order:
//
//   - "ietf": RateLimit and RateLimit-Policy of draft-08 and later, also
//     with the Beta- prefix (Cloudflare, Hugging Face, Jira, tado,
//     express-rate-limit draft-8); items join by name.
//   - "openai": x-ratelimit-{limit,remaining,reset}-{requests,tokens}
//     (OpenAI, Groq, Azure OpenAI).
//   - "anthropic": anthropic-ratelimit-{requests,tokens,input-tokens,
//     output-tokens}-{limit,remaining,reset}.
//   - "linear": x-ratelimit-{requests,complexity,api-units}-{limit,remaining,
//     reset} (Linear, RapidAPI).
//   - "kong": X-RateLimit-{Limit,Remaining}-<period> (Kong, Tomorrow.io).
//   - "hubspot": X-HubSpot-RateLimit-*.
//   - "shopify": X-Shopify-Shop-Api-Call-Limit.
//   - "zendesk": zendesk-ratelimit-tickets-index.
//   - "twitter": x-app-limit-24hour-* and x-user-limit-24hour-*.
//   - "x-ratelimit": X-RateLimit-Limit, -Remaining, -Reset (Mastodon, Jira,
//     OpenRouter, Dynatrace, express-rate-limit legacy and most others);
//     reported as "github" with X-RateLimit-Resource (the graphql resource
//     counts "points"), as "discord" with X-RateLimit-Reset-After or
//     -Bucket, as "reddit" for X-RateLimit-Used and -Remaining without a
//     limit, and as "envoy" for a limit list "1, 1;w=60;name=\"first\"".
//   - "x-rate-limit": X-Rate-Limit-Limit, -Remaining, -Reset (Okta,
//     Twitter/X, and Zendesk's bare X-Rate-Limit).
//   - "draft-07": the RateLimit Dictionary "limit=100, remaining=25, reset=5"
//     of express-rate-limit draft-7, with its unnamed policy.
//   - "draft-06": RateLimit-Limit, -Remaining, -Reset of drafts 03 to 06,
//     with an unnamed RateLimit-Policy such as "100;w=60" (express-rate-limit
//     draft-6, Bluesky, Heroku, Docker Hub, jambonz, Persona, XIQ); reported
//     as "gitlab" with GitLab's RateLimit-Name, RateLimit-Observed or
//     RateLimit-ResetTime.
//
// Some fields of these servers are not read. The limits of one endpoint
// or one room, beside the server's own, are left out: Linear's
// X-RateLimit-Endpoint-Requests-* and -Endpoint-Name, HipChat's
// X-FloodControl-*. A caller keys its budget by origin, and such a quota,
// read, would hold every request to the origin to the limit of one of its
// endpoints; a caller that keys by route can read them itself. HighLevel's
// copy of HubSpot's fields without the X-HubSpot- prefix
// (X-RateLimit-Max, -Interval-Milliseconds, -Limit-Daily,
// -Daily-Remaining) is not read either, documented by one source only;
// its X-RateLimit-Remaining is read as an "x-ratelimit" quota of unknown
// limit and reset.
//
// When two families report the same quota (Kong's RateLimit-* and its
// period pair, Zendesk's two account headers), Header reports it once,
// under the earlier family. Quota.Policy holds the IETF identifier, or the
// name a dialect gives: Envoy's name parameter, GitHub's resource,
// Discord's bucket, GitLab's RateLimit-Name, the Kong period, HubSpot's
// "daily" and "secondly", Twitter's "app" and "user", Zendesk's
// "tickets-index".
//
// # Normalisation
//
// Field names are matched case-insensitively and values are trimmed of
// optional white space. A quota is reported when its limit or its
// remaining count is valid; a field that is absent or invalid is unknown
// (Limit and Remaining -1, Window 0, Reset -1).
//
// Counts follow the grammar ^\d+(\.\d+)?$ and must fit an int64: signs,
// exponents, hex, NaN and underscores are invalid, so Azure's "-1" is
// unknown. Where no limit is sent it is derived: Reddit's limit is used
// plus remaining, and Shopify's "32/40" is used/bucket, a limit of 40
// with 8 remaining.
//
// The magnitude rule reads a bare *-Reset number: below 1e9 it is delta
// seconds (but a year or more and within a year of the instant absolute
// resets are measured from, the server's Date or now, it is epoch
// seconds: a clock before 2001, as a testing/synctest bubble's, sends
// such epochs), below
// 1e12 epoch seconds, below 1e15 epoch milliseconds, below 1e18 epoch
// microseconds, and larger values are invalid. Resets may
// also be RFC 3339 / ISO 8601 dates (with fractional seconds, or without
// seconds; the date and time apart by "T" or a space) or HTTP-dates (also ending in "UTC" where RFC 9110 §5.6.7
// requires "GMT", as Go's time.RFC1123 writes them, or in a numeric zone,
// "+0000" or "+0100", as RFC 5322 and Go's time.RFC1123Z write an
// IMF-fixdate, the offset applied; an IMF-fixdate's day may have one
// digit, as RFC 1123 allows), and the OpenAI family sends Go
// durations ("1m51.535s"); a bare number there follows the magnitude rule
// too (Azure sends seconds, some compatible servers epoch seconds).
// Dialects whose reset is a delta by definition (IETF t, Discord's
// Reset-After, Zendesk's resets) are read as deltas; Kong's period fields
// carry no reset. The
// RateLimit-Reset of drafts 03 to 06, delta seconds by those drafts,
// follows the magnitude rule, since GitLab sends epoch seconds there.
// Absolute resets are measured from the
// response's Date (from the caller's clock when Date is invalid) and
// clamp at zero. A Date more than 10 minutes off the caller's clock is
// more likely one that lies (in the wrong zone, or frozen) than a server's
// clock that far off. Behind, an instant is measured from the caller's
// clock (a reset just past by it, as one rounded down is, being due)
// unless it is more than a minute past by that clock, which a clock
// truly that late reckoned: a lying Date cannot hold a client for hours,
// and a reset read too soon (a clock truly that late) costs a few
// refusals, spaced by the refusal floor. Ahead, an instant more than 10 minutes past by the
// Date, which no server states as its next reset, and at most 10 minutes
// ahead by the caller's clock, is measured from that clock rather than
// read as past. When a delta and an absolute reset are both sent
// (Discord), the delta wins. Negative deltas, and values
// repeated by comma-joined or duplicate field lines (Okta), are unknown;
// a comma inside an HTTP-date is not a duplicate.
//
// A window is reported only when the headers state it: IETF w, a ";w="
// parameter (whole seconds; a fraction is no window), HubSpot's interval
// (milliseconds, at least one), the words Daily (one day) and Secondly
// (one second), Twitter's 24hour, and the period suffixes of Kong
// (second, minute, hour, day, month of 30 days, year of 365 days).
// Documentation knowledge, such as GitHub's one-hour window, is never
// filled in. Suffixes are told apart by an explicit vocabulary: periods
// as above, units requests, tokens, input-tokens and output-tokens. The
// unit is "requests" unless the dialect says otherwise: IETF qu verbatim,
// the token units of OpenAI and Anthropic, "points" for Linear's
// complexity and GitHub's graphql resource, "api-units" for RapidAPI.
//
// IETF RateLimit items join RateLimit-Policy items by name only; items
// that match nothing stand alone. Two quotas of different families are
// one quota when they have the same unit, equal limits and equal
// remaining counts, and no conflicting window or reset; the merged quota
// takes the known fields of both. A quota that could join several joins
// the one that agrees with it on most of the window and reset both know,
// then the one of the first name (of equal names, the shortest window
// known, then the earliest reset known), whatever the order they are
// listed in; a family's quotas join in that order too, not as listed. A
// legacy limit list (draft-03, Envoy), or an unnamed RateLimit-Policy,
// comes with the current limit, which merges into the quota item with an
// equal limit that comes first by name, then by the shortest window
// stated. Metadata (Discord's bucket, GitHub's resource,
// GitLab's name) names a quota but never makes one.
//
// Header accepts a few vendor quirks on purpose, each bounded to one
// shape a known server sends: Hugging Face's RateLimit-Policy
// "fixed window";"api";q=500;w=300, whose last String before the
// parameters names the policy; Envoy's older window= for w; and older
// Azure OpenAI's x-rate-limit-reset-tokens for x-ratelimit-reset-tokens.
// Everything else follows the draft or the dialect's own rules.
//
// # Cost and limits
//
// Reading a header costs time linear in its size, for every dialect and
// any input: a hostile 10 MB header, the most net/http accepts by
// default, is read in tens of milliseconds. One shape only a map built
// by hand can hold costs n log n in its names: many names differing only
// in case (net/http puts every name it reads in canonical form), which
// are sorted so that the result does not hang on the map's order; 10 MB
// of them, 468,830 names, take close to a second. What is kept is
// capped, to bound the work and the memory a server can cause:
//
//   - Header reports at most 32 quotas, in the order of the families
//     above; later ones are dropped.
//   - Policies and Limits keep the first 32 distinct identifiers of a
//     field. Later members are still checked, so that a malformed one
//     makes the field malformed, and a later member repeating a kept
//     identifier still competes with it; members with new identifiers are
//     dropped. A legacy list (an unnamed RateLimit-Policy, a limit list
//     of draft-03 or Envoy) keeps its first 32 quota items.
//   - A Reader remembers one value of each field it reads again, of at
//     most 4096 bytes.
//
// RateLimit and RateLimit-Policy are read by the package's own RFC 9651
// parser, which checks the whole grammar of Lists and Dictionaries
// (Inner Lists, Decimals, Dates, Display Strings included) without
// building them: the members servers send, Strings or Tokens with Integer,
// String and Byte Sequence parameters, cost no allocation beyond the
// result, a partition key one for its bytes, and a field sent as several
// lines one to join them. It accepts and rejects
// exactly what github.com/dunglas/httpsfv does, which the package's tests
// check on every input they generate.
//
// # Errors
//
// Header never fails: what it cannot read it ignores. Policies and Limits
// reject a malformed field as a whole, as the draft requires, with a
// *[FieldError] that matches [ErrMalformed].
package parse
