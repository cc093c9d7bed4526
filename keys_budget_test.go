package polite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

func TestSpellingsShareOneBudget(t *testing.T) {
	// Four spellings of one origin, 8 concurrent GETs against a server
	// allowing 3 per 2s: one budget, so none is refused.
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 3, Window: 2 * time.Second}},
			Latency:  5 * time.Millisecond,
		})
		c, tr := politeOver(h)
		urls := []string{"http://api.example/", "http://API.example/", "http://api.example:80/", "http://api.example./"}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if status, _ := get(t, c, urls[i%len(urls)]); status != http.StatusOK {
					t.Errorf("GET %s = %d, want 200", urls[i%len(urls)], status)
				}
			})
		}
		wg.Wait()
		if s := h.Stats(); s.Refused != 0 {
			t.Errorf("%d refusals, want 0: the four spellings are one budget", s.Refused)
		}
		for _, u := range urls {
			st, ok := tr.Inspect(u, time.Now())
			if !ok || st.Key != "http://api.example" {
				t.Errorf("Inspect(%q) = key %q (found %v), want http://api.example", u, st.Key, ok)
			}
		}
	})
}

// leakyStore fails with an error that names the key.
type leakyStore struct{ *bytesStore }

func (s leakyStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	return fmt.Errorf("update %q: %w", key, errStoreDown)
}

func TestSecretKeyNeverPrinted(t *testing.T) {
	// Key returns the Authorization header, as per-account pacing does.
	// The secret appears in no log line, event, error or Inspect output.
	const secret = "sk-live-5ecr3t-7d0b2c"
	synctest.Test(t, func(t *testing.T) {
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n++
			w.Header().Set("RateLimit-Policy", `"api";q=10;w=60`)
			switch n {
			case 1:
				w.Header().Set("RateLimit", `"api";r=0;t=2`) // the next one waits
			case 2:
				w.Header().Set("Retry-After", "1") // retried
				w.WriteHeader(http.StatusTooManyRequests)
			case 3:
				w.Header().Set("RateLimit", `"api";r=5;t=60`)
			default:
				w.Header().Set("Retry-After", "100000") // given up; then a WaitError
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		var (
			logs bytes.Buffer
			mu   sync.Mutex
			evs  []string
		)
		onEvent := func(e polite.Event) {
			e.Request = nil // the caller's own request: it carries the header, by design
			s := fmt.Sprintf("%+v", e)
			if e.Err != nil {
				s += " " + e.Err.Error()
			}
			mu.Lock()
			evs = append(evs, s)
			mu.Unlock()
		}
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		key := func(r *http.Request) string { return r.Header.Get("Authorization") }
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Key: key, OnEvent: onEvent, Logger: logger}
		down := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Key: key, OnEvent: onEvent, Logger: logger,
			Budget: &polite.Budget{Store: leakyStore{newBytesStore()}}}

		var errs []string
		do := func(rt http.RoundTripper) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			req.Header.Set("Authorization", "Bearer "+secret)
			resp, err := (&http.Client{Transport: rt}).Do(req)
			if err != nil {
				errs = append(errs, err.Error())
				var we *polite.WaitError
				if errors.As(err, &we) {
					errs = append(errs, we.Key)
				}
				return
			}
			resp.Body.Close()
		}
		for range 4 {
			do(tr)
		}
		do(down)

		st, ok := tr.Inspect("Bearer "+secret, time.Now())
		if !ok {
			t.Fatal("Inspect of the custom key: not found")
		}
		js, _ := json.Marshal(st)
		got := map[string]string{"logs": logs.String(), "events": strings.Join(evs, "\n"), "errors": strings.Join(errs, "\n"), "Inspect": string(js)}
		for where, text := range got {
			if text == "" {
				t.Errorf("no %s to look in", where)
			}
			if strings.Contains(text, secret) {
				t.Errorf("%s contain the secret:\n%s", where, text)
			}
		}
		for _, kind := range []string{"wait", "retry", "give-up", "observe", "store-down"} {
			if !strings.Contains(logs.String(), "polite: "+kind) {
				t.Errorf("no %s in the logs, want every kind covered:\n%s", kind, logs.String())
			}
		}
		if len(errs) == 0 {
			t.Error("no WaitError, want one covered")
		}
		if !strings.HasPrefix(st.Key, "key-") {
			t.Errorf("State.Key = %q, want a fingerprint", st.Key)
		}
	})
}

// A trailing ideographic (or full-width) full stop is a trailing dot once
// mapped, as IDNA and net/http map it ("api.example。" dials
// "api.example."): one origin, one budget. The dot was trimmed before the
// mapping, so "http://api.example。/" got the key "http://api.example." and
// doubled the client's rate.
func TestTrailingIdeographicDotSharesBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 3, Window: 2 * time.Second}},
			Latency:  5 * time.Millisecond,
		})
		c, tr := politeOver(h)
		urls := []string{"http://api.example/", "http://api.example./", "http://api.example。/", "http://api.example．/"}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				get(t, c, urls[i%len(urls)])
			})
		}
		wg.Wait()
		if s := h.Stats(); s.Refused != 0 {
			t.Errorf("%d refusals, want 0: the spellings are one origin", s.Refused)
		}
		for _, u := range urls {
			if st, ok := tr.Inspect(u, time.Now()); !ok || st.Key != "http://api.example" {
				t.Errorf("Inspect(%q) = key %q (found %v), want http://api.example", u, st.Key, ok)
			}
		}
	})
}

// TestCustomKeyShapedLikeURL checks that Inspect and Forget take a custom
// key shaped like a URL ("https://api.test/tenant-a", from Transport.Key)
// as itself when the Budget holds a state for it, and as the origin it
// names only when not: Inspect reported the origin's state, and Forget
// cleared the origin's pause too, with or without a Store.
func TestCustomKeyShapedLikeURL(t *testing.T) {
	for _, store := range []string{"memory", "store"} {
		t.Run(store, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Retry-After", "3600")
					w.WriteHeader(http.StatusTooManyRequests)
				})
				b := &polite.Budget{}
				if store == "store" {
					b.Store = storeOnly{&polite.MemoryStore{}}
				}
				tenant := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b, MaxAttempts: 1,
					Key: func(r *http.Request) string { return "https://api.test" + r.URL.Path }}
				plain := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b, MaxAttempts: 1}
				get(t, &http.Client{Transport: tenant}, "https://api.test/tenant-a")
				time.Sleep(time.Minute)
				get(t, &http.Client{Transport: plain}, "https://api.test/other")
				tenantUntil, originUntil := time.Now().Add(time.Hour-time.Minute), time.Now().Add(time.Hour)
				if st, ok := b.Inspect("https://api.test/tenant-a", time.Now()); !ok || !st.PauseUntil.Equal(tenantUntil) || !strings.HasPrefix(st.Key, "key-") {
					t.Errorf("Inspect(tenant key) = key %q, paused until %v (found %v); want its fingerprint, until %v", st.Key, st.PauseUntil, ok, tenantUntil)
				}
				if st, ok := b.Inspect("https://api.test/other", time.Now()); !ok || !st.PauseUntil.Equal(originUntil) || st.Key != "https://api.test" {
					t.Errorf("Inspect(a URL no custom key is) = key %q, paused until %v (found %v); want the origin's, until %v", st.Key, st.PauseUntil, ok, originUntil)
				}
				b.Forget("https://api.test/tenant-a")
				if st, ok := b.Inspect("https://api.test", time.Now()); !ok || !st.PauseUntil.Equal(originUntil) {
					t.Errorf("Forget(tenant key) forgot the origin's pause: paused until %v (found %v)", st.PauseUntil, ok)
				}
				if store == "store" {
					return // a Store keeps a forgotten key's fresh state: the key stays itself
				}
				if st, _ := b.Inspect("https://api.test/tenant-a", time.Now()); st.Key != "https://api.test" {
					t.Errorf("after Forget, Inspect(tenant key) = key %q, want the origin's state (the tenant's is gone)", st.Key)
				}
				b.Forget("https://api.test/tenant-a") // no state of its own now: the origin
				if st, ok := b.Inspect("https://api.test", time.Now()); ok && !st.PauseUntil.IsZero() {
					t.Errorf("Forget(a URL) left the origin paused until %v", st.PauseUntil)
				}
			})
		})
	}
}
