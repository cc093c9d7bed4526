package control

import "github.com/politehttp/polite/parse"

// The end of a window whose reset is rounded down. A server that states
// its resets as whole seconds of its clock rounded down (ulule/limiter,
// sethvargo/go-limiter) states each window's end up to a second early;
// once caught (see earlyResets) the key reads every reset a second later,
// safe but up to a second late. When the server starts each window at the
// first request after the one before ended (ulule/limiter's memory and
// Redis stores keep a counter that expires a window after its first
// request), the probe sent at that reading opens the next window there,
// just past a whole second, whose end rounds down to the second before:
// each cycle costs w and almost a second.
//
// A fixed window of length w that counted a request ends no later than w
// after that request reached the server, which was before its answer came
// back: whatever the window's phase, the first answer stating a window's
// reset, received at opened, bounds its end by opened+w. No server states
// w here, but two fixed windows in a row end at least w apart, so when w
// is whole seconds their resets, rounded down, are stated at least w
// apart too: the least span between a stated reset and the next, whose
// first answer had all of the quota back (span), is never below w. Read
// as opened+span when that is earlier than a second after the reset
// stated, the end is never early, whatever the jitter and the latency of
// the probe that opened the window: each window is reckoned from an
// answer that came back after the window began, not from the instant a
// request was meant to go, so no error carries from one window to the
// next. A request sent before the reset as read a second late and refused
// voids the bound (a window whose length is not whole seconds can be
// stated closer than w apart, and a sliding log's resets a second apart).
//
// The span shrinks to w only when a window starts less than a second
// after the reset stated for the one before, which reading resets a second
// later never does: windows that start at the first request, opened a
// second after each reset stated, are stated a second more than w apart,
// which the span cannot tell from aligned windows that long. When the
// bound does not reach the reset as read, what the server accepts tells
// it, at no risk: the window's last request (which the window has room
// for) is held back until the window would end had it begun at its
// opening answer and lasted a second less than the span, and sent: the
// test (see testAt). Counted in a new window, with a later reset, it
// starts that window itself, and the span to that window's reset is w.
// Counted in its own window, it proves nothing. A policy is tested once
// (and a test of its phase, see phase.go, is that test too). A test
// counted in the next window spends the last slot of its own.

// States of a policy's bound on windows rounded down.
const (
	firstUntested uint8 = iota // no test answered
	firstTested                // a test was answered
	firstVoid                  // a request sent in the bound's lead was refused: the reset is read a second late
)

// firstDue reports whether the next start of p, the last its window
// allows, is to test whether its windows end before the reset as read, a
// second after the one stated (early: the key's resets are rounded down).
func (p *policy) firstDue(early bool) bool {
	return early && p.first == firstUntested && p.span > 0 && p.q >= 2 && !p.sliding &&
		(p.opened == 0 || addSat(p.opened, p.span) >= p.statedEnd())
}

// firstTestAt returns when the test of p goes: when its window ends if
// it began at the answer that opened it and lasts a second less than the
// span, as a window that starts at the first request does when it is
// opened a second after each reset stated (the span is then a second
// more than the window); within the second after the reset stated, and
// half way through it when the window's opening is unknown.
func (p *policy) firstTestAt() int64 {
	end := p.statedEnd()
	at := end - int64(resetGrain)/2
	if p.opened != 0 && p.span > int64(resetGrain) {
		at = min(max(p.opened+p.span-int64(resetGrain), end-int64(resetGrain)), end-skipMax)
	}
	return at
}

// firstVoid reports whether a refusal of the request l, sent in the lead
// the bound took from the reset as read (from last, the reset the key read
// before, to lastStated, the one read a second after the reset stated),
// voids the bound.
func (p *policy) firstVoid(l *Lease, last, lastStated int64) bool {
	if p.first == firstVoid || last >= lastStated || l.start < last || l.start >= lastStated {
		return false
	}
	p.first = firstVoid
	return true
}

// firstRead reads, from an answer of p received at now to the request l
// (refused or not, with q the quota it reported), the bound on the end of
// p's windows: p.deadline is the reset as the answer states it (as read),
// lastStated the one stated before (a reset measured from it only when
// opened is set: the answer that stated it had a reset ahead), inflight
// the requests still in flight. early reports whether the key's resets
// are rounded down.
func (p *policy) firstRead(l *Lease, q *parse.Quota, refused, early bool, inflight, lastStated, now int64) {
	d := p.deadline - lastStated
	if early && p.first == firstUntested && l.tested != 0 && l.tested == lastStated {
		p.first = firstTested
	}
	if p.deadline == 0 || q.Reset <= 0 {
		// No reset ahead: the window the answer was counted in is
		// over, and a reset read from now is on no whole second, nor
		// a reset the next one can be measured from.
		p.opened = 0
		return
	}
	if p.opened == 0 || d > anchorTol || d < -anchorTol {
		// A new window (or a reset moved by a new estimate of the
		// server's clock, which only puts opened later): this answer,
		// counted in it, came back after it began.
		grains, ok := anchored(d)
		if ok && p.opened != 0 && !refused && q.Remaining >= 0 && q.Remaining+inflight >= p.q-1 {
			// All of the quota back: a fixed window's first answer.
			if s := grains * int64(resetGrain); p.span == 0 || s < p.span {
				p.span = min(s, int64(maxSpan))
			}
		}
		p.opened = now
	}
}

// firstBound reads p's reset, a second after the one stated (early: the
// key's resets are rounded down), as the end the first answer of its
// window bounds, when that is earlier.
func (p *policy) firstBound(now int64, early bool) {
	if !early || p.first == firstVoid || p.q < 2 || p.sliding || p.deadline == 0 || p.opened == 0 || p.span == 0 {
		return
	}
	end := max(addSat(p.opened, p.span), now)
	if end >= p.deadline {
		return
	}
	if p.stated == 0 {
		p.stated = p.deadline
	}
	p.deadline = end
}
