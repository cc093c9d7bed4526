package polite_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// growStatusWriter records the status a handler writes.
type growStatusWriter struct {
	http.ResponseWriter
	code int
}

func (w *growStatusWriter) WriteHeader(c int) { w.code = c; w.ResponseWriter.WriteHeader(c) }

// A retry counted short (Ask.Grow 1) whose grown room would pass MaxWait
// asks again at once for its cost alone, and may be granted then, before
// any wait: its first try is held only for the grown room. The Transport
// then reported an EventWait with Wait 0 and no Reason (spent.main() of no
// wait at all), where a request granted at its first try reports none,
// and EventWait documents "a request waited for its budget ... Reason
// why". Logged, it read wait=0s reason="".
//
// The scene: a request of 10,000 tokens (1,000 of them its prompt, the
// scale's share) is refused with 19,500 of 60,000 left (1,000 a second):
// its plan waits 0.5 s for room for twice its cost, and its refusal's body
// takes 0.6 s to drain. Its retry asks at 0.6 s: room for its cost as the
// raised scale holds it (13,750), not for twice that before 7.4 s, past
// MaxWait (5 s).
func TestGrownRetryGrantedAtOnceReportsNoWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTokenBucket(60000, 1000, 19500)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counted, _ := strconv.ParseFloat(r.Header.Get("X-Counted"), 64)
			sw := &growStatusWriter{ResponseWriter: w}
			b.answer(sw, counted, false)
			if sw.code == http.StatusTooManyRequests {
				w.(http.Flusher).Flush()
				time.Sleep(600 * time.Millisecond)
				w.Write([]byte("slow"))
			}
		})
		var (
			mu     sync.Mutex
			events []polite.Event
		)
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxWait: 5 * time.Second,
			OnEvent: func(e polite.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }}}
		ctx := polite.WithCost(t.Context(), polite.Cost{Tokens: 10000, InputTokens: 1000})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/chat/completions", nil)
		req.Header.Set("X-Counted", "20000")
		if code, err := statusOf(c, req); err != nil || code != http.StatusOK {
			t.Fatalf("status %d, error %v; want 200", code, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, e := range events {
			if e.Kind == polite.EventWait && (e.Wait <= 0 || e.Reason == "") {
				t.Errorf("attempt %d: EventWait with Wait %v, Reason %q: the request did not wait", e.Attempt, e.Wait, e.Reason)
			}
		}
	})
}
