package parse

import "time"

// Quota is one rate limit that a response describes, in any dialect.
//
// A field the headers do not convey, or convey invalidly, is unknown:
// Limit and Remaining are -1, Window is 0 and Reset is -1. Remaining is
// not always below Limit, and a positive Remaining is no promise that the
// next request will be served.
type Quota struct {
	// Policy names the policy: the IETF identifier, or the resource,
	// bucket or period the dialect names; "" where the dialect names none.
	Policy string

	// Partition is the IETF partition key (pk); nil when absent.
	Partition []byte

	// Unit is what Limit and Remaining count: "requests" (the default),
	// "content-bytes", "concurrent-requests", "tokens", "input-tokens",
	// "output-tokens", "points", "api-units", or any other IETF qu
	// verbatim.
	Unit string

	// Limit is the quota per window, in Unit (IETF q); -1 when unknown.
	Limit int64

	// Window is the time window of Limit (IETF w), only when the headers
	// state it; 0 when unknown.
	Window time.Duration

	// Remaining is what is available now, in Unit (IETF r); -1 when
	// unknown.
	Remaining int64

	// Reset is the time, from the response, within which Remaining applies
	// or until the quota is restored (IETF t, or a dialect's reset),
	// never negative except for -1 when unknown.
	Reset time.Duration

	// Dialect is the family the quota was read from, such as "ietf",
	// "draft-06", "x-ratelimit" or "openai"; the package documentation
	// lists them all.
	Dialect string
}
