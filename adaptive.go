package polite

import "time"

// gradient is a latency-aware concurrency limit for one origin, in the
// manner of TCP Vegas and of the Gradient limits of Netflix's
// concurrency-limits: when the origin's latency rises well above its own
// baseline, its requests are queueing there, and the limit comes down
// before the origin refuses anything; as latency comes back, the limit
// goes up again.
//
// It is a pure state machine: observe takes the instant explicitly, and
// nothing in it locks, allocates or reads a clock. Its state is a fixed
// size (about 210 bytes).
//
// How it decides:
//
//   - The latency is smoothed as TCP smooths round-trip times (RFC 6298
//     §2): srtt moves by 1/8 of each sample, so that one slow response
//     moves little.
//   - The baseline is the mean latency of gradMeasureN responses measured
//     with little load: the first ones, during which the limit stays at
//     its initial value; then a new measurement every 5 minutes, which
//     drains: the limit is halved, and at most gradLight (as BBR's
//     ProbeRTT cuts its window), and only the requests sent from its
//     start with no more than that in flight count (those sent before
//     are in flight with them: the origin holds no more of the client's
//     than the drained limit). Started one round trip in instead, a drain
//     begun as answers stalled for minutes came back waited the inflated
//     srtt (34s) before it counted, with the limit halved. A drain lasts
//     17 round trips at most, and the limit holds while it runs. The
//     answers of drains that got fewer than gradMeasureMin add up, as
//     long as each such drain follows the last within gradCarryFor:
//     dropped, a client sending in small bursts never measured the
//     baseline again, and one slower for good held the limit at 1 for as
//     long as it ran. Measured at the limit reached,
//     whenever the latency was within 10% of the old baseline, a baseline
//     taken too high (an origin slow for its first responses, warming up)
//     was never corrected: against it, queueing looked calm, the limit
//     grew to its ceiling, and the next measurement took that queueing
//     for the baseline. A mean,
//     not a minimum: the fastest of thousands of noisy responses (or of
//     their averages) is below anything the origin usually does, and
//     against it every latency looks like queueing. A baseline re-measured
//     with little load, not followed passively: measured under the
//     client's own load, it would drift up with it. If the origin is
//     slower for good, or busy with others, the next measurement makes
//     that its baseline.
//   - At most once per smoothed round trip, the ratio g of the latency to
//     the baseline decides; the latency is srtt, or the mean of the
//     samples since the last decision when lower. Judged by srtt alone,
//     at the instant a sample brings, the decisions could fall in step
//     with a cycle of the origin's answers: one request at a time, every
//     fourth an error answered after 400ms, was judged each time just
//     after the error, at 1.35 times a baseline the mean of the cycle is
//     1.19 times, and the limit held at 1 until the next measurement (see
//     TestGradientPeriodicErrorsNoLock). Above 1.5, the origin queues
//     what it is sent; the limit moves a quarter of the way (by one at
//     least) to what the origin serves without queueing plus half as
//     much, inflight·1.5/g. Below 1.25, and if the origin was sent at
//     least half the limit (a client that sends little learns nothing
//     about more), the limit goes up by one. In between, it holds.
//
// Against a server with 8 workers of 50ms each (160 requests a second)
// and 64 clients that always have more to send, the limit settles between
// 10 and 15: the median latency stays within 1.5 times the baseline at
// 0.95 of the server's capacity or more, with service times fixed, uniform
// or exponential; without it, the median is 8 times the baseline (see
// TestGradientSimulation and TestGradientQueueServer).
type gradient struct {
	lim    int // the limit, in [1, maxLim]
	maxLim int

	srtt time.Duration // smoothed latency; 0 before the first observation
	base time.Duration // the baseline: 0 until the first measurement has a sample
	next time.Time     // no decision before this instant
	last time.Time     // when the last measurement ended

	// A measurement of the baseline runs while mEnd is not zero: the
	// responses to requests sent from mFrom are added up until
	// gradMeasureN of them came back, or mEnd. During a drain (mDrain,
	// every measurement but the first), the limit is halved, and at most
	// gradLight.
	mFrom, mEnd time.Time
	mSum        time.Duration
	mN          int
	mDrain      bool

	// The answers of drains that ended with fewer than gradMeasureMin
	// (cSum, cN), kept for the next drain that ends short too, and when
	// they were last added to (cAt): see measured.
	cSum time.Duration
	cN   int
	cAt  time.Time

	// The samples since the last decision, which the next one judges by
	// their mean.
	dSum time.Duration
	dN   int
}

const (
	gradFast       = 8                // srtt moves by 1/gradFast of each sample
	gradLow        = 1.25             // below this ratio to the baseline, the limit may grow
	gradHigh       = 1.5              // above it, the limit comes down
	gradLight      = restraintInitial // the most in flight while a measurement drains
	gradProbeEvery = 5 * time.Minute
	gradMeasureN   = 64                 // responses a measurement averages
	gradMeasureMin = 8                  // fewer measure nothing
	gradDrainRTTs  = 17                 // round trips a drain lasts at most
	gradCarryFor   = 2 * gradProbeEvery // how long short drains' answers are kept with none added
	gradMaxRTT     = 10 * time.Minute   // longer latencies are read as this
	gradMeanN      = 1 << 16            // samples a decision's mean counts at most
)

// newGradient returns a gradient starting at limit initial, never above
// maxLim; both are at least 1.
func newGradient(initial, maxLim int) gradient {
	maxLim = max(maxLim, 1)
	return gradient{lim: min(max(initial, 1), maxLim), maxLim: maxLim}
}

// limit returns how many requests may be in flight to the origin.
func (g *gradient) limit() int {
	if g.mDrain {
		return max(1, min(g.lim/2, gradLight))
	}
	return g.lim
}

// observe records a response the origin served, received at now, rtt
// after its request was sent, with inflight requests to the origin in
// flight when it was sent, itself included. Refusals (429, 503) and
// transport errors must not be observed: they measure no service.
func (g *gradient) observe(now time.Time, rtt time.Duration, inflight int) {
	g.sample(now, rtt, inflight, sampleAnswer)
}

// observeError records, as observe does, an error the origin answered
// with (a 500), which counts only when slower than the smoothed latency:
// an origin may answer its errors at once, whatever its load. (Taken
// always, the quick 500s of a deploy, measured as the baseline, held the
// limit at 1 against an origin then serving in 50 ms.)
func (g *gradient) observeError(now time.Time, rtt time.Duration, inflight int) {
	g.sample(now, rtt, inflight, sampleError)
}

// The kinds of samples a gradient takes.
const (
	sampleAnswer = iota // a latency
	sampleError         // a latency, counted only when above the smoothed latency
	sampleNone          // no latency of the origin's: an answer from a cache
)

// measured ends the measurement running, at now. A first one ends with
// gradMeasureMin samples at least: with fewer, it starts again (see
// lapsed). A drain with fewer adds them to those that drains ending short
// kept, unless none was added to them for gradCarryFor; with
// gradMeasureMin together, they are the baseline. A drain with enough of
// its own is measured by them alone: the answers kept from before the
// origin slowed for good, mixed in, held the ratio between gradLow and
// gradHigh and the limit where the old baseline had cut it.
func (g *gradient) measured(now time.Time) {
	switch {
	case g.mN >= gradMeasureMin:
		g.base = g.mSum / time.Duration(g.mN)
		g.cSum, g.cN = 0, 0
	case g.mDrain && g.mN > 0:
		if g.cN > 0 && now.Sub(g.cAt) > gradCarryFor {
			g.cSum, g.cN = 0, 0
		}
		g.cSum, g.cN, g.cAt = g.cSum+g.mSum, g.cN+g.mN, now
		if g.cN >= gradMeasureMin {
			g.base = g.cSum / time.Duration(g.cN)
			g.cSum, g.cN = 0, 0
		}
	}
	g.mFrom, g.mEnd, g.mSum, g.mN, g.mDrain = time.Time{}, time.Time{}, 0, 0, false
	g.dSum, g.dN = 0, 0 // the measurement's samples judge no decision
	g.last, g.next = now, now
}

// expire ends, at now, a measurement whose end has passed, with no
// sample: an answer that samples nothing (a cache's) still ends it, or
// once every answer came from a cache, a drain kept the limit halved for
// as long as they did.
func (g *gradient) expire(now time.Time) {
	switch {
	case g.lapsed(now):
		g.restart()
	case !g.mEnd.IsZero() && !now.Before(g.mEnd):
		g.measured(now)
	}
}

// lapsed reports whether the first measurement reached its end at now
// with fewer than gradMeasureMin samples: it starts again (see restart).
func (g *gradient) lapsed(now time.Time) bool {
	return g.last.IsZero() && !g.mEnd.IsZero() && !now.Before(g.mEnd) && g.mN < gradMeasureMin
}

// restart starts the first measurement afresh at the next sample: one
// ended by its time with fewer than gradMeasureMin samples made a
// baseline of them (a crawler that fetched one page, quickly answered,
// and came back 11 minutes later had a baseline of two answers, half
// the origin's latency, and a limit of 1 for 5 minutes).
func (g *gradient) restart() {
	g.srtt, g.mFrom, g.mEnd, g.mSum, g.mN, g.dSum, g.dN = 0, time.Time{}, time.Time{}, 0, 0, 0, 0
}

// sample is observe, or observeError, as kind says.
func (g *gradient) sample(now time.Time, rtt time.Duration, inflight int, kind int) {
	rtt = min(max(rtt, time.Nanosecond), gradMaxRTT)
	if kind == sampleError && (rtt <= g.srtt || g.srtt == 0) {
		return
	}
	if g.lapsed(now) {
		g.restart()
	}
	if g.srtt == 0 {
		g.srtt = rtt
		// The first measurement: from the start, as long as it takes.
		g.mFrom, g.mEnd = now.Add(-rtt), now.Add(gradMaxRTT)
	} else {
		g.srtt += (rtt - g.srtt) / gradFast
	}
	if g.dN < gradMeanN {
		g.dSum += rtt
		g.dN++
	}

	if !g.mEnd.IsZero() {
		if !now.Add(-rtt).Before(g.mFrom) && (!g.mDrain || inflight <= g.limit()) {
			g.mSum += rtt
			g.mN++
		}
		if g.last.IsZero() && g.mN > 0 {
			g.base = g.mSum / time.Duration(g.mN) // the first: usable at once
		}
		if g.mN < gradMeasureN && now.Before(g.mEnd) {
			return
		}
		g.measured(now)
	}
	if g.base == 0 || now.Before(g.next) {
		return
	}
	g.next = now.Add(g.srtt)
	lat := g.srtt
	if g.dN > 0 {
		lat = min(lat, g.dSum/time.Duration(g.dN))
	}
	g.dSum, g.dN = 0, 0
	ratio := float64(lat) / float64(g.base)
	if now.Sub(g.last) >= gradProbeEvery {
		g.mDrain = true
		g.mFrom = now
		g.mEnd = now.Add(gradDrainRTTs * g.srtt)
		return
	}
	switch {
	case ratio > gradHigh:
		target := int(float64(inflight) * gradHigh / ratio)
		g.lim = max(1, g.lim-max(1, (g.lim-target)/4))
	case ratio < gradLow && 2*inflight >= g.lim:
		g.lim = min(g.maxLim, g.lim+1)
	}
}
