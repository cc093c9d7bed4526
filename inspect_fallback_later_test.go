package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// With a Store, Inspect asked the fallback for the pause it learned while
// the Store failed through a lookup that removes an entry expired at the
// instant asked: asking about a later instant (now+2h, as
// TestInspectLaterForgetsNothing does for the in-memory store) forgot the
// fallback's pause, not yet carried to the Store, and the next request
// went at once instead of waiting out the Retry-After.
func TestInspectLaterKeepsFallbackPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, c, _ := refusedInOutage(t)
		time.Sleep(2 * time.Second) // the Store answers again

		now := time.Now()
		before, ok := tr.Inspect("http://api.test", now)
		if !ok || !before.PauseUntil.After(now) {
			t.Fatalf("Inspect = %+v, %v; want the pause carried from the fallback", before, ok)
		}
		tr.Inspect("http://api.test", now.Add(2*time.Hour)) // what will it look like later?
		after, ok := tr.Inspect("http://api.test", now)
		if !ok || !after.PauseUntil.Equal(before.PauseUntil) {
			t.Errorf("after Inspect at now+2h, Inspect at now = %+v, %v; want the pause until %v kept", after, ok, before.PauseUntil)
		}
		start := time.Now()
		r2, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		r2.Body.Close()
		if waited := time.Since(start); waited < 50*time.Second {
			t.Errorf("the request after the 429 waited %v, want the Retry-After pause (~58s): Inspect at a later instant forgot it", waited)
		}
	})
}

// refusedInOutage returns a Transport over a Store that fails while its
// first request is refused with a 429 and Retry-After: 60, and answers
// again once it returns, with a client over it and the 429.
func refusedInOutage(t *testing.T) (*polite.Transport, *http.Client, *http.Response) {
	t.Helper()
	st := newBytesStore()
	tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: refusedOnce("60")}, Budget: &polite.Budget{Store: st}, MaxAttempts: 1}
	c := &http.Client{Transport: tr}
	st.failing.Store(true)
	defer st.failing.Store(false)
	resp, err := c.Get("http://api.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("first answer %d, want the 429", resp.StatusCode)
	}
	return tr, c, resp
}
