package ratelimittest

import (
	"math"
	"slices"
	"time"
)

// Ideal reports how long a perfect client needs to complete tasks requests
// to a fresh Handler with cfg's Policies, using workers concurrent workers.
//
// The perfect client knows the limiters exactly: each worker sends its next
// request the instant every policy would admit it, so it is never refused,
// and the request then takes cfg.Latency, plus cfg.Stream when the default
// Next streams its body: the client reads each stream to its end, and the
// request stays in flight until then. The result runs from the first send
// to the end of the last request. Ideal simulates the Handler's own
// limiters with an explicit clock; it does not sleep.
//
// All requests fall in one partition and cost what they cost the Handler
// (the content bytes of the default Next for "content-bytes" policies).
// cfg.Phase shifts the aligned windows as it does in the Handler. Each of
// the first cfg.HangRequests requests keeps its worker busy for cfg.Hang
// (the perfect client cannot know the server's first answers are late, but
// its other workers carry on); the request is then admitted as soon as the
// policies allow (the Handler decides when the hang ends, and refuses it
// if they do not). The perfect client sends each task once: a client
// whose refused requests are sent again while hang slots are left spends
// those slots on its retries, and may finish sooner (by 0.2 s of 1.6 s
// in one case of one request per 100 ms, 200 ms of latency, 3 hangs of
// 600 ms and 2 workers). With a negative Hang, those requests never end,
// and neither does the run.
//
// The faults that only change what the Handler says (Malformed,
// RetryAfter, RetryAfterZero, Inflate, ResetRounding, UTCDates and so on),
// those that only slow refusals (Drip), Maintenance and a custom Next play
// no part. If workers is less than 1, it is 1. If the requests can never
// all be admitted (a cost above a Quota), Ideal returns the largest
// Duration. It panics if cfg's Policies are invalid, as [NewHandler] does.
func Ideal(cfg Config, tasks, workers int) time.Duration {
	if tasks <= 0 {
		return 0
	}
	workers = max(workers, 1)
	ps := policies(cfg)
	size := contentSize(cfg)
	latency := max(cfg.Latency, 0)
	if streaming(cfg) {
		latency = time.Duration(saturatingAdd(int64(latency), int64(cfg.Stream)))
	}
	hangs := 0
	if cfg.Hang != 0 {
		if cfg.Hang < 0 {
			return math.MaxInt64
		}
		hangs = max(cfg.HangRequests, 1)
	}

	origin := time.Unix(0, 0)
	lims := make([]limiter, len(ps))
	costs := make([]int64, len(ps))
	for i := range ps {
		lims[i] = newLimiter(&ps[i], origin, cfg.Phase)
		costs[i] = ps[i].cost(size)
	}

	now, last := origin, origin
	free := workers // workers with no request
	started := 0    // tasks a worker has taken up
	pending := 0    // workers whose hang is over, their request not yet admitted
	var ends []busy // sorted by end
	for admitted := 0; admitted < tasks; {
		for len(ends) > 0 && !ends[0].end.After(now) {
			if ends[0].hung {
				pending++
			} else {
				free++
				for i, l := range lims {
					l.release(costs[i])
				}
			}
			ends = ends[1:]
		}
		if free > 0 && started < tasks && hangs > 0 {
			hangs--
			free--
			started++
			ends = insertBusy(ends, busy{now.Add(cfg.Hang), true})
			continue
		}
		next, found := time.Time{}, false
		if pending > 0 || free > 0 && started < tasks {
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
				if pending > 0 {
					pending--
				} else {
					free--
					started++
				}
				end := now.Add(latency)
				if end.After(last) {
					last = end
				}
				ends = insertBusy(ends, busy{end, false})
				continue
			}
			if ok {
				next, found = now.Add(wait), true
			}
		}
		if len(ends) > 0 && (!found || ends[0].end.Before(next)) {
			next, found = ends[0].end, true
		}
		if !found {
			return math.MaxInt64
		}
		now = next
	}
	return last.Sub(origin)
}

// busy is a worker's request in flight in Ideal: admitted, or held by
// Config.Hang before it reaches the policies.
type busy struct {
	end  time.Time
	hung bool
}

// insertBusy inserts b into s, which is sorted by end, after the requests
// that end at the same instant.
func insertBusy(s []busy, b busy) []busy {
	i := len(s)
	for i > 0 && s[i-1].end.After(b.end) {
		i--
	}
	return slices.Insert(s, i, b)
}
