package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// tokensQuota is an OpenAI answer stating its tokens quota alone.
func tokensQuota(limit, remaining int64, reset time.Duration) []parse.Quota {
	return []parse.Quota{{Unit: "tokens", Limit: limit, Remaining: remaining, Reset: reset, Dialect: "openai"}}
}

// twoInFlight returns a state whose first request (100 tokens) was
// answered at t0 with first, and two requests granted a second later, a
// (1000 tokens) and then b (costing bCost), in flight.
func twoInFlight(t *testing.T, first []parse.Quota, bCost Cost) (s *State, cfg *Config, a, b *Lease, now time.Time) {
	t.Helper()
	s, cfg = new(State), new(Config)
	var p Lease
	p.SetCost(Cost{Tokens: 100})
	if _, ok := s.Acquire(t0, cfg, Ask{}, &p); !ok {
		t.Fatal("first request held")
	}
	s.Release(t0, cfg, &p, &Outcome{First: true, Served: true, Bytes: -1, Quotas: first})
	now = t0.Add(time.Second)
	a, b = new(Lease), new(Lease)
	a.SetCost(Cost{Tokens: 1000})
	b.SetCost(bCost)
	if _, ok := s.Acquire(now, cfg, Ask{}, a); !ok {
		t.Fatal("a held")
	}
	if _, ok := s.Acquire(now, cfg, Ask{}, b); !ok {
		t.Fatal("b held")
	}
	return s, cfg, a, b, now
}

// An answer to a request granted before the one of the latest observation
// restated the limit the server had before: a quota lowered from 10000 to
// 5000 a minute read 10000 again, with its refill rate, so a request of
// 6000 was no longer beyond it and one of 4000 went 8 s after 3000 were
// left (refilling at 83 a second); raised, the old limit failed requests
// the new one takes. The key keeps the latest limit.
func TestOlderAnswerKeepsLatestLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		from, to  int64 // the limit before and after the change
		left      int64 // what the latest answer states is left
		excess    int64 // a cost beyond the latest limit; 0: none
		fits      int64 // a cost within it
		held      int64 // a cost the latest level cannot cover 8 s on; 0: none
		wantQuota int64
	}{
		{name: "lowered", from: 10000, to: 5000, left: 3000, excess: 6000, fits: 4000, held: 4000, wantQuota: 5000},
		{name: "raised", from: 5000, to: 10000, left: 8000, fits: 6000, wantQuota: 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cfg, a, b, now := twoInFlight(t, tokensQuota(tc.from, tc.from-100, 600*time.Millisecond), Cost{Tokens: 1000})
			// b's answer first, with the new limit; a's, written before
			// and overtaken on the way, with the old one.
			now = now.Add(time.Second)
			s.Release(now, cfg, b, &Outcome{First: true, Served: true, Bytes: -1, Quotas: tokensQuota(tc.to, tc.left, time.Duration(tc.to-tc.left-1)*time.Minute/time.Duration(tc.to))})
			now = now.Add(10 * time.Millisecond)
			s.Release(now, cfg, a, &Outcome{First: true, Served: true, Bytes: -1, Quotas: tokensQuota(tc.from, tc.from-2000, 12*time.Second)})

			for _, v := range s.View(now).Policies {
				if v.Unit == "tokens" && v.Quota != tc.wantQuota {
					t.Errorf("quota %d after the older answer, want the latest, %d", v.Quota, tc.wantQuota)
				}
			}
			if tc.excess > 0 {
				if ex := s.Excess(now, &Cost{Tokens: tc.excess}); ex.Unit == "" {
					t.Errorf("a cost of %d is not beyond the latest limit, %d", tc.excess, tc.to)
				}
			}
			if ex := s.Excess(now, &Cost{Tokens: tc.fits}); ex.Unit != "" {
				t.Errorf("a cost of %d is beyond the limit, though the latest is %d", tc.fits, tc.to)
			}
			if tc.held > 0 {
				var c Lease
				c.SetCost(Cost{Tokens: tc.held})
				if _, ok := s.Acquire(now.Add(8*time.Second), cfg, Ask{}, &c); ok {
					t.Errorf("a request of %d went 8 s after %d were left of %d a minute", tc.held, tc.left, tc.to)
				}
			}
		})
	}
}

// A request granted after a had answered with nothing (charged to the
// level, which moved the quota's mark past a); a's answer, the first to
// state the quota since, stated a lowered limit, and was read as
// overtaken: the key kept 10000, and a request of 6000 was not failed.
// Only an answer that stated the unit makes another older.
func TestLimitAfterBareAnswerTaken(t *testing.T) {
	s, cfg, a, b, now := twoInFlight(t, tokensQuota(10000, 9900, 600*time.Millisecond), Cost{Tokens: 1000})
	now = now.Add(time.Second)
	// b: a bare answer (a proxy's, or a cached one's headers stripped).
	s.Release(now, cfg, b, &Outcome{First: true, Served: true, Bytes: -1})
	now = now.Add(10 * time.Millisecond)
	// a: the limit lowered to 5000.
	s.Release(now, cfg, a, &Outcome{First: true, Served: true, Bytes: -1, Quotas: tokensQuota(5000, 3000, 24*time.Second)})

	for _, v := range s.View(now).Policies {
		if v.Unit == "tokens" && v.Quota != 5000 {
			t.Errorf("quota %d, want 5000: the answer to a is the only one to state the limit since the first", v.Quota)
		}
	}
	if ex := s.Excess(now, &Cost{Tokens: 6000}); ex.Unit == "" {
		t.Errorf("a cost of 6000 is not beyond the limit of 5000 the latest statement gives")
	}
}

// A unit with two quotas, a minute's and a day's: b's answer stated the
// minute's alone, and a's (granted before b) the day's, lowered from
// 100000 to 50000, its first statement since p. Read as older than the
// unit's latest answer, it was outdated: the day quota kept 100000 (and,
// b charged, 98900 left where the server said 40000). A limit is outdated
// only against an answer that stated its own quota; the level of an older
// answer is taken when lower, whatever its limit.
func TestOtherQuotaOfUnitNotOutdated(t *testing.T) {
	quota := func(policy string, limit, remaining int64, w, reset time.Duration) parse.Quota {
		return parse.Quota{Policy: policy, Unit: "tokens", Limit: limit, Remaining: remaining, Window: w, Reset: reset, Dialect: "ietf"}
	}
	for _, tc := range []struct {
		name      string
		bCost     Cost
		wantLimit int64
	}{
		{"b priced", Cost{Tokens: 1000}, 0}, // b's charge moved the day quota's mark past a: its limit is kept (see DESIGN.md)
		{"b free", Cost{}, 50000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cfg, a, b, now := twoInFlight(t, []parse.Quota{
				quota("minute", 10000, 9900, time.Minute, 50*time.Second),
				quota("day", 100000, 99900, 24*time.Hour, 20*time.Hour),
			}, tc.bCost)
			now = now.Add(time.Second)
			s.Release(now, cfg, b, &Outcome{First: true, Served: true, Bytes: -1, Quotas: []parse.Quota{
				quota("minute", 10000, 8000, time.Minute, 48*time.Second),
			}})
			now = now.Add(10 * time.Millisecond)
			s.Release(now, cfg, a, &Outcome{First: true, Served: true, Bytes: -1, Quotas: []parse.Quota{
				quota("day", 50000, 40000, 24*time.Hour, 20*time.Hour),
			}})
			for _, v := range s.View(now).Policies {
				if v.Name != "day" {
					continue
				}
				if tc.wantLimit != 0 && v.Quota != tc.wantLimit {
					t.Errorf("day quota %d, want %d: a's answer is the only statement of it since p", v.Quota, tc.wantLimit)
				}
				if v.Remaining > 41000 {
					t.Errorf("day remaining %d, want at most about 40000, what a's answer states", v.Remaining)
				}
			}
		})
	}
}
