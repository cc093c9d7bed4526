package ratelimittest

import (
	"math"
	"time"
)

// Ideal reports how long a perfect client needs to complete tasks requests
// to a fresh Handler with cfg's Policies, using workers concurrent workers.
//
// The perfect client knows the limiters exactly: each worker sends its next
// request the instant every policy would admit it, so it is never refused,
// and the request then takes cfg.Latency. The result runs from the first
// send to the end of the last request. Ideal simulates the Handler's own
// limiters with an explicit clock; it does not sleep.
//
// All requests fall in one partition and cost what they cost the Handler
// (BodySize for "content-bytes" policies). The faults (Maintenance,
// RetryAfter, Inflate and so on) and Next play no part. If workers is
// less than 1, it is 1. If the requests can never all be admitted (a cost
// above a Quota), Ideal returns the largest Duration. It panics if cfg's
// Policies are invalid, as [NewHandler] does.
func Ideal(cfg Config, tasks, workers int) time.Duration {
	if tasks <= 0 {
		return 0
	}
	workers = max(workers, 1)
	ps := policies(cfg)
	body := bodySize(cfg)
	latency := max(cfg.Latency, 0)

	origin := time.Unix(0, 0)
	lims := make([]limiter, len(ps))
	costs := make([]int64, len(ps))
	for i := range ps {
		lims[i] = newLimiter(&ps[i], origin)
		costs[i] = ps[i].cost(body)
	}

	now, last := origin, origin
	free := workers
	var ends []time.Time // of the requests in flight; nondecreasing
	for admitted := 0; admitted < tasks; {
		for len(ends) > 0 && !ends[0].After(now) {
			ends = ends[1:]
			free++
			for i, l := range lims {
				l.release(costs[i])
			}
		}
		next, found := time.Time{}, false
		if free > 0 {
			wait, ok := time.Duration(0), true
			for i, l := range lims {
				d, k := l.wait(now, costs[i])
				wait, ok = max(wait, d), ok && k
			}
			if ok && wait == 0 {
				for i, l := range lims {
					l.take(now, costs[i])
				}
				admitted++
				free--
				last = now.Add(latency)
				ends = append(ends, last)
				continue
			}
			if ok {
				next, found = now.Add(wait), true
			}
		}
		if len(ends) > 0 && (!found || ends[0].Before(next)) {
			next, found = ends[0], true
		}
		if !found {
			return math.MaxInt64
		}
		now = next
	}
	return last.Sub(origin)
}
