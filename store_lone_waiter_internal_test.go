package polite

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// A lone request held by the fallback, during an outage, for an hour's
// pause copied from the Store: the Store comes back and another process
// forgets the key there (Budget.Forget). No other request of this process
// runs, yet the held request, asking the Store again at its retry instant,
// finds the key forgotten. Woken only by another request finding the
// Store answering, it waited out the forgotten hour.
func TestLoneFallbackWaiterSeesForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		a := &Budget{Store: st}
		o := &Budget{Store: st} // another process
		a.init()
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		c := &http.Client{Transport: &Transport{Base: base, Budget: a, MaxAttempts: 1, MaxWait: 2 * time.Hour}}
		k := originKey("http", "api.test")
		// Another process learns an hour's Retry-After; this process
		// copies it into its fallback.
		t0 := time.Now()
		st.Update(t.Context(), k.m.String(), func(s *KeyState) {
			s.c.PauseUntil(t0, &a.cfg, t0.Add(time.Hour), control.ReasonRetryAfter)
		})
		var g lease
		if _, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &g); ok {
			t.Fatal("granted inside the Store's pause")
		}
		st.failing.Store(true)
		done := make(chan time.Time, 1)
		go func() {
			resp, err := c.Get("http://api.test/") // held by the fallback
			if err == nil {
				resp.Body.Close()
			} else {
				t.Log(err)
			}
			done <- time.Now()
		}()
		time.Sleep(3 * time.Second)
		st.failing.Store(false) // back
		time.Sleep(3 * time.Second)
		o.Forget("http://api.test")
		t1 := time.Now()
		select {
		case at := <-done:
			t.Logf("went %v after the Forget", at.Sub(t1))
		case <-time.After(10 * time.Minute):
			t.Errorf("Store back and the key forgotten by another process: the lone held request still waits 10m after the Forget (held to the copied hour)")
			at := <-done
			t.Logf("went %v after the Forget", at.Sub(t1).Round(time.Second))
		}
	})
}
