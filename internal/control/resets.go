package control

import (
	"time"

	"github.com/politehttp/polite/parse"
)

// resetGrain is the grain of the resets servers state as instants (epoch
// seconds, HTTP-dates) and in delta-seconds: a whole second.
const resetGrain = time.Second

// earlyResets records whether out shows that the key's server states its
// resets early: a refusal whose quota of requests is spent and resets
// already (its reset is now, or past, by the server's own clock). A server
// that rounds an instant down to a whole second (ulule/limiter,
// sethvargo/go-limiter) says so late in every window, and a client that
// believed it would resend at once. From then on, the key reads every
// reset of the server a grain later (see resetOf). A reset already past on
// a refusal says nothing of when the quota comes back: the refusal floor
// decides the wait (see Decide).
func (s *State) earlyResets(out *Outcome) {
	if !out.Refused || s.flags&flagEarly != 0 {
		return
	}
	for i := range out.Quotas {
		q := &out.Quotas[i]
		if q.Remaining == 0 && q.Reset == 0 && requestsUnit(q.Unit) {
			s.flags |= flagEarly
			return
		}
	}
}

// resetOf returns the reset of q as the key reads it: as stated, or a
// grain later once the server was caught stating its resets early; -1
// when unknown.
func (s *State) resetOf(q *parse.Quota) time.Duration {
	if q.Reset < 0 || s.flags&flagEarly == 0 {
		return q.Reset
	}
	return min(q.Reset, MaxPause) + resetGrain
}

// requestsUnit reports whether a quota's unit counts requests.
func requestsUnit(u string) bool { return u == "" || u == "request" || u == "requests" }
