package control

import "time"

// retryBudget keeps one invariant: retries to a key stay a share of its
// traffic. Retries may use a fifth of recent first attempts, with a floor
// of retryFloor a second, so that retries cannot multiply an outage (the
// Finagle and Envoy retry budgets); a report of abnormal usage stops them
// for a while.
type retryBudget struct {
	tokens    float64
	at        int64 // last refill; zero: never
	stopUntil int64 // the server reported abnormal usage
}

const (
	retryShare    = 0.2 // of first attempts
	retryFloor    = 2.0 // retries a second, always allowed
	retryTokenCap = 20.0
	stopRetrying  = 10 * time.Minute // after abnormal usage was reported
)

// deposit adds a first attempt's share.
func (r *retryBudget) deposit(now int64) {
	r.refill(now)
	r.tokens = min(retryTokenCap, r.tokens+retryShare)
}

// refill adds the floor's retries for the time since the last call.
func (r *retryBudget) refill(now int64) {
	switch {
	case r.at == 0:
		r.tokens = retryFloor
	case now > r.at:
		r.tokens = min(retryTokenCap, r.tokens+float64(now-r.at)*(retryFloor/float64(time.Second)))
	}
	r.at = now
}

// allows reports whether one more retry may go now; or why not. It does
// not change r.
func (r retryBudget) allows(now int64) (bool, Reason) {
	if now < r.stopUntil {
		return false, ReasonStopped
	}
	r.refill(now)
	if r.tokens < 1 {
		return false, ReasonRetryBudget
	}
	return true, ReasonNone
}

// take spends one retry.
func (r *retryBudget) take(now int64) {
	r.refill(now)
	r.tokens = max(0, r.tokens-1)
}

// left returns the number of retries allowed now.
func (r retryBudget) left(now int64) int {
	if now < r.stopUntil {
		return 0
	}
	r.refill(now)
	return int(r.tokens)
}
