package ratelimittest_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// The bubble's clock starts at 2000-01-01 00:00:00 UTC, Unix 946684800.
// The dialect tests send their requests 25s in, 35s before the end of a
// one-minute window, which ends at Unix 946684860.
const (
	dialectDate  = "Sat, 01 Jan 2000 00:00:25 GMT"
	dialectEpoch = "946684860"
)

// twoPerMinute is the policy of the dialect tests.
var twoPerMinute = []ratelimittest.Policy{{Quota: 2, Window: time.Minute}}

// threeResponses sends three requests to a Handler for cfg 25s after its
// creation and returns the responses: two admitted, one refused.
func threeResponses(t *testing.T, cfg ratelimittest.Config) []*http.Response {
	var resps []*http.Response
	synctest.Test(t, func(t *testing.T) {
		c := client(ratelimittest.NewHandler(cfg))
		time.Sleep(25 * time.Second)
		for range 3 {
			resp, _ := send(t, c, "")
			resps = append(resps, resp)
		}
	})
	return resps
}

func TestDialects(t *testing.T) {
	tests := []struct {
		dialect        ratelimittest.Dialect
		first, refusal http.Header // fields of the first response and of the refusal
	}{
		{
			dialect: ratelimittest.IETF,
			first: http.Header{
				"Ratelimit-Policy": {`"default";q=2;w=60`},
				"Ratelimit":        {`"default";r=1;t=35`},
			},
			refusal: http.Header{
				"Ratelimit-Policy": {`"default";q=2;w=60`},
				"Ratelimit":        {`"default";r=0;t=35`},
				"Retry-After":      {"35"},
			},
		},
		{
			dialect: ratelimittest.Draft06,
			first: http.Header{
				"Ratelimit-Limit":     {"2"},
				"Ratelimit-Remaining": {"1"},
				"Ratelimit-Reset":     {"35"},
				"Ratelimit-Policy":    {"2;w=60"},
			},
			refusal: http.Header{
				"Ratelimit-Limit":     {"2"},
				"Ratelimit-Remaining": {"0"},
				"Ratelimit-Reset":     {"35"},
				"Ratelimit-Policy":    {"2;w=60"},
				"Retry-After":         {"35"},
			},
		},
		{
			dialect: ratelimittest.Draft07,
			first: http.Header{
				"Ratelimit":        {"limit=2, remaining=1, reset=35"},
				"Ratelimit-Policy": {"2;w=60"},
			},
			refusal: http.Header{
				"Ratelimit":        {"limit=2, remaining=0, reset=35"},
				"Ratelimit-Policy": {"2;w=60"},
				"Retry-After":      {"35"},
			},
		},
		{
			dialect: ratelimittest.XRateLimitEpoch,
			first: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"1"},
				"X-Ratelimit-Reset":     {dialectEpoch},
			},
			refusal: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {dialectEpoch},
				"Retry-After":           {"35"},
			},
		},
		{
			dialect: ratelimittest.XRateLimitDelta,
			first: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"1"},
				"X-Ratelimit-Reset":     {"35"},
			},
			refusal: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"35"},
				"Retry-After":           {"35"},
			},
		},
		{
			dialect: ratelimittest.GitHub,
			first: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"1"},
				"X-Ratelimit-Used":      {"1"},
				"X-Ratelimit-Reset":     {dialectEpoch},
				"X-Ratelimit-Resource":  {"core"},
			},
			refusal: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Used":      {"2"},
				"X-Ratelimit-Reset":     {dialectEpoch},
				"X-Ratelimit-Resource":  {"core"},
			},
		},
		{
			dialect: ratelimittest.XRateLimitDate,
			first: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"1"},
				"X-Ratelimit-Reset":     {"Sat, 01 Jan 2000 00:01:00 GMT"},
			},
			refusal: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"Sat, 01 Jan 2000 00:01:00 GMT"},
				"Retry-After":           {"Sat, 01 Jan 2000 00:01:00 GMT"},
			},
		},
		{
			dialect: ratelimittest.HTTPRate,
			first: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"1"},
				"X-Ratelimit-Reset":     {dialectEpoch},
			},
			refusal: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {dialectEpoch},
				"Retry-After":           {"60"},
			},
		},
		{
			dialect: ratelimittest.OpenAI,
			first: http.Header{
				"X-Ratelimit-Limit-Requests":     {"2"},
				"X-Ratelimit-Remaining-Requests": {"1"},
				"X-Ratelimit-Reset-Requests":     {"35s"},
			},
			refusal: http.Header{
				"X-Ratelimit-Limit-Requests":     {"2"},
				"X-Ratelimit-Remaining-Requests": {"0"},
				"X-Ratelimit-Reset-Requests":     {"35s"},
				"Retry-After":                    {"35"},
			},
		},
		{
			dialect: ratelimittest.RetryAfterOnly,
			first:   http.Header{},
			refusal: http.Header{"Retry-After": {"35"}},
		},
		{
			dialect: ratelimittest.Bare429,
			first:   http.Header{},
			refusal: http.Header{},
		},
	}
	for _, tt := range tests {
		t.Run(string(tt.dialect), func(t *testing.T) {
			resps := threeResponses(t, ratelimittest.Config{Dialect: tt.dialect, Policies: twoPerMinute})
			first, refusal := resps[0], resps[2]
			if first.StatusCode != http.StatusOK || !equalFields(first.Header, tt.first) {
				t.Errorf("first response: %d %v, want 200 %v", first.StatusCode, fields(first.Header), tt.first)
			}
			if refusal.StatusCode != http.StatusTooManyRequests || !equalFields(refusal.Header, tt.refusal) {
				t.Errorf("refusal: %d %v, want 429 %v", refusal.StatusCode, fields(refusal.Header), tt.refusal)
			}
			for i, resp := range resps {
				if got := resp.Header.Get("Date"); got != dialectDate {
					t.Errorf("response %d: Date %q, want %q", i, got, dialectDate)
				}
			}
		})
	}
}

func TestDefaultDialectIsIETF(t *testing.T) {
	resps := threeResponses(t, ratelimittest.Config{Policies: twoPerMinute})
	if got, want := resps[0].Header.Get("RateLimit"), `"default";r=1;t=35`; got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
}

// TestDescribedPolicy checks which policy the single-policy dialects
// describe: the lowest remaining, then the longest reset.
func TestDescribedPolicy(t *testing.T) {
	tests := []struct {
		name     string
		policies []ratelimittest.Policy
		requests int
		want     http.Header // fields of the last response
	}{
		{
			name: "lowest remaining",
			policies: []ratelimittest.Policy{
				{Name: "burst", Quota: 2, Window: time.Second},
				{Name: "hourly", Quota: 10, Window: time.Hour},
			},
			requests: 1,
			want: http.Header{
				"X-Ratelimit-Limit":     {"2"},
				"X-Ratelimit-Remaining": {"1"},
				"X-Ratelimit-Reset":     {"1"},
			},
		},
		{
			name: "lowest remaining second",
			policies: []ratelimittest.Policy{
				{Name: "burst", Quota: 5, Window: time.Second},
				{Name: "hourly", Quota: 3, Window: time.Hour},
			},
			requests: 2,
			want: http.Header{
				"X-Ratelimit-Limit":     {"3"},
				"X-Ratelimit-Remaining": {"1"},
				"X-Ratelimit-Reset":     {"3600"},
			},
		},
		{
			name: "tie goes to the longest reset",
			policies: []ratelimittest.Policy{
				{Name: "a", Quota: 1, Window: 10 * time.Second},
				{Name: "b", Quota: 1, Window: time.Minute},
				{Name: "c", Quota: 1, Window: 30 * time.Second},
			},
			requests: 1,
			want: http.Header{
				"X-Ratelimit-Limit":     {"1"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"60"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := client(ratelimittest.NewHandler(ratelimittest.Config{
					Dialect:  ratelimittest.XRateLimitDelta,
					Policies: tt.policies,
				}))
				var resp *http.Response
				for range tt.requests {
					resp, _ = send(t, c, "")
				}
				if !equalFields(resp.Header, tt.want) {
					t.Errorf("fields %v, want %v", fields(resp.Header), tt.want)
				}
			})
		})
	}
}

func TestNoPolicies(t *testing.T) {
	for _, d := range []ratelimittest.Dialect{ratelimittest.IETF, ratelimittest.Draft06, ratelimittest.GitHub, ratelimittest.OpenAI} {
		t.Run(string(d), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				resp, body := send(t, client(ratelimittest.NewHandler(ratelimittest.Config{Dialect: d})), "")
				if resp.StatusCode != http.StatusOK || body != "ok" || !equalFields(resp.Header, http.Header{}) {
					t.Errorf("response %d %q %v, want 200 \"ok\" with no fields", resp.StatusCode, body, fields(resp.Header))
				}
			})
		})
	}
}

// TestResetRounding puts window ends half a second after whole seconds and
// reads the instants each epoch or date dialect sends. The windows of 2s
// start 500ms before the Handler, so the first ends at 1.5s (Unix
// 946684801.5) and the second at 3.5s.
func TestResetRounding(t *testing.T) {
	policies := []ratelimittest.Policy{{Quota: 2, Window: 2 * time.Second}}
	tests := []struct {
		name     string
		dialect  ratelimittest.Dialect
		rounding ratelimittest.Rounding
		policies []ratelimittest.Policy
		at       time.Duration // of the refusal, after two admissions at 0
		reset    string        // X-RateLimit-Reset of the refusal
		date     string
	}{
		// Reset minus Date is 2s for 1.5s to go: express-rate-limit.
		{"epoch up", ratelimittest.XRateLimitEpoch, ratelimittest.RoundUp, policies, 0, "946684802", "Sat, 01 Jan 2000 00:00:00 GMT"},
		// Reset equals Date: ulule/limiter on a refusal late in the window.
		{"epoch down", ratelimittest.XRateLimitEpoch, ratelimittest.RoundDown, policies, 1200 * time.Millisecond, "946684801", "Sat, 01 Jan 2000 00:00:01 GMT"},
		{"github down", ratelimittest.GitHub, ratelimittest.RoundDown, policies, 1200 * time.Millisecond, "946684801", "Sat, 01 Jan 2000 00:00:01 GMT"},
		{"date up", ratelimittest.XRateLimitDate, ratelimittest.RoundUp, policies, 1200 * time.Millisecond, "Sat, 01 Jan 2000 00:00:02 GMT", "Sat, 01 Jan 2000 00:00:01 GMT"},
		{"date down", ratelimittest.XRateLimitDate, ratelimittest.RoundDown, policies, 1200 * time.Millisecond, "Sat, 01 Jan 2000 00:00:01 GMT", "Sat, 01 Jan 2000 00:00:01 GMT"},
		// The end of the current window, not the effective one (3.5s).
		{"httprate down", ratelimittest.HTTPRate, ratelimittest.RoundDown, []ratelimittest.Policy{
			{Algorithm: ratelimittest.SlidingWindowRounded, Quota: 2, Window: 2 * time.Second},
		}, 1200 * time.Millisecond, "946684801", "Sat, 01 Jan 2000 00:00:01 GMT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := client(ratelimittest.NewHandler(ratelimittest.Config{
					Dialect:       tt.dialect,
					Policies:      tt.policies,
					Phase:         500 * time.Millisecond,
					ResetRounding: tt.rounding,
				}))
				send(t, c, "")
				send(t, c, "")
				time.Sleep(tt.at)
				resp, _ := send(t, c, "")
				got := []string{strconv.Itoa(resp.StatusCode), resp.Header.Get("X-RateLimit-Reset"), resp.Header.Get("Date")}
				if want := []string{"429", tt.reset, tt.date}; !slices.Equal(got, want) {
					t.Errorf("refusal at %v: status, X-RateLimit-Reset, Date = %q, want %q", tt.at, got, want)
				}
			})
		})
	}
}

// TestHTTPRate checks go-chi/httprate's shape over a sliding-window counter:
// the reset is always the end of the current window and Retry-After the
// window, though the previous window still weighs.
func TestHTTPRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := client(ratelimittest.NewHandler(ratelimittest.Config{
			Dialect:  ratelimittest.HTTPRate,
			Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.SlidingWindowRounded, Quota: 4, Window: 2 * time.Second}},
		}))
		start := time.Now()
		tests := []struct {
			at                      time.Duration
			status                  int
			remaining, reset, retry string
		}{
			{0, 200, "3", "946684802", ""},
			{0, 200, "2", "946684802", ""},
			{0, 200, "1", "946684802", ""},
			{0, 200, "0", "946684802", ""},
			{0, 429, "0", "946684802", "2"},
			// At the stated reset, prev=4 still weighs 4.
			{2 * time.Second, 429, "0", "946684804", "2"},
			// At 2.25s it weighs round(3.5) = 4; at 2.26s, round(3.48) = 3.
			{2250 * time.Millisecond, 429, "0", "946684804", "2"},
			{2260 * time.Millisecond, 200, "0", "946684804", ""},
		}
		for i, tt := range tests {
			sleepUntil(start, tt.at)
			resp, _ := send(t, c, "")
			got := []any{resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"), resp.Header.Get("X-RateLimit-Reset"), resp.Header.Get("Retry-After")}
			if want := []any{tt.status, tt.remaining, tt.reset, tt.retry}; !reflect.DeepEqual(got, want) {
				t.Errorf("request %d at %v: %v, want %v", i, tt.at, got, want)
			}
		}
	})
}

func TestUTCDates(t *testing.T) {
	resps := threeResponses(t, ratelimittest.Config{Dialect: ratelimittest.XRateLimitDate, Policies: twoPerMinute, UTCDates: true})
	refusal := resps[2]
	want := http.Header{
		"X-Ratelimit-Limit":     {"2"},
		"X-Ratelimit-Remaining": {"0"},
		"X-Ratelimit-Reset":     {"Sat, 01 Jan 2000 00:01:00 UTC"},
		"Retry-After":           {"Sat, 01 Jan 2000 00:01:00 UTC"},
	}
	if !equalFields(refusal.Header, want) {
		t.Errorf("refusal: %v, want %v", fields(refusal.Header), want)
	}
	if got := refusal.Header.Get("Date"); got != dialectDate {
		t.Errorf("Date %q, want %q: the Date header keeps GMT", got, dialectDate)
	}
}

// ietfRemaining matches the remaining quota and reset of an IETF RateLimit field.
var ietfRemaining = regexp.MustCompile(`r=(-?\d+)(?:;t=(\d+))?`)

// ietfRemainingReset returns r and t of the RateLimit field of h; t is 0
// when absent.
func ietfRemainingReset(t *testing.T, h http.Header) (r, reset int64) {
	t.Helper()
	m := ietfRemaining.FindStringSubmatch(h.Get("RateLimit"))
	if m == nil {
		t.Fatalf("no RateLimit in %v", h)
	}
	r, _ = strconv.ParseInt(m[1], 10, 64)
	reset, _ = strconv.ParseInt(m[2], 10, 64)
	return r, reset
}

// TestHonestFields checks the IETF fields after random traffic: the
// remaining r can all be spent at once and not one more; one more is still
// refused a second before the reset t and admitted at t (t is the effective
// window, rounded up); a refusal's request is still refused a second before
// its Retry-After and admitted at it.
func TestHonestFields(t *testing.T) {
	for pi, p := range []ratelimittest.Policy{
		{Algorithm: ratelimittest.FixedWindow, Quota: 5, Window: 3 * time.Second},
		{Algorithm: ratelimittest.FixedWindowFromFirst, Quota: 5, Window: 3 * time.Second},
		{Algorithm: ratelimittest.SlidingLog, Quota: 5, Window: 3 * time.Second},
		{Algorithm: ratelimittest.SlidingWindow, Quota: 5, Window: 3 * time.Second},
		{Algorithm: ratelimittest.SlidingWindowRounded, Quota: 5, Window: 3 * time.Second},
		{Algorithm: ratelimittest.TokenBucket, Quota: 5, Window: 3 * time.Second},
		{Algorithm: ratelimittest.LeakyBucket, Quota: 5, Window: 3 * time.Second, Burst: 3},
		{Algorithm: ratelimittest.LeakyBucket, Quota: 2, Window: time.Second, Burst: 0},
		{Algorithm: ratelimittest.LeakyBucket, Quota: 2, Window: time.Hour, Burst: 1},
	} {
		for seed := range 60 {
			name := fmt.Sprintf("%s/%d/%d", p.Algorithm, pi, seed)
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(seed), 7))
					cfg := ratelimittest.Config{Policies: []ratelimittest.Policy{p}}
					if seed%2 == 1 {
						cfg.Phase = time.Duration(rng.IntN(3000)) * time.Millisecond
					}
					h := ratelimittest.NewHandler(cfg)
					c := client(h)
					steps := rng.IntN(12)
					for range steps {
						time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
						send(t, c, "")
					}
					time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
					resp, _ := send(t, c, "")
					r, tt := ietfRemainingReset(t, resp.Header)
					if resp.StatusCode != 200 {
						ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
						if err != nil {
							t.Fatalf("refusal without Retry-After: %v", resp.Header)
						}
						if ra > 1 {
							time.Sleep(time.Duration(ra-1) * time.Second)
							if resp2, _ := send(t, c, ""); resp2.StatusCode == 200 {
								t.Fatalf("Retry-After %d but admitted after %ds", ra, ra-1)
							}
							time.Sleep(time.Second)
						} else {
							time.Sleep(time.Duration(ra) * time.Second)
						}
						if resp2, _ := send(t, c, ""); resp2.StatusCode != 200 {
							t.Fatalf("Retry-After %d but refused then (%s)", ra, resp2.Header.Get("RateLimit"))
						}
						return
					}
					start := time.Now()
					for i := range r {
						if resp2, _ := send(t, c, ""); resp2.StatusCode != 200 {
							t.Fatalf("r=%d but request %d of them refused", r, i+1)
						}
					}
					if resp2, _ := send(t, c, ""); resp2.StatusCode == 200 {
						t.Fatalf("r=%d but %d admitted", r, r+1)
					}
					if tt > 1 {
						sleepUntil(start, time.Duration(tt-1)*time.Second)
						if resp2, _ := send(t, c, ""); resp2.StatusCode == 200 {
							t.Fatalf("t=%d but admitted at %ds", tt, tt-1)
						}
					}
					sleepUntil(start, time.Duration(tt)*time.Second)
					if resp2, _ := send(t, c, ""); resp2.StatusCode != 200 {
						t.Fatalf("t=%d but refused at %ds (%s)", tt, tt, resp2.Header.Get("RateLimit"))
					}
				})
			})
		}
	}
}

// TestSlidingWindowAgainstHTTPRate replays random traffic on the
// sliding-window counters and compares each answer with the formula of the
// docs computed in float64, as go-chi/httprate does, and the HTTPRate
// dialect's reset and Retry-After with that middleware's.
func TestSlidingWindowAgainstHTTPRate(t *testing.T) {
	for _, alg := range []ratelimittest.Algorithm{ratelimittest.SlidingWindow, ratelimittest.SlidingWindowRounded} {
		for seed := range 30 {
			t.Run(fmt.Sprintf("%s/%d", alg, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(seed), 17))
					const quota, window = 5, 2 * time.Second
					h := ratelimittest.NewHandler(ratelimittest.Config{Dialect: ratelimittest.HTTPRate, Policies: []ratelimittest.Policy{{Algorithm: alg, Quota: quota, Window: window}}})
					c := client(h)
					start := time.Now()
					counts := map[int64]int64{}
					for i := range 300 {
						time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
						now := time.Since(start)
						idx := int64(now / window)
						e := now - time.Duration(idx)*window
						prev, cur := counts[idx-1], counts[idx]
						x := float64(prev) * float64(window-e) / float64(window)
						var weighted int64
						if alg == ratelimittest.SlidingWindowRounded {
							weighted = int64(x + 0.5)
						} else {
							weighted = int64(x)
							if float64(weighted) < x {
								weighted++
							}
						}
						want := weighted+cur+1 <= quota
						resp, _ := send(t, c, "")
						got := resp.StatusCode == 200
						if got != want {
							t.Fatalf("request %d at %v: admitted %v, want %v (prev %d cur %d)", i, now, got, want, prev, cur)
						}
						if got {
							counts[idx]++
						}
						// httprate: reset is the end of the current window, epoch seconds
						wantReset := start.Add(time.Duration(idx+1) * window).Unix()
						if g := resp.Header.Get("X-RateLimit-Reset"); g != strconv.FormatInt(wantReset, 10) {
							t.Fatalf("X-RateLimit-Reset %s, want %d", g, wantReset)
						}
						if !got && resp.Header.Get("Retry-After") != "2" {
							t.Fatalf("Retry-After %q, want 2", resp.Header.Get("Retry-After"))
						}
					}
				})
			})
		}
	}
}
