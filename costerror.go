package polite

import (
	"errors"
	"fmt"
)

// ErrCostExceedsQuota is matched by every [*CostError]: the request was not
// sent because it costs more than a whole quota of its budget key.
var ErrCostExceedsQuota = errors.New("polite: cost exceeds quota")

// CostError reports that a request was not sent because its [Cost] in some
// unit is more than the whole quota its server states in that unit (a
// prompt and max_tokens beyond an API's tokens per minute, say): no wait
// could ever make room for it. It fails at once, without waiting. A request
// the server refused, whose refusal first states such a quota, is not
// resent: the refusal goes back to the caller, with an [EventGiveUp] of
// [ReasonQuota], rather than a CostError for a request that was sent. A
// retry that a quota another answer states while it waits has no room for
// is not sent: the caller gets a CostError (the refusal, read to be
// retried, is gone), and the request's events end with an EventGiveUp.
//
// A CostError matches [ErrCostExceedsQuota] with [errors.Is].
type CostError struct {
	// Key is the budget key: the origin, or, for a key from a custom
	// Transport.Key, its fingerprint ("key-" and 8 hex digits), never the
	// key itself.
	Key   string
	Unit  string // the unit of the quota, such as "tokens" or "output-tokens"
	Cost  int64  // what the request costs, in Unit
	Limit int64  // the whole quota, in Unit
}

// Error says the cost, the quota it exceeds and the origin, shown as
// Key is.
func (e *CostError) Error() string {
	return fmt.Sprintf("polite: request costs %d %s, more than the whole quota of %d for %s", e.Cost, e.Unit, e.Limit, e.Key)
}

// Is reports whether target is [ErrCostExceedsQuota].
func (e *CostError) Is(target error) bool { return target == ErrCostExceedsQuota }
