package polite_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A pause another process learned, which held this process's request
// through the Store, was not kept in this process's fallback: when the
// Store failed next, the fallback knew no pause and the request was sent
// 2 s into a Retry-After: 30. It is kept there as a release keeps its
// own.
func TestPauseFromOtherProcessSurvivesStoreOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				w.Header().Set("Retry-After", "30")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		st := newBytesStore()
		base := &ratelimittest.Transport{Handler: h}
		a := &http.Client{Transport: &polite.Transport{Base: base, Budget: &polite.Budget{Store: st}, MaxAttempts: 1}}
		b := &http.Client{Transport: &polite.Transport{Base: base, Budget: &polite.Budget{Store: st}, MaxAttempts: 1}}
		if code, _ := get(t, a, "http://api.test/"); code != http.StatusTooManyRequests {
			t.Fatalf("first request: %d, want the 429", code)
		}
		try := func() error {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := b.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := try(); !errors.Is(err, polite.ErrWaitTooLong) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the other process's request through the Store: %v, want held by the pause", err)
		}
		st.failing.Store(true)
		if err := try(); err == nil || n.Load() != 1 {
			t.Errorf("with the Store failing, 2s into a Retry-After: 30 another process learned: %v, %d requests sent; want it held, 1 sent", err, n.Load())
		}
	})
}
