package polite_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// When the requests in flight had reserved more than a cost quota's level
// (another client spent it while they were granted), WaitFor took
// Remaining, floored at 0, for what was available and reported the time to
// refill the cost alone (11.4 s), while the Transport held the request
// until the refill covered the reservations too (20.4 s).
func TestWaitForCountsReservedBeyondLevel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		n := 0
		r2in := make(chan struct{})
		r2out := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			i := n
			mu.Unlock()
			hd := w.Header()
			hd.Set("x-ratelimit-limit-tokens", "6000")
			switch i {
			case 1: // 3000 of 6000 left, whole in 30 s: 100 a second.
				hd.Set("x-ratelimit-remaining-tokens", "3000")
				hd.Set("x-ratelimit-reset-tokens", "30s")
			case 2: // R1: answered once R2 is sent; another client spent the quota.
				<-r2in
				hd.Set("x-ratelimit-remaining-tokens", "100")
				hd.Set("x-ratelimit-reset-tokens", "59s")
			case 3: // R2: in flight until the end.
				close(r2in)
				<-r2out
				hd.Set("x-ratelimit-remaining-tokens", "0")
				hd.Set("x-ratelimit-reset-tokens", "60s")
			default:
				hd.Set("x-ratelimit-remaining-tokens", "0")
				hd.Set("x-ratelimit-reset-tokens", "60s")
			}
		})
		c, tr := politeOver(h)
		send := func(tokens int64) {
			ctx := polite.WithCost(context.Background(), polite.Cost{Tokens: tokens})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/chat/completions", nil)
			if code, err := statusOf(c, req); code != http.StatusOK {
				t.Errorf("status %d, %v", code, err)
			}
		}
		send(100)
		var wg sync.WaitGroup
		wg.Go(func() { send(1000) }) // R1
		synctest.Wait()
		wg.Go(func() { send(1000) }) // R2
		synctest.Wait()              // R1 answered; R2 in flight, reserving 1000
		st, _ := tr.Inspect("http://llm.example", time.Now())
		for _, p := range st.Policies {
			t.Logf("%s: quota %d remaining %d reserved %d refill %.1f/s", p.Unit, p.Quota, p.Remaining, p.Reserved, p.Refill)
		}
		want, err := st.WaitFor(polite.Cost{Tokens: 1000})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		send(1000) // R3, with R2 still in flight
		took := time.Since(start)
		close(r2out)
		wg.Wait()
		t.Logf("WaitFor %v, waited %v", want, took)
		if d := took - want; d > time.Second || d < -time.Second {
			t.Errorf("WaitFor(1000 tokens) = %v, but the request, with nothing else changing, waited %v", want, took)
		}
	})
}
