package polite

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// The request that carries a pause learned while the Store failed also
// reads the Store, which no longer holds the hour's pause another process
// forgot: the copy of that hour is dropped from the fallback then, as
// TestForgetElsewhereDropsFallbackCopy requires. The carry's own copy was
// taken for another request's, the drop skipped, and once the Store failed
// again the fallback held the key for the forgotten hour rather than the
// 10 minutes the Store holds.
func TestCarryDropsForgottenCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		a := &Budget{Store: st}
		o := &Budget{Store: st} // another process
		a.init()
		o.init()
		k := originKey("http", "api.test")
		t0 := time.Now()
		var gC lease
		if _, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &gC); !ok {
			t.Fatal("C held")
		}
		st.Update(t.Context(), k.m.String(), func(s *KeyState) {
			s.c.PauseUntil(t0, &a.cfg, t0.Add(time.Hour), control.ReasonRetryAfter)
		})
		time.Sleep(time.Second)
		var g lease
		if _, ok, _, _ := a.acquire(t.Context(), k, time.Now(), control.Ask{}, &g); ok {
			t.Fatal("granted in the Store's pause")
		}
		time.Sleep(time.Second)
		o.Forget("http://api.test")
		time.Sleep(time.Second)
		st.failing.Store(true)
		t3 := time.Now()
		a.release(t.Context(), k, &gC, t3, &control.Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
			Refusal: control.Refusal{Wait: 10 * time.Minute, Given: true, Reason: control.ReasonRetryAfter, MaxWait: time.Hour}})
		time.Sleep(2 * time.Second)
		st.failing.Store(false)
		g = lease{}
		h, ok, _, _ := a.acquire(t.Context(), k, time.Now(), control.Ask{}, &g) // carries the 10 minutes
		if ok {
			t.Fatal("granted")
		}
		t.Logf("Store up: held until t3+%v", h.Until().Sub(t3).Round(time.Second))
		time.Sleep(time.Second)
		st.failing.Store(true)
		now := time.Now()
		g = lease{}
		h, ok, _, _ = a.acquire(t.Context(), k, now, control.Ask{}, &g)
		if ok {
			t.Fatal("granted")
		}
		if d := h.Until().Sub(t3); d > 11*time.Minute {
			t.Errorf("Store down again: the fallback holds the key until t3+%v, the hour another process forgot; the Store held t3+10m", d.Round(time.Second))
		}
	})
}
