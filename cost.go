package polite

import (
	"context"
	"math"
	"strconv"

	"github.com/politehttp/polite/internal/control"
)

// Cost is what a request will cost against the quotas of its budget key,
// per quota unit, in the units that [parse.Quota] reports: a quota counting
// "tokens" is charged Tokens, one counting "input-tokens" InputTokens, one
// counting "output-tokens" OutputTokens, and one counting Unit, Amount. Every request counts one against quotas of "requests"
// and "concurrent-requests", whatever its Cost. A unit the Cost does not
// name costs nothing, and negative amounts count as zero.
//
// The token units are those of the APIs of large language models, which
// count a request's prompt plus the most output it may produce (its
// max_tokens) against their quotas when it starts. OpenAI, Azure OpenAI,
// Groq and most OpenAI-compatible servers state one quota of "tokens";
// Anthropic states "input-tokens" and "output-tokens" apart.
//
// A key whose server was seen to count more than the costs declared (its
// tokenizer is not the estimate's) holds each request to its cost and that
// share beyond it, a quarter more, within the quota (DESIGN.md §10, "A
// server that counts more").
//
// Declare a request's cost with [WithCost], or compute it for every request
// with Transport.Cost; without either, the Transport estimates the cost of
// the request bodies of the main LLM APIs with [EstimateCost].
//
// The zero Cost is one request and nothing more. A Cost is a small
// comparable value: [WithCost] allocates twice, the context and the copy
// of the Cost it carries, and the Transport reads it without allocating.
type Cost struct {
	// Tokens is the cost against quotas of "tokens": the prompt plus the
	// output, in tokens. If zero, it is InputTokens plus OutputTokens.
	Tokens int64

	// InputTokens is the cost against quotas of "input-tokens": the
	// prompt, in tokens.
	InputTokens int64

	// OutputTokens is the cost against quotas of "output-tokens": the most
	// output the request may produce (its max_tokens times the number of
	// choices), in tokens.
	OutputTokens int64

	// Unit names one more unit the request costs, such as "points" for a
	// GraphQL query's complexity, and Amount is its cost in that unit.
	// Unit is ignored if it is empty, "requests", "concurrent-requests",
	// "content-bytes" (a quota the Transport paces by the content of the
	// responses, which no request declares) or a token unit.
	Unit   string
	Amount int64
}

// In reports what c costs against a quota counting unit: 1 for "requests"
// and "concurrent-requests", 0 for "content-bytes" (see Unit), the field
// or entry of c for any other unit, and 0 for a unit c does not name.
func (c Cost) In(unit string) int64 {
	cc := control.Cost(c)
	return cc.In(unit)
}

// String formats c as space-separated unit=amount pairs: tokens,
// input-tokens, output-tokens and Unit, in that order, leaving out those
// that cost nothing; the zero Cost is "tokens=0".
func (c Cost) String() string {
	var b []byte
	for i, u := range [...]string{"tokens", "input-tokens", "output-tokens", c.Unit} {
		n := c.In(u)
		if n <= 0 || i == 3 && named(u) {
			continue
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, u...)
		b = append(b, '=')
		b = strconv.AppendInt(b, n, 10)
	}
	if len(b) == 0 {
		return "tokens=0"
	}
	return string(b)
}

// named reports whether unit is one that Unit cannot name.
func named(unit string) bool {
	switch unit {
	case "requests", "concurrent-requests", "content-bytes", "tokens", "input-tokens", "output-tokens":
		return true
	}
	return false
}

// costKey is the context key of a declared Cost.
type costKey struct{}

// WithCost returns a copy of ctx that declares what a request made with it
// will cost. The Transport uses the declared cost as is, in place of
// Transport.Cost and of its own estimate; declare the zero Cost to say that
// a request costs no tokens.
func WithCost(ctx context.Context, c Cost) context.Context {
	return context.WithValue(ctx, costKey{}, c)
}

// costFrom reports the Cost declared in ctx by WithCost, if any.
func costFrom(ctx context.Context) (Cost, bool) {
	c, ok := ctx.Value(costKey{}).(Cost)
	return c, ok
}

// addCost adds two non-negative amounts, saturating.
func addCost(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
