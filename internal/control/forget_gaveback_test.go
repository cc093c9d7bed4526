package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A request whose start a stated quota logged, in flight when its key is
// forgotten, answered from a cache: its start is given back (unstart) to a
// state that no longer has the quota that logged it, and nothing is given
// back. The state was marked as having given a start back all the same
// (flagGaveBack), and its first refusal that nothing foresaw read as the
// server counting the starts given back: the stated quotas were
// distrusted for a minute (learner.distrustUntil), though the fresh
// state never gave one back.
func TestForgetOldCachedAnswerGivesNothingBack(t *testing.T) {
	cfg := Config{}
	var s State
	ms := time.Millisecond

	a := forgetLogged(t, &s, &cfg)
	s.Release(t0.Add(30*ms), &cfg, a, &Outcome{First: true, Bytes: -1, Cached: true})
	if s.flags&flagGaveBack != 0 {
		t.Errorf("an answer from a cache to a request from before the Forget marked the fresh state as having given a start back, with no quota to give it back to")
	}

	// The fresh state: a probe accepted, then a bare refusal.
	var n1, n2 Lease
	if _, g := s.Acquire(t0.Add(40*ms), &cfg, Ask{}, &n1); !g {
		t.Fatal("setup: the forgotten key's first request held")
	}
	s.Release(t0.Add(41*ms), &cfg, &n1, &Outcome{First: true, Bytes: -1})
	if _, g := s.Acquire(t0.Add(50*ms), &cfg, Ask{}, &n2); !g {
		t.Fatal("setup: the forgotten key's second request held")
	}
	s.Release(t0.Add(60*ms), &cfg, &n2, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
		Refusal: Refusal{Backoff: time.Second}})
	if s.learn.distrustUntil != 0 {
		t.Errorf("the fresh state's first bare refusal distrusts its quotas until +%v: read as the server counting a start the fresh state never gave back",
			time.Duration(s.learn.distrustUntil-instant(t0)))
	}
}

// A request whose start a stated quota logged, in flight when its key is
// forgotten; the fresh state hears the quota again (its log counts the
// requests in flight at that instant, later than the old start), then the
// old request is answered from a cache. unstart found no start of the
// fresh log at or before the old one's (startLog.unlog took nothing
// back), yet marked the state as having given a start back: the fresh
// state's first refusal that nothing foresaw then distrusted its quotas
// for a minute, as if the server had counted a start given back.
func TestForgetRestatedQuotaOldCachedAnswerGivesNothingBack(t *testing.T) {
	cfg := Config{}
	var s State
	ms := time.Millisecond
	// The fresh state's server states its policy alone (RateLimit-Policy
	// without RateLimit): nothing live says requests are left.
	pol := []parse.Quota{{Policy: "m", Unit: "requests", Limit: 100, Remaining: -1, Reset: -1, Window: time.Minute, Dialect: "ietf"}}

	a := forgetLogged(t, &s, &cfg)

	// The fresh state hears the quota again.
	var n1 Lease
	if _, g := s.Acquire(t0.Add(30*ms), &cfg, Ask{}, &n1); !g {
		t.Fatal("setup: the forgotten key's first request held")
	}
	s.Release(t0.Add(31*ms), &cfg, &n1, &Outcome{First: true, Bytes: -1, Quotas: pol})
	if len(s.policies) != 1 || !s.policies[0].paces() {
		t.Fatalf("setup: the fresh state has no quota that paces: %+v", s.policies)
	}
	before := s.policies[0].log.total

	// The old request, answered from a cache.
	s.Release(t0.Add(40*ms), &cfg, a, &Outcome{First: true, Bytes: -1, Cached: true})
	took := before - s.policies[0].log.total
	if took == 0 && s.flags&flagGaveBack != 0 {
		t.Errorf("no start was taken back (log total %d before and after), yet the state is marked as having given one back", before)
	}

	var n2 Lease
	if _, g := s.Acquire(t0.Add(50*ms), &cfg, Ask{}, &n2); !g {
		t.Fatal("setup: the forgotten key's second request held")
	}
	s.Release(t0.Add(60*ms), &cfg, &n2, &Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
		Refusal: Refusal{Backoff: time.Second}})
	if took == 0 && s.learn.distrustUntil != 0 {
		t.Errorf("the fresh state's first bare refusal distrusts its quotas until +%v, though no start was given back",
			time.Duration(s.learn.distrustUntil-instant(t0)))
	}
}

// forgetLogged grants s two requests under a stated quota of 100 a minute,
// answers the first at t0+1ms, and forgets s at t0+20ms with the second,
// whose start the quota logged, still in flight; it returns the second.
func forgetLogged(t *testing.T, s *State, cfg *Config) *Lease {
	t.Helper()
	ms := time.Millisecond
	qs := []parse.Quota{{Policy: "m", Unit: "requests", Limit: 100, Remaining: 99, Window: time.Minute, Reset: time.Minute, Dialect: "ietf"}}
	var p, a Lease
	if _, g := s.Acquire(t0, cfg, Ask{}, &p); !g {
		t.Fatal("setup: first request held")
	}
	s.Release(t0.Add(ms), cfg, &p, &Outcome{First: true, Bytes: -1, Quotas: qs})
	if _, g := s.Acquire(t0.Add(10*ms), cfg, Ask{}, &a); !g {
		t.Fatal("setup: second request held")
	}
	if !a.logged {
		t.Fatal("setup: the stated quota logged no start of the second request")
	}
	s.Forget(t0.Add(20*ms), cfg)
	return &a
}

// What Forget leaves of a key with no request in flight (its generation,
// identity, expiry and custom mark) is Blank: a store that keeps it holds
// no state of the key, as MemoryStore, which drops it, judges. With a
// request in flight, or once a request came since, it is not.
func TestForgetLeavesBlank(t *testing.T) {
	cfg := Config{}
	var s State
	if !s.Blank() {
		t.Fatal("the zero State is not Blank")
	}
	var a Lease
	if _, g := s.Acquire(t0, &cfg, Ask{}, &a); !g {
		t.Fatal("setup: the first request held")
	}
	s.MarkCustom()
	s.Forget(t0.Add(time.Millisecond), &cfg)
	if s.Blank() {
		t.Error("forgotten with a request in flight: Blank, though its lease counts on")
	}
	s.Release(t0.Add(2*time.Millisecond), &cfg, &a, &Outcome{First: true, Bytes: -1})
	s.Forget(t0.Add(3*time.Millisecond), &cfg)
	if !s.Blank() || s.IsZero() {
		t.Errorf("forgotten with nothing in flight: Blank %v, IsZero %v; want Blank, and not zero (its generation and expiry)", s.Blank(), s.IsZero())
	}
	var b Lease
	if _, g := s.Acquire(t0.Add(4*time.Millisecond), &cfg, Ask{}, &b); !g {
		t.Fatal("setup: the request after the Forget held")
	}
	if s.Blank() {
		t.Error("a request granted since the Forget: still Blank")
	}
}
