package parse

import "time"

// Quota is one rate limit that a response describes, in any dialect.
//
// A field the headers do not convey, or convey invalidly, is unknown:
// Limit and Remaining are -1, Window is 0 and Reset is -1.
type Quota struct {
	Policy    string        // policy name; "" where the dialect names none
	Partition []byte        // IETF pk; nil when absent
	Unit      string        // "requests" (default), "content-bytes", "concurrent-requests", "tokens", "input-tokens", "output-tokens", "points", "api-units"
	Limit     int64         // quota per window (q); -1 when unknown
	Window    time.Duration // window (w); 0 when unknown
	Remaining int64         // available now (r); -1 when unknown
	Reset     time.Duration // time within which Remaining applies / until reset (t); -1 when unknown
	Dialect   string        // family it was read from, e.g. "ietf", "draft-07", "x-ratelimit", "openai"
}
