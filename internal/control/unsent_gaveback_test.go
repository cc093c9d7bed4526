package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A request never sent (a retry whose body could not be rewound:
// Outcome.Unsent) gives its start back to the stated quota's pace, and the
// state was marked as having given a start back (flagGaveBack) as for an
// answer from a cache. The server never saw that request, so it cannot
// have counted it: yet the next refusal that nothing foresaw was read as
// the server counting starts given back, and the stated quotas were
// distrusted for a minute (learner.distrustUntil).
func TestUnsentGivesNoEvidenceOfCounting(t *testing.T) {
	for _, unsent := range []bool{false, true} {
		cfg := Config{}
		var s State
		ms := time.Millisecond
		// The policy alone (RateLimit-Policy without RateLimit): nothing
		// live says requests are left, so a refusal is not hinted.
		pol := []parse.Quota{{Policy: "m", Unit: "requests", Limit: 100, Remaining: -1, Reset: -1, Window: time.Minute, Dialect: "ietf"}}

		var p, a, n Lease
		if _, g := s.Acquire(t0, &cfg, Ask{}, &p); !g {
			t.Fatal("setup: first request held")
		}
		s.Release(t0.Add(ms), &cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: pol})
		if _, g := s.Acquire(t0.Add(10*ms), &cfg, Ask{}, &a); !g {
			t.Fatal("setup: second request held")
		}
		if !a.logged {
			t.Fatal("setup: the stated quota logged no start of the second request")
		}
		if unsent {
			s.Release(t0.Add(11*ms), &cfg, &a, &Outcome{Bytes: -1, Failed: true, Unsent: true})
		} else {
			s.Release(t0.Add(11*ms), &cfg, &a, &Outcome{Bytes: -1, Failed: true})
		}
		if _, g := s.Acquire(t0.Add(20*ms), &cfg, Ask{}, &n); !g {
			t.Fatal("setup: third request held")
		}
		s.Release(t0.Add(30*ms), &cfg, &n, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
			Refusal: Refusal{Backoff: time.Second}})
		if s.learn.distrustUntil != 0 {
			t.Errorf("unsent %v: the refusal after a request never sent distrusts the stated quotas until +%v: read as the server counting a start it never saw",
				unsent, time.Duration(s.learn.distrustUntil-instant(t0)))
		}
	}
}
