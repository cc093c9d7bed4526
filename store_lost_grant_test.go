package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A Store that went back to older data (a failover that lost the last
// write, as redisstore's doc allows of Redis) holds a key's state from
// before a request's grant. That request's answer, a bare 429 after 32
// acceptances (a server that states nothing), is released onto it: the
// state the Budget leaves must still be one the Store can read back. It
// was not: KeyState.MarshalBinary wrote a form UnmarshalBinary rejects
// (the shed mark took the lease's sequence number, past the state's), and
// a Store that returns the decoding error, as bytesStore and the package's
// own example do, failed every later Update of the key: every request to
// it reported the Store down and sent every key of the Budget to memory,
// until the state's expiry.
func TestStoreLostGrantReleaseReadsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const key = "http://api.test"
		st := newBytesStore()
		var (
			n       int
			granted = make(chan struct{})
			answer  = make(chan struct{})
		)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host != "api.test" {
				return
			}
			n++
			if n == 41 {
				close(granted)
				<-answer
				w.WriteHeader(http.StatusTooManyRequests) // bare: no Retry-After, no fields
			}
		})
		ev := &events{}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}, MaxAttempts: 1, OnEvent: ev.on}
		c := &http.Client{Transport: tr}
		for range 40 {
			if code, _ := get(t, c, key+"/"); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			time.Sleep(20 * time.Millisecond)
		}
		before := append([]byte(nil), st.states[key]...) // what a replica holds before the next grant
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := c.Get(key + "/")
			if err == nil {
				resp.Body.Close()
			}
		}()
		<-granted
		st.mu.Lock()
		st.states[key] = before // the failover: the grant's write is lost
		st.mu.Unlock()
		close(answer)
		<-done

		var ks polite.KeyState
		if err := ks.UnmarshalBinary(st.states[key]); err != nil {
			t.Errorf("the state the Budget left in the Store (%d bytes) does not read back: %v", len(st.states[key]), err)
		}
		fails := 0
		for range 3 {
			time.Sleep(5 * time.Second)
			before := st.updates.Load()
			get(t, c, key+"/")
			if st.updates.Load() > before {
				var ks polite.KeyState
				if ks.UnmarshalBinary(st.states[key]) != nil {
					fails++
				}
			}
		}
		if d := ev.of(polite.EventStoreDown); len(d) != 0 || fails != 0 {
			t.Errorf("%d EventStoreDown (%v), the key's state still unreadable after %d of 3 requests; want none: the Store answers", len(d), d, fails)
		}
	})
}
