package polite

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A request held by a pause while the Store failed looks at the Store
// again once another request finds it answering, and waits on the key's
// state there from then on: Budget.Forget in another process, with the
// Store back, wakes it. It waited on the fallback until the pause's end,
// the whole forgotten minute.
func TestFallbackWaiterSeesForgetElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &downStore{}
		a := &Budget{Store: st}
		o := &Budget{Store: st} // another process
		var n atomic.Int32
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			code := 200
			if n.Add(1) == 1 {
				h.Set("Retry-After", "60")
				code = 429
			}
			return &http.Response{StatusCode: code, Header: h, Body: http.NoBody, Request: r}, nil
		})
		c := &http.Client{Transport: &Transport{Base: base, Budget: a, MaxAttempts: 1}}
		st.failing.Store(true) // a blip
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		done := make(chan time.Time, 1)
		go func() {
			resp, err := c.Get("http://api.test/")
			if err == nil {
				resp.Body.Close()
			}
			done <- time.Now()
		}()
		time.Sleep(100 * time.Millisecond)
		st.failing.Store(false) // back
		time.Sleep(2 * time.Second)
		// A request of this process to another key, which the Store
		// answers, carries the pause learned during the blip into the
		// Store (see carryUncarried).
		if resp, err := c.Get("http://other.test/"); err == nil {
			resp.Body.Close()
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		var paused bool
		st.m.Update(t.Context(), "http://api.test", func(s *KeyState) {
			pu, _ := s.c.Paused(time.Now())
			paused = pu.After(time.Now().Add(50 * time.Second))
		})
		if !paused {
			t.Fatal("the pause was not carried into the Store")
		}
		o.Forget("http://api.test") // clears the key in the Store
		t0 := time.Now()
		at := <-done
		if d := at.Sub(t0); d > 2*time.Second {
			t.Errorf("Store back and the key forgotten by another process: the held request still waited %v after the Forget", d.Round(time.Second))
		}
	})
}
