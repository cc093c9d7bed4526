package control

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A server that states nothing keeps a fixed window of 10 requests a
// second and refuses with Retry-After: 1. From 2 to 7 minutes it is down:
// every request is refused, Retry-After: 1 (a load balancer's 503 or a
// gateway's 429 during maintenance; a key that states nothing reads both
// alike). Then it is back, as before. 16 workers, 50 ms round trip.
//
// doc.go (Learning): the learned quota "grows additively while it holds
// requests back without a refusal"; README: refusals "become a learned
// quota that paces the origin and grows back when refusals stop". The
// measurement that spans the outage doubles the learned window at most.
// Measured whole, the outage was the learned window (the cycle refused
// just before it, 9 requests, per the 5 minutes until an acceptance): the
// rate fell from 10 per 1.36 s to 9 per 5 min and never grew back (the
// refused probes of the outage left a lower bound a rate step goes only
// half way to, and the pins set before it lapsed only after 32 of the new
// 5-minute windows): 18 requests per 10 minutes to a server that takes
// 6000.
func TestLearnedQuotaGrowsBackAfterOutage(t *testing.T) {
	ra1 := func() (time.Duration, bool) { return time.Second, true }
	fw := fixedWindow(10, time.Second, ra1)
	down := func(at time.Duration) simAnswer {
		if at >= 2*time.Minute && at < 7*time.Minute {
			return simAnswer{wait: time.Second, given: true}
		}
		return fw(at)
	}
	m := &sim{t: t, lat: 50 * time.Millisecond, rng: rand.New(rand.NewPCG(1, 2)), server: down}
	var before *PolicyView
	m.every = func(now time.Duration) {
		if before == nil && now >= 110*time.Second {
			before = m.s.View(ht0.Add(now)).Learned
		}
	}
	end := 40 * time.Minute
	m.run(16, end)
	v := m.s.View(ht0.Add(end)).Learned
	if before != nil {
		t.Logf("learned before the outage: %d per %v", before.Quota, before.Window)
	}
	t.Logf("learned at %v: %d per %v", end, v.Quota, v.Window)
	for at := 10 * time.Minute; at < end; at += 10 * time.Minute {
		t.Logf("%v-%v: accepted %d, refused %d", at, at+10*time.Minute, m.count(at, at+10*time.Minute), m.refusedIn(at, at+10*time.Minute))
	}
	last := m.count(end-10*time.Minute, end)
	if last < 2000 {
		t.Errorf("33 minutes after a 5-minute outage: learned %d per %v, %d accepted in the last 10 minutes with %d refused since minute 10 (the server takes 6000 in 10 minutes; the key took about 3700 before the outage): the learned quota did not grow back once refusals stopped",
			v.Quota, v.Window, last, m.refusedIn(10*time.Minute, end))
	}
}

// An outage that ends as outages often do, not at once: a server that
// states nothing, a fixed window of 10 a second refusing with
// Retry-After: 1, is down from minute 2 to minute 7 (every request
// refused, Retry-After: 1), then for 30 s more comes back by halves (a
// rolling restart behind a load balancer: a request reaches a backend up
// one time in two, in turns of 3 s), then is back as before. 16 workers,
// 50 ms round trip.
//
// The measurement across the outage doubles the window at most; a lone
// probe refused in the flapping does not take what it measured whole
// (that made the outage the window, 9 per 5 minutes, in 6 seeds of 10).
func TestLearnedQuotaGrowsBackAfterUnevenOutage(t *testing.T) {
	ra1 := func() (time.Duration, bool) { return time.Second, true }
	bad, n := 0, 0
	for seed := uint64(1); seed <= 10; seed++ {
		fw := fixedWindow(10, time.Second, ra1)
		down := func(at time.Duration) simAnswer {
			if at >= 2*time.Minute && at < 7*time.Minute {
				return simAnswer{wait: time.Second, given: true}
			}
			if at >= 7*time.Minute && at < 7*time.Minute+30*time.Second && (at-7*time.Minute)/(3*time.Second)%2 == 1 {
				return simAnswer{wait: time.Second, given: true}
			}
			return fw(at)
		}
		m := &sim{t: t, lat: 50 * time.Millisecond, rng: rand.New(rand.NewPCG(seed, 2)), server: down}
		var maxW int64
		m.every = func(now time.Duration) {
			if now > 7*time.Minute && m.s.learn.quota != nil {
				maxW = max(maxW, m.s.learn.quota.w)
			}
		}
		end := 40 * time.Minute
		m.run(16, end)
		v := m.s.View(ht0.Add(end)).Learned
		last := m.count(end-10*time.Minute, end)
		n++
		if last < 2000 && maxW > int64(time.Minute) {
			bad++
			t.Errorf("seed %d: learned %d per %v at %v, %d accepted in the last 10 minutes (the server takes 6000); longest learned window after the outage %v",
				seed, v.Quota, v.Window, end, last, time.Duration(maxW))
		} else {
			t.Logf("seed %d: learned %d per %v, %d accepted in the last 10 minutes; longest window after the outage %v", seed, v.Quota, v.Window, last, time.Duration(maxW))
		}
	}
	t.Logf("%d of %d runs did not grow back", bad, n)
}
