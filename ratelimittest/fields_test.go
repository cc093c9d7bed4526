package ratelimittest_test

import (
	"net/http"
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
