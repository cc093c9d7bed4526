package control

import (
	"math"
	"time"
)

type unit uint8

const (
	unitRequests unit = iota + 1
	unitBytes
	unitConcurrent
)

func (u unit) String() string {
	switch u {
	case unitRequests:
		return "requests"
	case unitBytes:
		return "content-bytes"
	case unitConcurrent:
		return "concurrent-requests"
	}
	return ""
}

const (
	maxQuota = int64(1) << 52 // q and r beyond this are read as this
	maxCost  = int64(1) << 31 // content bytes one request is expected to cost, at most
)

// policy is one quota of a key, identified by name, partition and unit.
type policy struct {
	name, pk string
	unit     unit
	seen     int64

	q int64 // quota per window; 0 when unknown
	w int64 // window; 0 when unknown

	// The live observation (RateLimit r and t, or a dialect's remaining
	// and reset). Responses to concurrent requests come back in any order,
	// so within one effective window the lowest r reported is the latest
	// state of the server; the requests still in flight may not be
	// counted in it yet, so they are subtracted from it.
	live     bool
	epoch    uint64  // the key's epoch of the request that reported it
	mark     uint64  // grants started before it was received
	minR     int64   // lowest r reported in this effective window
	deadline int64   // end of the effective window; zero when t was not given
	cost     float64 // content-bytes: bytes expected per request

	log startLog // starts within w (q-per-w pacing)

	// sliding reports a sliding-window counter, recognised from its
	// refusals (see recognise): paced smoothly, q-1 starts per w evenly
	// spread, and never paused until its stated reset. fixed reports that
	// refuteRow refusals in a row the policy's own r=0 foresaw, of requests
	// its pace sent while it was marked, refuted the mark: no acceptance
	// marks it again (see recogniseAccepted), a refusal at its stated reset
	// still may. foreseen counts the refusals of the row so far (see
	// refute).
	sliding, fixed bool
	foreseen       uint8

	// The phase of a one-second window whose reset is stated late (see
	// phase.go): skips reports that windows were stated two seconds
	// apart, so that the next window is tested; tested, that a test was
	// answered; lead, by how much the reset is late (0: not proven);
	// stated, the reset the live observation stated when the lead was
	// taken from its deadline (0: none was).
	lead, stated  int64
	skips, tested bool

	// The end of a window whose reset is rounded down (see first.go):
	// span, the least span between two resets stated in a row, whole
	// seconds (0: unknown); opened, when the first answer stating the
	// live observation's reset came; first, whether a test proved the
	// bound they give (firstUntested, firstProven, firstDone).
	span, opened int64
	first        uint8
}

// binds reports whether the policy may hold a start at now: it is live
// and heard of within the minute or its window has not ended, or a start
// it logged is still within its window.
func (p *policy) binds(now int64) bool {
	switch {
	case p.live && (p.seen >= now-int64(time.Minute) || p.deadline > now):
		return true
	case p.w > 0 && p.log.len() > 0:
		return p.log.last().at+p.w > now
	}
	return false
}

// paces reports whether the policy paces starts by q per w.
func (p *policy) paces() bool { return p.unit == unitRequests && p.q > 0 && p.w > 0 }

// pace returns the quota and window its start log keeps: q per w, or for
// a sliding-window counter of a q beyond exactLog, one start per
// w/(q-1).
func (p *policy) pace() (q, w int64) {
	if p.sliding && p.q > exactLog {
		return 1, max(p.w/(p.q-1), 1)
	}
	return p.q, p.w
}

// paceWait returns how long a start at now waits for the pace of p, a
// policy that paces: no more than q starts in any span of w and, for a
// sliding-window counter, one start per w/(q-1) after the last. Its log
// keeps the starts by q per w (an exact log, q up to exactLog), those made
// before the counter was recognised included: read by the spacing alone,
// they no longer counted, and up to 2q-1 went within a w. Callers skip it
// when the log is open and p no sliding counter (see startLog.open).
func (p *policy) paceWait(now int64) int64 { return p.paceDelay(now, true) }

// paceDelay is paceWait; the starts that left the window are dropped from
// the log when trim is set, and skipped otherwise (for inspection).
func (p *policy) paceDelay(now int64, trim bool) int64 {
	q, w := p.pace()
	d := int64(0)
	switch {
	case p.log.open(now, q, w):
	case trim:
		d = p.log.wait(now, q, w)
	default:
		d = p.log.next(now, q, w)
	}
	if p.sliding && p.q > 1 && p.q <= exactLog && p.log.len() > 0 {
		d = max(d, p.log.last().at+max(p.w/(p.q-1), 1)-now)
	}
	return d
}

// need returns the bytes one request is expected to cost a content-bytes
// policy.
func (p *policy) need() int64 { return min(max(1, int64(math.Ceil(p.cost))), maxCost) }
