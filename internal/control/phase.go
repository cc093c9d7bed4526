package control

import "time"

// The phase of a one-second window whose reset is stated late. A server
// that states its resets as whole seconds of its clock (epoch seconds,
// HTTP-dates) most often rounds them up: a window that ends just after a
// second is stated almost a second late. A pause until that reset, with
// its few milliseconds of jitter and the time the burst after it takes to
// reach the server, then falls past the end of the window it states, in
// the next one, whose reset is two seconds away: with one-second windows,
// every other window is skipped, and the key runs at half speed. Nothing
// the server says tells this from a two-second window whose reset is on
// time.
//
// What the server accepts tells it, at no risk. Once two windows in a row
// are stated two seconds apart, the last request the window allows is held
// back and sent a little less than a second before its stated reset: the
// test. Counted in the window it belongs to, which had it to spare, it
// proves nothing was skipped, and the key tests that policy no more.
// Counted in the next window, stated one second after the one before, it
// proves that window open before the stated reset, by as much as the
// stated reset was ahead when the answer came (the lead). From then on
// the key reads each reset of the policy that much earlier, as long as
// its resets keep falling on whole seconds of the first; a request sent
// in the lead and refused, or answered with the reset the lead was taken
// from (a sliding log partly freed), voids it. Nothing is refused either way, and at
// most one request a window waits for a test.

const (
	anchorTol = int64(2 * time.Millisecond) // how far from whole seconds apart two stated resets may be
	skipMax   = 2 * jitterMax               // the test goes this much before a grain ahead of the reset, less two round trips
)

// statedEnd returns the reset p's live observation states: its deadline,
// unless a lead was taken from it.
func (p *policy) statedEnd() int64 {
	if p.stated != 0 {
		return p.stated
	}
	return p.deadline
}

// testAt reports whether the next start of p, the last its window allows,
// is a test of the window's phase, or of whether a window rounded down
// ends before the reset as read (early: the key's resets are rounded down;
// see first.go), and when it goes; rtt is the key's smoothed round trip.
func (p *policy) testAt(now, rtt int64, early bool) (int64, bool) {
	if !(p.skips || p.firstDue(early)) || p.unit != unitRequests || !p.live || p.deadline <= now || p.sliding || p.q < 2 {
		return 0, false
	}
	if !p.skips {
		return p.firstTestAt(), true // a window rounded down (see first.go)
	}
	lead := max(int64(resetGrain)-skipMax-2*rtt, int64(resetGrain)/2)
	return p.statedEnd() - lead, true
}

// anchored reports whether two stated resets fall a whole number of
// seconds apart, as resets stated as instants of the server's clock do;
// resets stated in delta-seconds seldom do.
func anchored(d int64) (grains int64, ok bool) {
	if d < int64(resetGrain)/2 {
		return 0, false // no whole second apart, as grains would say, without a division
	}
	grains = (d + int64(resetGrain)/2) / int64(resetGrain)
	off := d - grains*int64(resetGrain)
	return grains, grains > 0 && off <= anchorTol && off >= -anchorTol
}

// phase reads what the answer, received at now to a request l, says of
// the phase of p: the reset the key read before it was last (stated
// lastStated), the one it states is p.deadline; back, what it counts back
// of p's quota (what is left and the requests in flight). A test proves a
// lead only when its answer counts all of the quota back but one, as the
// first answer of a fixed window does: a sliding log's or a bucket's,
// whose reset moves by a second as its oldest start or its refill does,
// has the test's slot spent. It reports whether the
// answer refused a request sent in a lead taken from the stated reset,
// which voids the lead. A key whose resets are rounded down (early) reads
// them a second late already, and takes no lead: a window that starts at
// the first request would carry it from one window to the next, and its
// start drift early (see first.go).
func (p *policy) phase(l *Lease, refused, early bool, back, last, lastStated, now int64) bool {
	fresh := p.q > 0 && back >= p.q-1
	if refused && p.lead > 0 && l.start >= last && l.start < lastStated {
		p.lead, p.skips, p.tested = 0, false, true
		return true
	}
	if p.deadline == 0 || lastStated == 0 {
		return false
	}
	grains, ok := anchored(p.deadline - lastStated)
	switch {
	case l.tested != 0 && l.tested == lastStated && !refused:
		p.skips, p.tested = false, true
		if ok && grains == 1 && lastStated > now && !early && fresh {
			p.lead = min(lastStated-now, int64(resetGrain)) // counted in the next window
		}
	case p.deadline == lastStated:
		// Another answer of the same window. To a request sent in a
		// lead taken from that reset, it shows the window open no
		// sooner than stated: a sliding log whose oldest starts freed
		// part of it, its reset moved to the next oldest, within the
		// same whole second. The lead is void, as a refusal in it
		// voids it, before the key reads that reset early again.
		if p.lead > 0 && l.start >= last && l.start < lastStated {
			p.lead, p.skips = 0, false
		}
	case p.lead > 0 && ok && 2*back < p.q && l.start >= last:
		// The first answer of a window the lead opened, less than half
		// of its quota back: a sliding log or a bucket, whose reset
		// moves a second as its oldest start or its refill does, not a
		// fixed window the test proved late (one another client shares
		// has most of it back as it opens, unless that client took half
		// of it or more as it opened: then the lead is lost for good,
		// as a policy is tested once). The lead is void.
		p.lead, p.skips = 0, false
	case !ok:
		// Not on whole seconds of the reset before: a delta, or the
		// key's estimate of the server's clock moved. A lead taken is
		// void. (Testing again then was tried: a server whose Dates
		// move the estimate was tested at every window, each test
		// holding a request back.)
		p.lead, p.skips = 0, false
	case grains == 2 && !p.tested && p.lead == 0:
		p.skips = true
	}
	return false
}

// takeLead reads p's reset, once a test proved it late, that much
// earlier, but never before a second after the first answer of its
// window (opened): a window that starts at the first request (or a
// sliding log's oldest start, which frees a second later) began before
// that answer came, and ends by then. The lead, proved in one window, is
// the phase of aligned windows; windows that start at the first request
// drift with the jitter and the latency of each window's probe, and a
// probe sent the whole lead early fell in the window before, refused.
func (p *policy) takeLead(now int64) {
	if p.deadline == 0 || p.lead == 0 {
		return
	}
	p.stated = p.deadline
	end := p.deadline - p.lead
	if p.opened != 0 {
		end = max(end, addSat(p.opened, int64(resetGrain)))
	}
	p.deadline = min(max(end, now), p.stated)
}
