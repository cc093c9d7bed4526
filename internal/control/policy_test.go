package control

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// TestStartLogNeverExceedsQuota starts requests whenever the log allows,
// at random instants, for quotas kept exactly and kept by slot: no span of
// w ever holds more than q starts, and a slot-kept quota loses at most a
// slot of pace.
func TestStartLogNeverExceedsQuota(t *testing.T) {
	for _, q := range []int64{1, 3, exactLog, exactLog + 1, 1000} {
		w := int64(10 * time.Second)
		var (
			l      startLog
			starts []int64
		)
		r := rand.New(rand.NewPCG(1, uint64(q)))
		now := instant(t0)
		end := now + 20*w
		for now < end {
			if d := l.wait(now, q, w); d > 0 {
				now += d
				continue
			}
			l.add(now, q, w, 1)
			starts = append(starts, now)
			now += r.Int64N(w / q / 2)
		}
		for i := range starts {
			n := 0
			for j := i; j < len(starts) && starts[j]-starts[i] < w; j++ {
				n++
			}
			if int64(n) > q {
				t.Fatalf("q=%d: %d starts within w of the start at %v", q, n, time.Duration(starts[i]-instant(t0)))
			}
		}
		// At full speed, 20 windows allow 20q starts; a slot of pace
		// per window is w/64 of it.
		if got, least := int64(len(starts)), 20*q*(logSlots-2)/logSlots; got < least {
			t.Errorf("q=%d: %d starts in 20 windows, want at least %d", q, got, least)
		}
		if l.len() > maxLogLen {
			t.Errorf("q=%d: log of %d entries, want at most %d", q, l.len(), maxLogLen)
		}
	}
}

// TestNinthPolicy: a key keeps 8 policies. Eight loose ones, live, and a
// ninth that binds, listed last on every answer: the ninth replaces one
// it makes redundant, and the next answers, stating all nine again, keep
// it (ignored, it let 800 starts a second through against 10 stated). A
// ninth that states the bound of a policy kept, or a looser one, is
// ignored: replaced, two policies of one bound would replace each other on
// every answer, their start logs lost.
func TestNinthPolicy(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	quotas := func(ninth parse.Quota) []parse.Quota {
		var qs []parse.Quota
		for k := range 8 {
			qs = append(qs, parse.Quota{Policy: fmt.Sprintf("p%d", k), Unit: "requests", Limit: 1000000, Remaining: 999999,
				Window: time.Duration(k+2) * time.Second, Reset: time.Second, Dialect: "ietf"})
		}
		return append(qs, ninth)
	}
	names := func(s *State) []string {
		var n []string
		for i := range s.policies {
			n = append(n, s.policies[i].name)
		}
		return n
	}
	for _, tt := range []struct {
		name  string
		ninth parse.Quota
		kept  bool
	}{
		{"tighter", parse.Quota{Policy: "a", Unit: "requests", Limit: 10, Remaining: 9, Window: time.Second, Reset: time.Second, Dialect: "ietf"}, true},
		{"same bound as p0", parse.Quota{Policy: "a", Unit: "requests", Limit: 1000000, Remaining: 999999, Window: 2 * time.Second, Reset: time.Second, Dialect: "ietf"}, false},
		{"looser", parse.Quota{Policy: "a", Unit: "requests", Limit: 2000000, Remaining: 999999, Window: 2 * time.Second, Reset: time.Second, Dialect: "ietf"}, false},
		{"another unit", parse.Quota{Policy: "a", Unit: "content-bytes", Limit: 10, Remaining: 9, Window: time.Second, Reset: time.Second, Dialect: "ietf"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s State
			cfg := Config{}
			now := t0
			for i := range 5 {
				var l Lease
				if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
					t.Fatalf("request %d held", i)
				}
				s.Release(now, &cfg, &l, &Outcome{First: true, Bytes: -1, Served: true, Quotas: quotas(tt.ninth)})
				now = now.Add(10 * time.Millisecond)
			}
			n := names(&s)
			if len(n) != maxPolicies || slices.Contains(n, "a") != tt.kept {
				t.Errorf("policies kept %v; want %d, the ninth kept: %v", n, maxPolicies, tt.kept)
			}
		})
	}
}
