package polite_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A pause beyond MaxPause written into a shared Store (by a hostile or
// broken process) is cut to 24 hours by the Budget before each request
// asks (Bound, DESIGN.md §3), so that the next request's WaitError says
// 24h. Inspect and RetryAt read the stored state as it was, unbounded:
// RetryAt, documented as the end of the key's pause "at most 24 hours",
// said 400 days, and so did Inspect's PauseUntil.
func TestRetryAtBoundsStoredPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		st := newBytesStore()
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}, MaxAttempts: 1}
		c := &http.Client{Transport: tr}
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		s, ok := tr.Inspect("http://api.test", time.Now())
		if !ok || s.PauseUntil.IsZero() {
			t.Fatalf("no pause after the 429: %+v", s)
		}

		// A hostile process moves the stored pause 400 days ahead. The
		// pause is stored relative to the state's first use (born),
		// which follows the version byte and the generation.
		st.mu.Lock()
		b := st.states["http://api.test"]
		_, k := binary.Uvarint(b[1:])
		born, _ := binary.Varint(b[1+k:])
		d := s.PauseUntil.UnixNano() - born
		old := binary.AppendUvarint(nil, uint64(d)<<1+1)
		if n := bytes.Count(b, old); n != 1 {
			st.mu.Unlock()
			t.Fatalf("the pause's varint occurs %d times, want 1", n)
		}
		far := d + int64(400*24*time.Hour)
		bad := bytes.Replace(b, old, binary.AppendUvarint(nil, uint64(far)<<1+1), 1)
		var ks polite.KeyState
		if err := ks.UnmarshalBinary(bad); err != nil {
			st.mu.Unlock()
			t.Skipf("UnmarshalBinary rejects it: %v", err)
		}
		st.states["http://api.test"] = bad
		st.mu.Unlock()

		now := time.Now()
		at, _ := tr.RetryAt(resp)
		s, _ = tr.Inspect("http://api.test", now)

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		_, err = c.Do(req)
		var we *polite.WaitError
		if !errors.As(err, &we) {
			t.Fatalf("next request: %v, want a WaitError", err)
		}
		t.Logf("next request's WaitError.Until: now+%v", we.Until.Sub(now))
		if d := at.Sub(now); d > 24*time.Hour+time.Minute {
			t.Errorf("RetryAt = now+%v, documented as at most 24 hours; the next request's WaitError says now+%v", d, we.Until.Sub(now))
		}
		if d := s.PauseUntil.Sub(now); d > 24*time.Hour+time.Minute {
			t.Errorf("Inspect PauseUntil = now+%v; the Transport holds the key now+%v", d, we.Until.Sub(now))
		}
	})
}
