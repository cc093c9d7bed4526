package control

import (
	"testing"
	"time"
)

// A retry counted short asks for room for its cost doubled (Ask.Grow).
// admit capped the grown need at the quota's limit, q.q; but the room it
// compares with it is the level less what the requests in flight reserve
// (u.n), and refilling stops at the limit: a grown need capped at the
// limit is room the quota can never have while any other request that
// costs is in flight. Such a retry was held with no end known
// (waitInflight) until every request in flight had ended, though
// the quota is whole and has room for far more than its cost: with
// completions streaming for minutes, or workers always in flight, until
// the Transport's MaxWait (10 minutes by default), or until its context's
// deadline failed it (the Transport drops Grow for a hold with no known
// end only at MaxWait). Here the quota (60,000 tokens a minute) is whole,
// one request of 100 tokens is in flight, and the retry costs 40,000:
// asked with Grow 1 it was held with no end, where Grow 0 is granted.
func TestGrownNeedCappedAtLimitBesideRequestInFlight(t *testing.T) {
	cfg := Config{}
	state := func() (*State, time.Time) {
		s := new(State)
		l := new(Lease)
		l.SetCost(Cost{Tokens: 100})
		if h, ok := s.Acquire(t0, &cfg, Ask{}, l); !ok {
			t.Fatalf("first request held: %v", h.Reason)
		}
		// 60,000 a minute, half left: 1,000 tokens a second refill.
		s.Release(t0, &cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: openAITokens(60000, 30000, 30*time.Second)})
		// A minute later the quota is whole; one request of 100 goes,
		// and stays in flight.
		now := t0.Add(time.Minute)
		other := new(Lease)
		other.SetCost(Cost{Tokens: 100})
		if h, ok := s.Acquire(now, &cfg, Ask{}, other); !ok {
			t.Fatalf("request in flight held: %v", h.Reason)
		}
		return s, now
	}
	for _, grow := range []uint8{0, 1, maxGrow} {
		s, now := state()
		l := new(Lease)
		l.SetCost(Cost{Tokens: 40000})
		h, ok := s.Acquire(now, &cfg, Ask{Grow: grow, First: t0, Since: t0}, l)
		if !ok {
			t.Errorf("Grow %d: held (%v, until %v, wake %v) with the quota whole and 100 of its 60,000 tokens reserved, for a cost of 40,000: room for the whole quota never comes while a request is in flight",
				grow, h.Reason, h.Until(), h.Wake())
		}
	}
}
