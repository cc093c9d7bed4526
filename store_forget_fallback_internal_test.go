package polite

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// Budget.Forget in another process clears the key's pause in the shared
// Store, and this process's next request through the Store starts fresh:
// the copy of that pause its fallback took is dropped with it. Kept, it
// held the key again for the rest of the hour once the Store failed.
func TestForgetElsewhereDropsFallbackCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		a := &Budget{Store: st}
		o := &Budget{Store: st} // another process
		a.init()
		o.init()
		k := originKey("http", "api.test")
		t0 := time.Now()
		if err := st.Update(t.Context(), k.m.String(), func(s *KeyState) {
			s.c.PauseUntil(t0, &a.cfg, t0.Add(time.Hour), control.ReasonRetryAfter)
		}); err != nil {
			t.Fatal(err)
		}
		var g lease
		if _, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &g); ok {
			t.Fatal("granted inside the Store's pause")
		} // the pause is copied into a's fallback
		time.Sleep(time.Second)
		o.Forget("http://api.test")
		now := time.Now()
		g = lease{}
		if h, ok, _, _ := a.acquire(t.Context(), k, now, control.Ask{}, &g); !ok {
			t.Fatalf("after Forget elsewhere, held until %v", h.Until())
		}
		a.release(t.Context(), k, &g, now, &control.Outcome{First: true})
		time.Sleep(time.Second)
		st.failing.Store(true)
		now = time.Now()
		g = lease{}
		if h, ok, _, _ := a.acquire(t.Context(), k, now, control.Ask{}, &g); !ok {
			t.Errorf("pause forgotten by Budget.Forget (another process) and not in the Store any more: with the Store failing, the fallback holds the key %v more (%v)", h.Until().Sub(now).Round(time.Second), h.Reason)
		}
	})
}
