package polite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// ErrWaitTooLong is matched by every [*WaitError]: the request was not sent
// because the wait it needed was longer than the Transport will wait.
var ErrWaitTooLong = errors.New("polite: wait too long")

// WaitError reports that a request was not sent because the wait its origin
// needed was longer than [Transport.MaxWait] or would outlast the request's
// context deadline. It carries the wait so that the caller can reschedule the
// work instead of retrying at once.
//
// A WaitError matches [ErrWaitTooLong] with [errors.Is]. When the cause was
// the request's context deadline it also matches [context.DeadlineExceeded],
// as net/http's own timeouts do, although the deadline has not passed yet:
// the wait would have ended after it.
type WaitError struct {
	// Key is the budget key: the origin, or, for a key from a custom
	// Transport.Key, its fingerprint ("key-" and 8 hex digits), never the
	// key itself.
	Key    string
	Delay  time.Duration // how long the request would have had to wait
	Until  time.Time     // when the wait would have ended
	Reason Reason        // what the wait was for
	// Deadline reports whether the request's context deadline, rather than
	// MaxWait, is what the wait would have outlasted.
	Deadline bool
}

func (e *WaitError) Error() string {
	limit := "max wait"
	if e.Deadline {
		limit = "context deadline"
	}
	return fmt.Sprintf("polite: %s wait of %v for %s exceeds the %s", e.Reason, e.Delay, e.Key, limit)
}

// Is reports whether target is [ErrWaitTooLong], or [context.DeadlineExceeded]
// when the wait would have outlasted the context deadline.
func (e *WaitError) Is(target error) bool {
	return target == ErrWaitTooLong || (e.Deadline && target == context.DeadlineExceeded)
}

// Reason says why a request waits.
type Reason string

// The reasons a request can wait for.
const (
	ReasonPace        Reason = "pace"         // spreading requests within a policy's quota (q per w) or the local MaxRate
	ReasonQuota       Reason = "quota"        // the live quota (r) is spent: waiting out its effective window (t)
	ReasonRetryAfter  Reason = "retry-after"  // the server asked for it with Retry-After
	ReasonBackoff     Reason = "backoff"      // a refusal that gave no wait: exponential fallback with jitter
	ReasonAdaptive    Reason = "adaptive"     // pacing by a quota learned from refusals, for servers that say little or lie
	ReasonRetryBudget Reason = "retry-budget" // retries to the origin used up their share of its traffic
	ReasonStopped     Reason = "stopped"      // the origin reported abnormal usage: no retries for a while
	ReasonConcurrency Reason = "concurrency"  // too many requests in flight for the origin
	ReasonProbe       Reason = "probe"        // after a pause, one request probes before the others follow
)

// reasons maps the controller's reason codes to Reasons.
var reasons = [...]Reason{
	control.ReasonNone:        "",
	control.ReasonPace:        ReasonPace,
	control.ReasonQuota:       ReasonQuota,
	control.ReasonRetryAfter:  ReasonRetryAfter,
	control.ReasonBackoff:     ReasonBackoff,
	control.ReasonAdaptive:    ReasonAdaptive,
	control.ReasonRetryBudget: ReasonRetryBudget,
	control.ReasonStopped:     ReasonStopped,
	control.ReasonConcurrency: ReasonConcurrency,
	control.ReasonProbe:       ReasonProbe,
}

// reasonOf returns the Reason of a controller's reason code.
func reasonOf(r control.Reason) Reason {
	if int(r) < len(reasons) {
		return reasons[r]
	}
	return ""
}

// reasonCode returns the controller's code of a Reason.
func reasonCode(r Reason) control.Reason {
	for i, v := range reasons {
		if v == r {
			return control.Reason(i)
		}
	}
	return control.ReasonNone
}
