package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A 503 of a key that states its quotas is the service unavailable (an
// outage, a load balancer shedding load): it pauses the key, but the
// learner neither distrusts the stated quotas nor measures a quota from
// it. Read as a 429 was, a 503 while the quota said requests were left
// distrusted the hints and paced by a learned quota (0.32 of ideal
// behind a load balancer shedding 1 request in 20); and an outage of 20s
// was measured as a window of 35s, which paced a fixed window of 20 per
// 4s at 20 per 24-32s once the server was back. A 429 is read as before.
func TestUnavailableTeachesNothing(t *testing.T) {
	stated := func(r int64) []parse.Quota {
		return []parse.Quota{{Limit: 20, Remaining: r, Reset: 4 * time.Second}} // legacy: no window stated
	}
	refusal := func(status int) Outcome {
		return Outcome{Bytes: -1, Refused: true, Unavailable: status == 503, Rand: 1,
			Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}}
	}
	for _, status := range []int{503, 429} {
		// A refusal while the quota says 19 are left.
		d := &hostile{t: t}
		l, _, _ := d.acq(0, Ask{}, Cost{})
		d.rel(0, &l, Outcome{First: true, Bytes: -1, Quotas: stated(19)})
		l, h, ok := d.acq(500*time.Millisecond, Ask{}, Cost{})
		if !ok {
			t.Fatalf("%d: held %+v", status, h)
		}
		d.rel(500*time.Millisecond, &l, refusal(status))
		v := d.s.View(ht0.Add(time.Second))
		if v.PauseUntil.IsZero() {
			t.Errorf("%d while 19 were left: the key is not paused", status)
		}
		if distrusts := !v.DistrustUntil.IsZero(); distrusts != (status == 429) {
			t.Errorf("%d while 19 were left: hints distrusted until %v, want distrust only after a 429", status, v.DistrustUntil)
		}

		// A quota spent, then refusals for 20s, then the server back.
		d = &hostile{t: t}
		now := time.Duration(0)
		for i := range 20 {
			l, h, ok := d.acq(now, Ask{}, Cost{})
			if !ok {
				t.Fatalf("%d: request %d held %+v", status, i, h)
			}
			d.rel(now+5*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: stated(int64(19 - i))})
		}
		for now = 4 * time.Second; now < 24*time.Second; {
			l, h, ok := d.acq(now, Ask{}, Cost{})
			if !ok {
				now = max(h.Until().Sub(ht0), now+time.Millisecond)
				continue
			}
			d.rel(now+5*time.Millisecond, &l, refusal(status))
		}
		for n := 0; n < 3; {
			l, h, ok := d.acq(now, Ask{}, Cost{})
			if !ok {
				now = max(h.Until().Sub(ht0), now+time.Millisecond)
				continue
			}
			d.rel(now+5*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: stated(int64(19 - n))})
			n++
		}
		if learns := d.s.learn.pending || d.s.learn.quota != nil; learns != (status == 429) {
			t.Errorf("%d for 20s, then accepted: a quota measured or learned: %v, want one only from 429s", status, learns)
		}
	}
}
