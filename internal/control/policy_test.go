package control

import (
	"math/rand/v2"
	"testing"
	"time"
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
