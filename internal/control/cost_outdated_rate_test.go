package control

import (
	"testing"
	"time"
)

// A tokens quota raised from 5000 to 10000 a minute (an account moved up
// a tier). The answer to b states the new limit first; the answer to a,
// granted before b, written before it and overtaken on the way, restates
// the old limit. The key keeps the latest limit, with its window and
// refill rate (DESIGN.md, "Answers out of order"), about 10000/60 = 167
// tokens a second. The old answer's remaining and reset, read against the
// new limit, made it (10000-3000-1)/24s = 292 a second, and it stayed (the
// highest rate is kept, and a refusal's own estimate, 167, is not below
// half of it): a request waiting for the tokens it lacked was sent well
// before they had refilled, and refused, for as long as the limit stayed.
func TestOutdatedAnswerKeepsLatestRefillRate(t *testing.T) {
	s, cfg, a, b, now := twoInFlight(t, tokensQuota(5000, 4900, 600*time.Millisecond), Cost{Tokens: 1000})
	now = now.Add(time.Second)
	// b: the new limit, 10000 a minute, 8000 left: whole in 12 s.
	s.Release(now, cfg, b, &Outcome{First: true, Served: true, Bytes: -1, Quotas: tokensQuota(10000, 8000, 12*time.Second)})
	var before float64
	for _, v := range s.View(now).Policies {
		if v.Unit == "tokens" {
			before = v.Refill
		}
	}
	now = now.Add(10 * time.Millisecond)
	// a: written before b's, the old limit (5000 a minute), 3000 left.
	s.Release(now, cfg, a, &Outcome{First: true, Served: true, Bytes: -1, Quotas: tokensQuota(5000, 3000, 24*time.Second)})
	for _, v := range s.View(now).Policies {
		if v.Unit != "tokens" {
			continue
		}
		t.Logf("refill %.1f/s after the latest answer, %.1f/s after the outdated one (quota %d)", before, v.Refill, v.Quota)
		if v.Refill > 10000.0/60*1.05 {
			t.Errorf("refill rate %.1f tokens/s after an outdated answer of the old limit; the latest limit (10000 a minute) refills at most %.1f/s", v.Refill, 10000.0/60)
		}
	}
	// The quota is then spent by c, which takes what the key thinks left
	// (an answer states 0 left, whole in 60 s): a request of 5000 tokens
	// must wait 30 s for them at 10000 a minute.
	now = now.Add(time.Second)
	var left int64
	for _, v := range s.View(now).Policies {
		if v.Unit == "tokens" {
			left = v.Remaining
		}
	}
	var c Lease
	c.SetCost(Cost{Tokens: left})
	if _, ok := s.Acquire(now, cfg, Ask{}, &c); !ok {
		t.Fatal("c held")
	}
	s.Release(now, cfg, &c, &Outcome{First: true, Served: true, Bytes: -1, Quotas: tokensQuota(10000, 0, time.Minute)})
	var d Lease
	d.SetCost(Cost{Tokens: 5000})
	h, ok := s.Acquire(now, cfg, Ask{}, &d)
	if ok {
		t.Fatal("a request of 5000 tokens granted with none left")
	}
	if w := h.Until().Sub(now); w < 29*time.Second {
		t.Errorf("a request of 5000 tokens with 0 left, refilling at 10000 a minute, held %v; want 30s (sent before its tokens refilled, the server refuses it)", w)
	}
}
