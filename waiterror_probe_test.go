package polite_test

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A probe's retry whose wait was lengthened (DESIGN.md §6) counts MaxWait
// from that wait's planned end, and its *WaitError counts Delay from the
// same instant as Limit. Here the lone caller A's 11th request is the
// probe at each attempt; B, sent at 3 minutes, is accepted (ending the
// measurement) and keeps the Budget's one concurrency slot with a
// streaming body. A's last retry, refused at about +2m06s, is held with no
// end known until its limit, about +16m18s, and fails: a wait of MaxWait,
// as Until zero says. Before, Delay was counted from the refusal, and the
// error read "concurrency wait of 14m12s exceeds MaxWait (10m0s)" of a
// wait that was honoured for all of those 14m12s.
func TestWaitErrorAfterLengthenedWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		start := time.Now()
		var mu sync.Mutex
		n := 0
		pr, pw := io.Pipe()
		defer pw.Close()
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			n++
			i := n
			mu.Unlock()
			switch {
			case i <= 10:
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			case r.Header.Get("X-Stream") != "":
				// B: accepted, its body streams on.
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: pr, ContentLength: -1, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		b := &polite.Budget{MaxConcurrency: 1, Lease: 2 * time.Hour}
		var refusedAt []time.Time
		tr := &polite.Transport{Base: base, Budget: b, OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventRetry {
				mu.Lock()
				refusedAt = append(refusedAt, e.Time)
				mu.Unlock()
			}
		}}
		get := func(stream bool) (*http.Response, error) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			if stream {
				req.Header.Set("X-Stream", "1")
			}
			return tr.RoundTrip(req)
		}
		for range 10 {
			resp, err := get(false)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		var aErr error
		var aAt time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := get(false)
			if err == nil {
				resp.Body.Close()
			}
			aErr, aAt = err, time.Since(start)
		}()
		time.Sleep(3 * time.Minute)
		// B: the key's probe, accepted; its body keeps the one slot.
		resp, err := get(true)
		if err != nil {
			t.Fatalf("B: %v", err)
		}
		defer resp.Body.Close()
		<-done
		var we *polite.WaitError
		if !errors.As(aErr, &we) {
			t.Fatalf("A: %v at +%v; want a *WaitError", aErr, aAt)
		}
		t.Logf("A: %v at +%v: Delay %v, Limit %v, Until %v", we, aAt, we.Delay, we.Limit, we.Until)
		if we.Until.IsZero() && we.Delay != we.Limit {
			t.Errorf("WaitError with no end known (Until zero: \"the wait having lasted MaxWait\") has Delay %v but Limit %v: counted from different instants", we.Delay, we.Limit)
		}
	})
}
