package polite

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// slowDownStore fails every call, each after 300 ms (a Redis whose
// connection attempts time out), and counts them.
type slowDownStore struct {
	calls atomic.Int64
}

func (s *slowDownStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	s.calls.Add(1)
	select {
	case <-time.After(300 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	return errors.New("store: i/o timeout")
}

func (s *slowDownStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return errors.New("store: i/o timeout")
}

// With the Store down, 50 requests held by the fallback for a 60 s pause
// (a Retry-After the key learned during the outage) wait it out there, and
// do not call the Store at each of its retry instants (a first form of
// the wake that sees a Forget in another process did: 39 calls a second,
// all at once).
func TestFallbackWaitersLeaveDownStoreAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &slowDownStore{}
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
		c := &http.Client{Transport: &Transport{Base: base, Budget: &Budget{Store: st}, MaxAttempts: 1}}
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(2 * time.Second)
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
				if resp, err := c.Do(req); err == nil {
					resp.Body.Close()
				}
			})
		}
		time.Sleep(time.Second)
		before := st.calls.Load()
		time.Sleep(50 * time.Second) // still inside the pause
		during := st.calls.Load() - before
		wg.Wait()
		t.Logf("%d Store calls in 50 s of the pause", during)
		if during > 60 {
			t.Errorf("the Store down, 50 requests held for a pause: %d Store calls in 50 s of the pause (%.0f/s), one a second expected", during, float64(during)/50)
		}
	})
}
