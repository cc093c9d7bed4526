package polite

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// A pause this process learns while the Store fails is carried and kept,
// though it ends before a pause copied from the Store earlier, which
// another process has since cleared (Budget.Forget): the fallback's state,
// paused to the copy's end, hid it, nothing was carried, and the key was
// granted within the server's 10 minutes once the Store was back, and
// again once it failed again.
func TestOwnPauseCarriedUnderCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		a := &Budget{Store: st}
		o := &Budget{Store: st} // another process
		a.init()
		o.init()
		k := originKey("http", "api.test")
		t0 := time.Now()
		var gC lease // in flight, granted by the Store
		if _, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &gC); !ok {
			t.Fatal("C held")
		}
		// Another process learns an hour's pause.
		st.Update(t.Context(), k.m.String(), func(s *KeyState) {
			s.c.PauseUntil(t0, &a.cfg, t0.Add(time.Hour), control.ReasonRetryAfter)
		})
		time.Sleep(time.Second)
		var g lease
		if _, ok, _, _ := a.acquire(t.Context(), k, time.Now(), control.Ask{}, &g); ok {
			t.Fatal("granted in the Store's pause")
		} // copied into the fallback
		time.Sleep(time.Second)
		o.Forget("http://api.test")
		time.Sleep(time.Second)
		st.failing.Store(true)
		// C's answer, after the Forget: Retry-After 600, the Store down.
		t3 := time.Now()
		a.release(t.Context(), k, &gC, t3, &control.Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
			Refusal: control.Refusal{Wait: 10 * time.Minute, Given: true, Reason: control.ReasonRetryAfter, MaxWait: time.Hour}})
		time.Sleep(2 * time.Second)
		st.failing.Store(false)
		now := time.Now()
		g = lease{}
		if _, ok, _, _ := a.acquire(t.Context(), k, now, control.Ask{}, &g); ok {
			t.Errorf("Store back: granted %v after a Retry-After of 10m learned while the Store failed (not carried)", now.Sub(t3))
			a.release(t.Context(), k, &g, now, &control.Outcome{First: true, Bytes: -1, Served: true})
		}
		time.Sleep(time.Second)
		st.failing.Store(true)
		now = time.Now()
		g = lease{}
		if _, ok, _, _ := a.acquire(t.Context(), k, now, control.Ask{}, &g); ok {
			t.Errorf("Store down again: the fallback granted %v after a Retry-After of 10m it learned itself", now.Sub(t3))
		}
	})
}
