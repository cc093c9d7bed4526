package polite_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Every dialect that states a limit shows it in Inspect, whether or not it
// states the window too.
func TestInspectShowsEveryDialectsLimit(t *testing.T) {
	tests := []struct {
		dialect ratelimittest.Dialect
		window  time.Duration // as Inspect shows it; 0 when the dialect does not state it
	}{
		{ratelimittest.IETF, time.Minute},
		{ratelimittest.Draft06, time.Minute},
		{ratelimittest.Draft07, time.Minute},
		{ratelimittest.XRateLimitEpoch, 0},
		{ratelimittest.XRateLimitDelta, 0},
		{ratelimittest.XRateLimitDate, 0},
		{ratelimittest.GitHub, 0},
		{ratelimittest.OpenAI, 0},
		{ratelimittest.HTTPRate, 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.dialect), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Dialect:  tt.dialect,
					Policies: []ratelimittest.Policy{{Quota: 500, Window: time.Minute}},
				})
				c, tr := politeOver(h)
				get(t, c, "http://api.test/")
				st, ok := tr.Inspect("http://api.test", time.Now())
				if !ok || len(st.Policies) != 1 {
					t.Fatalf("Inspect = %+v, %v; want one policy", st, ok)
				}
				p := st.Policies[0]
				if p.Quota != 500 || p.Window != tt.window || p.Remaining != 499 || p.Unit != "requests" {
					t.Errorf("%s: policy %+v, want Quota 500, Window %v, Remaining 499, Unit requests", tt.dialect, p, tt.window)
				}
			})
		})
	}
}

// A limit stated without its window is shown, caps r, and does not pace by
// itself: the live quota still does.
func TestLimitWithoutWindowDoesNotPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("x-ratelimit-limit-requests", "3")
			w.Header().Set("x-ratelimit-remaining-requests", "100") // above the limit: not trusted
			w.Header().Set("x-ratelimit-reset-requests", "20s")
		})
		c, tr := politeOver(h)
		start := time.Now()
		for range 3 {
			get(t, c, "http://api.test/")
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("3 requests took %v, want no wait", d)
		}
		st, _ := tr.Inspect("http://api.test", time.Now())
		if p := st.Policies[0]; p.Quota != 3 || p.Window != 0 || p.Remaining != 3 {
			t.Errorf("policy %+v, want Quota 3, no Window, Remaining capped at 3", p)
		}
	})
}

func TestStateJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 500e6, time.FixedZone("CET", 3600))
	tests := []struct {
		name string
		in   polite.State
		want string
	}{
		{"fresh", polite.State{Key: "https://api.example", RetriesLeft: 2}, `{"key":"https://api.example","in_flight":0,"probing":false,"retries_left":2}`},
		{"paused", polite.State{
			Key: "https://api.example", At: at.Add(-5 * time.Second), InFlight: 1, PauseUntil: at, PauseReason: polite.ReasonRetryAfter, Probing: true,
			Policies: []polite.PolicyState{
				{Name: "default", Unit: "requests", Quota: 100, Window: 90 * time.Second, Remaining: 0, ResetAt: at, Source: "server"},
				{Unit: "requests", Quota: -1, Remaining: -1, Source: "server"},
			},
			Learned:              &polite.PolicyState{Unit: "requests", Quota: 7, Window: 1500 * time.Millisecond, Remaining: -1, Source: "refusals"},
			HintsDistrustedUntil: at,
		}, `{"key":"https://api.example","at":"2026-01-02T14:04:00.5Z","in_flight":1,"pause_until":"2026-01-02T14:04:05.5Z","pause_reason":"retry-after","probing":true,` +
			`"policies":[{"name":"default","unit":"requests","quota":100,"window_s":90,"remaining":0,"reset_at":"2026-01-02T14:04:05.5Z","source":"server"},` +
			`{"unit":"requests","source":"server"}],` +
			`"learned":{"unit":"requests","quota":7,"window_s":1.5,"source":"refusals"},"hints_distrusted_until":"2026-01-02T14:04:05.5Z","retries_left":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []any{tt.in, &tt.in} {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != tt.want {
					t.Errorf("json.Marshal(%T) =\n%s\nwant\n%s", v, b, tt.want)
				}
			}
		})
	}
}

// A live State marshals without nanosecond windows or year-one instants.
func TestInspectJSONOfALiveKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Quota: 1, Window: 2 * time.Second}},
		})
		c, tr := politeOver(h)
		get(t, c, "http://api.test/")
		st, _ := tr.Inspect("http://api.test", time.Now())
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.Contains(s, "0001-01-01") || strings.Contains(s, "2000000000") || !strings.Contains(s, `"window_s":2`) {
			t.Errorf("Inspect JSON = %s, want window_s 2 and no zero instant", s)
		}
	})
}

// TestInspectFallbackHidesCustomKey checks that a custom key paused while
// the Store answered, then inspected while it fails (from the fallback,
// whose copy of the pause had no mark of a custom key), is shown by its
// fingerprint: it was shown verbatim, first any key, then (after the
// first fix) a key shaped like an origin, which Inspect took for one.
func TestInspectFallbackHidesCustomKey(t *testing.T) {
	for _, secret := range []string{"Bearer sk-live-5ecr3t", "acct://sk-live-5ecr3t-7d0b2c"} {
		synctest.Test(t, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "30")
				w.WriteHeader(http.StatusTooManyRequests)
			})
			store := newBytesStore()
			tr := &polite.Transport{
				Base:        &ratelimittest.Transport{Handler: h},
				Key:         func(r *http.Request) string { return r.Header.Get("Authorization") },
				MaxAttempts: 1,
				Budget:      &polite.Budget{Store: store},
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			req.Header.Set("Authorization", secret)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()

			store.failing.Store(true)
			st, ok := tr.Inspect(secret, time.Now())
			js, _ := json.Marshal(st)
			if !ok {
				t.Fatal("not found")
			}
			if strings.Contains(string(js), "sk-live") {
				t.Errorf("Inspect shows the custom key %q verbatim: %s", secret, js)
			}
		})
	}
}

// TestInspectRecreatedEntryHidesCustomKey checks that a custom key whose
// entry was dropped (MaxKeys) while a request was in flight, and made anew
// by that request's answer without the mark of a custom key, is shown by
// its fingerprint: it was shown verbatim.
func TestInspectRecreatedEntryHidesCustomKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "Bearer sk-live-A" {
				<-release
			}
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		tr := &polite.Transport{
			Base:        &ratelimittest.Transport{Handler: h},
			Key:         func(r *http.Request) string { return r.Header.Get("Authorization") },
			MaxAttempts: 1,
			Budget:      &polite.Budget{MaxKeys: 1},
		}
		do := func(auth string) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			req.Header.Set("Authorization", auth)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		done := make(chan struct{})
		go func() { do("Bearer sk-live-A"); close(done) }()
		synctest.Wait()        // A is in flight
		do("Bearer sk-live-B") // evicts A's entry (MaxKeys 1)
		close(release)
		<-done
		st, ok := tr.Inspect("Bearer sk-live-A", time.Now())
		js, _ := json.Marshal(st)
		if ok && strings.Contains(string(js), "sk-live") {
			t.Errorf("Inspect shows the custom key verbatim: %s", js)
		}
	})
}

// A custom key in the form of an origin ("acct://<secret>") whose state
// was forgotten while a request was in flight is still shown by its
// fingerprint: the answer makes the state anew, marked custom as its
// lease was. It was made without the mark, and Inspect, finding the key
// in normal form, printed it as an origin: the secret.
func TestCustomKeyHiddenAfterForgetInFlight(t *testing.T) {
	const secret = "acct://sk-live-5ecr3t-7d0b2c"
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		b := &polite.Budget{}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b, MaxAttempts: 1,
			Key: func(r *http.Request) string { return r.Header.Get("X-Account") }}
		done := make(chan struct{})
		go func() {
			defer close(done)
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			req.Header.Set("X-Account", secret)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait() // in flight
		if st, ok := b.Inspect(secret, time.Now()); !ok || st.Key == secret {
			t.Fatalf("before Forget: Inspect = %q, %v; want a fingerprint", st.Key, ok)
		}
		b.Forget(secret)
		close(release)
		<-done
		st, ok := b.Inspect(secret, time.Now())
		js, _ := json.Marshal(st)
		if !ok {
			t.Fatal("Inspect: no state")
		}
		if strings.Contains(string(js), "sk-live") {
			t.Errorf("Inspect output holds the custom key verbatim: %s", js)
		}
	})
}

// refuseOnce answers the first request with a 429 and Retry-After: 60, and
// every later one with a 200.
func refuseOnce() http.Handler {
	n := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
	})
}

// Inspect reports what b knows of key at now: asking about a later
// instant changes nothing. Before, asking at an instant past the key's
// idle expiry forgot the key, a live pause with it, and the next request
// went at once.
func TestInspectLaterForgetsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, tr := politeOver(refuseOnce())
		tr.MaxAttempts = 1
		status, _ := get(t, c, "http://api.test/")
		if status != http.StatusTooManyRequests {
			t.Fatalf("status %d, want 429", status)
		}
		now := time.Now()
		before, ok := tr.Inspect("http://api.test", now)
		if !ok || !before.PauseUntil.After(now) {
			t.Fatalf("Inspect = %+v, %v; want a pause", before, ok)
		}
		// What will the key look like in two hours?
		tr.Inspect("http://api.test", now.Add(2*time.Hour))
		after, ok := tr.Inspect("http://api.test", now)
		if !ok || !after.PauseUntil.Equal(before.PauseUntil) {
			t.Errorf("after Inspect at now+2h, Inspect at now = %+v, %v; want the pause until %v kept", after, ok, before.PauseUntil)
		}
		start := time.Now()
		get(t, c, "http://api.test/")
		if waited := time.Since(start); waited < 59*time.Second {
			t.Errorf("the request after the 429 waited %v, want the Retry-After pause (~60s): Inspect forgot it", waited)
		}
	})
}

// A key idle since its one request is gone at any later instant, however
// far: before, Inspect at an instant past 2262, which time.Time.UnixNano
// cannot hold, found it live again.
func TestInspectFarFutureIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, tr := politeOver(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		get(t, c, "http://api.test/")
		for _, year := range []int{2200, 2300, 9999} {
			at := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
			if st, ok := tr.Inspect("http://api.test", at); ok {
				t.Errorf("Inspect in %d = %+v, found; want it gone, idle since 2000", year, st)
			}
		}
	})
}
