package polite_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

func TestStuckRequestFreesItsSlotAtLeaseEnd(t *testing.T) {
	// The first request to a key probes, and its Base hangs for a minute
	// (a request that never ends, like one of a process that died). The
	// next request goes when the probe has held the key for the probe
	// timeout (3s for a key that never answered), well before the probe's
	// lease of 16s ends or it answers.
	synctest.Test(t, func(t *testing.T) {
		var (
			mu   sync.Mutex
			sent []time.Time
		)
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, time.Now())
			first := len(sent) == 1
			mu.Unlock()
			if first {
				time.Sleep(time.Minute)
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		c := &http.Client{Transport: &polite.Transport{Base: base, Budget: &polite.Budget{Lease: 16 * time.Second}}}
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { get(t, c, "http://api.test/") })
		synctest.Wait()
		get(t, c, "http://api.test/")
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("second request sent after %v, want when the stuck probe timed out (3s)", d)
		}
		wg.Wait()
		// The stuck request's late answer frees nothing twice.
		get(t, c, "http://api.test/")
		if n := len(sent); n != 3 {
			t.Errorf("%d requests sent, want 3", n)
		}
	})
}
