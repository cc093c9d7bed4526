package polite

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// Inspect finds the Store failing and a request is held by the fallback
// for an hour's pause copied from the Store. The next Inspect finds the
// Store answering: the requests the fallback holds are woken as when a
// request finds it so, and a Forget in another process reaches them.
// Marked answering by Inspect alone, no request woke them, and the held
// request waited out the forgotten hour.
func TestInspectRecoveryWakesFallbackWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		a := &Budget{Store: st}
		o := &Budget{Store: st}
		a.init()
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &Transport{Base: base, Budget: a, MaxAttempts: 1, MaxWait: 2 * time.Hour}
		c := &http.Client{Transport: tr}
		k := originKey("http", "api.test")
		t0 := time.Now()
		st.Update(t.Context(), k.m.String(), func(s *KeyState) {
			s.c.PauseUntil(t0, &a.cfg, t0.Add(time.Hour), control.ReasonRetryAfter)
		})
		var g lease
		if _, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &g); ok {
			t.Fatal("granted inside the Store's pause")
		}
		st.failing.Store(true)
		tr.Inspect("http://api.test", time.Now()) // finds it failing: down < 0
		done := make(chan time.Time, 1)
		go func() {
			resp, err := c.Get("http://api.test/") // held by the fallback
			if err == nil {
				resp.Body.Close()
			}
			done <- time.Now()
		}()
		time.Sleep(3 * time.Second)
		st.failing.Store(false)
		tr.Inspect("http://api.test", time.Now())                 // finds it answering
		if resp, err := c.Get("http://other.test/"); err == nil { // a request finds the Store answering
			resp.Body.Close()
		}
		time.Sleep(time.Second)
		o.Forget("http://api.test")
		t1 := time.Now()
		select {
		case at := <-done:
			t.Logf("went %v after the Forget", at.Sub(t1))
		case <-time.After(10 * time.Minute):
			at := <-done
			t.Errorf("Store back (found by Inspect, then by a request) and the key forgotten elsewhere: the held request waited %v after the Forget", at.Sub(t1).Round(time.Second))
		}
	})
}
