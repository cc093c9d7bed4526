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

// A GET (it costs nothing) sent once nothing was in flight and the key
// was not paused waited for a retry's tokens: the retry of a large request
// (refused for its quota: the server counted more), held for its cost,
// claimed a turn by its first attempt's instant, which it shared with a
// request of the same bubble instant held by the key's pause; merged, the
// claim was no longer one for a cost only, and held the GET (about 370 ms,
// where the claims of the pause's end lapse in 79 ms at most). The two
// requests of that instant race at the pause's end: the GET waits only
// when the other goes first, so the scenario runs several times.
func TestRetryCostClaimLetsGETGo(t *testing.T) {
	const runs = 12
	waited := make([]time.Duration, 0, runs)
	for range runs {
		synctest.Test(t, func(t *testing.T) {
			b := newTokenBucket(60000, 1000, 1000)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if d, _ := strconv.Atoi(r.Header.Get("X-Delay-Ms")); d > 0 {
					time.Sleep(time.Duration(d) * time.Millisecond)
				}
				counted, _ := strconv.ParseFloat(r.Header.Get("X-Counted"), 64)
				b.answer(w, counted, false)
			})
			c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}
			send := func(declared, counted int64, delay int) int {
				ctx := t.Context()
				method := http.MethodGet
				if declared > 0 {
					ctx, method = polite.WithCost(ctx, polite.Cost{Tokens: declared}), http.MethodPost
				}
				req, _ := http.NewRequestWithContext(ctx, method, "http://llm.example/v1/chat/completions", nil)
				req.Header.Set("X-Counted", strconv.FormatInt(counted, 10))
				req.Header.Set("X-Delay-Ms", strconv.Itoa(delay))
				code, _ := statusOf(c, req)
				return code
			}
			send(1, 1, 0) // learns the token quota
			var wg sync.WaitGroup
			// A: 800 declared, 1500 counted: refused, its retry waits
			// for the tokens it lacked (the key pauses meanwhile).
			wg.Go(func() { send(800, 1500, 10) })
			synctest.Wait()
			// B, at the same instant: 1000, held for its cost, then by
			// the pause.
			bDone := make(chan struct{})
			wg.Go(func() { send(1000, 1000, 20); close(bDone) })
			<-bDone
			// B answered: nothing in flight, no pause. A GET now.
			time.Sleep(time.Millisecond)
			start := time.Now()
			send(0, 0, 0)
			waited = append(waited, time.Since(start))
			wg.Wait()
		})
	}
	for i, d := range waited {
		if d > 150*time.Millisecond {
			t.Errorf("run %d: a GET sent with nothing in flight and no pause waited %v; want no longer than the claims of the pause's end last (all: %v)", i, d, waited)
			break
		}
	}
}

// The same with one retry alone: R (800 tokens) is refused with
// Retry-After: 1 at 10ms. Z, a GET sent with it, is refused at 500ms with
// Retry-After: 1: the key pauses until about 1.5s, past R's own wait (1.01s). Q's answer, at
// 1.02s, says the tokens are spent and wakes R, which the pause holds (a
// claim by R's first attempt's instant, for the pause). At the pause's end
// R is held for its cost, its claim merged with the pause's, and a GET sent
// then waited until R's tokens have room (seconds) instead of going once
// the pause's claim lapsed (turnGrace).
func TestRetryCostClaimLetsGETGoAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTokenBucket(60000, 100, 1000)
		var (
			mu      sync.Mutex
			refused = map[string]bool{}
		)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name := r.Header.Get("X-Refuse-Once")
			mu.Lock()
			refuse := name != "" && !refused[name]
			refused[name] = refused[name] || refuse
			mu.Unlock()
			if d, _ := time.ParseDuration(r.Header.Get("X-Delay")); d > 0 && (refuse || name == "") {
				time.Sleep(d) // a refused attempt's, or a request's that is never refused
			}
			if refuse {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			counted, _ := strconv.ParseFloat(r.Header.Get("X-Counted"), 64)
			b.answer(w, counted, r.Header.Get("X-Drain") != "")
		})
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}}
		send := func(declared int64, hdr ...string) int {
			ctx := t.Context()
			method := http.MethodGet
			if declared > 0 {
				ctx, method = polite.WithCost(ctx, polite.Cost{Tokens: declared}), http.MethodPost
			}
			req, _ := http.NewRequestWithContext(ctx, method, "http://llm.example/v1/chat/completions", nil)
			req.Header.Set("X-Counted", strconv.FormatInt(declared, 10))
			for i := 0; i+1 < len(hdr); i += 2 {
				req.Header.Set(hdr[i], hdr[i+1])
			}
			code, _ := statusOf(c, req)
			return code
		}
		send(1) // learns the token quota: about 1000 left, 100 a second
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { send(150, "X-Drain", "1", "X-Delay", "1020ms") }) // Q
		synctest.Wait()
		wg.Go(func() { send(0, "X-Refuse-Once", "Z", "X-Delay", "500ms") }) // Z
		synctest.Wait()
		wg.Go(func() { send(800, "X-Refuse-Once", "R", "X-Delay", "10ms") }) // R
		time.Sleep(time.Until(start.Add(1800 * time.Millisecond)))           // past the pause (1.5s + at most 10%)
		sent := time.Now()
		send(0)
		if d := time.Since(sent); d > 100*time.Millisecond {
			t.Errorf("a GET sent after the pause waited %v; want at once (it costs nothing)", d)
		}
		wg.Wait()
	})
}
