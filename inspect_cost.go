package polite

import (
	"math"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// WaitFor reports how long, from s.At, a request costing c would wait for
// the key's pause and for its quotas of what requests cost (tokens and
// other units c names; see [Cost]), were nothing else to change: for each
// such quota whose Remaining is less than c costs in its unit, the time
// its Refill takes to make up the difference (and what the requests in
// flight reserve beyond the quota's level, when Remaining is 0 for it:
// the Transport waits for that too), or, for a quota restored whole,
// until its ResetAt. c costs what the Transport holds it to: its
// cost declared and the share beyond it the server was seen to count (see
// [Cost]), within the quota. It leaves out what requests in flight ending
// may free (their reservations, and the fresh observations their answers
// bring) and the pacing of quotas of requests, so the Transport's own wait
// may differ. A quota whose refill rate and reset are unknown adds
// nothing.
//
// When c costs more than a whole quota stated recently enough to hold (see
// [PolicyState.Stated]), a request could never start: WaitFor returns a
// [*CostError], as the Transport would, unless the server took a cost so
// large before ([PolicyState.Accepted]): such a request waits for the
// whole quota, however long ago it was stated.
func (s State) WaitFor(c Cost) (time.Duration, error) {
	wait := time.Duration(0)
	if s.PauseUntil.After(s.At) {
		wait = s.PauseUntil.Sub(s.At)
	}
	for _, p := range s.Policies {
		if !costUnit(p.Unit) {
			continue
		}
		declared := c.In(p.Unit)
		if declared <= 0 {
			continue
		}
		// A cost beyond what a key keeps is read as that, as a quota
		// stated larger is (see PolicyState.Quota).
		need := min(declared, control.MaxQuota)
		if p.Quota >= 0 && need > p.Quota {
			switch {
			case need <= p.Accepted:
				need = p.Quota // the server took one so large: it waits for the whole quota, however old the limit
			case !p.Stated.IsZero() && s.At.Sub(p.Stated) >= max(p.Window, control.CostLimitFresh):
				continue // stale: the Transport sends the request, whose answer states the limit again
			default:
				return 0, &CostError{Key: s.Key, Unit: p.Unit, Cost: declared, Limit: p.Quota}
			}
		} else if n := control.Need(p.Unit, p.scale, control.Cost(c)); n > need {
			need = n // the share the server counts beyond the cost declared
			if p.Quota >= 0 {
				need = min(need, p.Quota)
			}
		}
		if p.Remaining < 0 || need <= p.Remaining-p.short {
			continue
		}
		switch {
		case p.Refill > 0:
			d := math.Ceil(float64(need-(p.Remaining-p.short)) / p.Refill * float64(time.Second))
			wait = max(wait, time.Duration(min(d, float64(maxReport))))
		case p.ResetAt.After(s.At):
			wait = max(wait, p.ResetAt.Sub(s.At))
		}
	}
	return wait, nil
}

// maxReport bounds the waits WaitFor reports: about 146 years.
const maxReport = time.Duration(1 << 62)

// costUnit reports whether a quota in unit counts what requests cost,
// rather than requests.
func costUnit(unit string) bool {
	switch unit {
	case "", "request", "requests", "content-bytes", "concurrent-requests":
		return false
	}
	return true
}
