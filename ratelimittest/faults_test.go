package ratelimittest_test

import (
	"maps"
	"net/http"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

func TestMalformed(t *testing.T) {
	tests := []struct {
		dialect        ratelimittest.Dialect
		first, refusal http.Header
	}{
		{
			dialect: ratelimittest.IETF,
			first: http.Header{
				"Ratelimit-Policy": {`default;q=2;w=60`},
				"Ratelimit":        {`default;r=-1;t=35`},
			},
			refusal: http.Header{
				"Ratelimit-Policy": {`default;q=2;w=60`},
				"Ratelimit":        {`default;r=-1;t=35`},
				"Retry-After":      {"35"},
			},
		},
		{
			dialect: ratelimittest.Draft06,
			first: http.Header{
				"Ratelimit-Limit":     {"-2"},
				"Ratelimit-Remaining": {"NaN"},
				"Ratelimit-Reset":     {"1e3"},
				"Ratelimit-Policy":    {"-2;w=0"},
			},
		},
		{
			dialect: ratelimittest.Draft07,
			first: http.Header{
				"Ratelimit":        {"limit=-2, remaining=NaN, reset=1e3"},
				"Ratelimit-Policy": {"-2;w=0"},
			},
		},
		{
			dialect: ratelimittest.XRateLimitEpoch,
			first: http.Header{
				"X-Ratelimit-Limit":     {"-2"},
				"X-Ratelimit-Remaining": {"NaN"},
				"X-Ratelimit-Reset":     {"1e3"},
			},
		},
		{
			dialect: ratelimittest.XRateLimitDate,
			first: http.Header{
				"X-Ratelimit-Limit":     {"-2"},
				"X-Ratelimit-Remaining": {"NaN"},
				"X-Ratelimit-Reset":     {"1e3"},
			},
		},
		{
			dialect: ratelimittest.GitHub,
			first: http.Header{
				"X-Ratelimit-Limit":     {"-2"},
				"X-Ratelimit-Remaining": {"NaN"},
				"X-Ratelimit-Used":      {"-1"},
				"X-Ratelimit-Reset":     {"1e3"},
				"X-Ratelimit-Resource":  {"core"},
			},
		},
		{
			dialect: ratelimittest.OpenAI,
			first: http.Header{
				"X-Ratelimit-Limit-Requests":     {"-2"},
				"X-Ratelimit-Remaining-Requests": {"NaN"},
				"X-Ratelimit-Reset-Requests":     {"1d"},
			},
		},
		{
			dialect: ratelimittest.RetryAfterOnly,
			first:   http.Header{},
			refusal: http.Header{"Retry-After": {"soon"}},
		},
	}
	for _, tt := range tests {
		t.Run(string(tt.dialect), func(t *testing.T) {
			resps := threeResponses(t, ratelimittest.Config{Dialect: tt.dialect, Policies: twoPerMinute, Malformed: true})
			if !equalFields(resps[0].Header, tt.first) {
				t.Errorf("first response: %v, want %v", fields(resps[0].Header), tt.first)
			}
			if got := resps[2].StatusCode; got != http.StatusTooManyRequests {
				t.Errorf("third response: status %d, want 429: malformed fields must still be enforced", got)
			}
			if tt.refusal != nil && !equalFields(resps[2].Header, tt.refusal) {
				t.Errorf("refusal: %v, want %v", fields(resps[2].Header), tt.refusal)
			}
		})
	}
}

func TestRetryAfterFault(t *testing.T) {
	for _, d := range []ratelimittest.Dialect{ratelimittest.IETF, ratelimittest.GitHub, ratelimittest.Bare429} {
		t.Run(string(d), func(t *testing.T) {
			resps := threeResponses(t, ratelimittest.Config{
				Dialect:    d,
				Policies:   twoPerMinute,
				RetryAfter: 1000000 * time.Second,
			})
			if got := resps[0].Header.Get("Retry-After"); got != "" {
				t.Errorf("admitted response: Retry-After %q, want none", got)
			}
			if got, want := resps[2].Header.Get("Retry-After"), "1000000"; got != want {
				t.Errorf("refusal: Retry-After %q, want %q", got, want)
			}
		})
	}
}

func TestRetryAfterZero(t *testing.T) {
	dialects := []ratelimittest.Dialect{ratelimittest.IETF, ratelimittest.XRateLimitDate, ratelimittest.HTTPRate,
		ratelimittest.GitHub, ratelimittest.RetryAfterOnly, ratelimittest.Bare429}
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			resps := threeResponses(t, ratelimittest.Config{
				Dialect:        d,
				Policies:       twoPerMinute,
				RetryAfterZero: true,
				RetryAfter:     time.Hour, // overridden
			})
			if got := resps[0].Header.Get("Retry-After"); got != "" {
				t.Errorf("admitted response: Retry-After %q, want none", got)
			}
			if got := resps[2].Header.Values("Retry-After"); !reflect.DeepEqual(got, []string{"0"}) {
				t.Errorf("refusal: Retry-After %q, want [0]", got)
			}
		})
	}
}

func TestNoRetryAfter(t *testing.T) {
	for _, d := range []ratelimittest.Dialect{ratelimittest.IETF, ratelimittest.XRateLimitEpoch, ratelimittest.XRateLimitDate, ratelimittest.HTTPRate, ratelimittest.RetryAfterOnly} {
		t.Run(string(d), func(t *testing.T) {
			resps := threeResponses(t, ratelimittest.Config{Dialect: d, Policies: twoPerMinute, RetryAfter: -1})
			if resps[2].StatusCode != http.StatusTooManyRequests {
				t.Fatalf("third response: status %d, want 429", resps[2].StatusCode)
			}
			if got, ok := resps[2].Header["Retry-After"]; ok {
				t.Errorf("refusal: Retry-After %q, want none", got)
			}
		})
	}
}

func TestInflate(t *testing.T) {
	resps := threeResponses(t, ratelimittest.Config{Policies: twoPerMinute, Inflate: 10})
	tests := []struct {
		status            int
		policy, rateLimit string
	}{
		{http.StatusOK, `"default";q=20;w=60`, `"default";r=19;t=35`},
		{http.StatusOK, `"default";q=20;w=60`, `"default";r=18;t=35`},
		{http.StatusTooManyRequests, `"default";q=20;w=60`, `"default";r=18;t=35`},
	}
	for i, tt := range tests {
		resp := resps[i]
		got := []any{resp.StatusCode, resp.Header.Get("RateLimit-Policy"), resp.Header.Get("RateLimit")}
		if want := []any{tt.status, tt.policy, tt.rateLimit}; !reflect.DeepEqual(got, want) {
			t.Errorf("response %d: %v, want %v", i, got, want)
		}
	}
}

func TestAge(t *testing.T) {
	resps := threeResponses(t, ratelimittest.Config{Policies: twoPerMinute, Age: 29500 * time.Millisecond})
	for i, resp := range resps {
		if got, want := resp.Header.Get("Age"), "30"; got != want {
			t.Errorf("response %d (%d): Age %q, want %q", i, resp.StatusCode, got, want)
		}
	}
}

func TestMaintenance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies:    twoPerMinute,
			Maintenance: ratelimittest.Window{Start: 10 * time.Second, End: 20500 * time.Millisecond},
		})
		c := client(h)
		start := time.Now()
		tests := []struct {
			at                           time.Duration
			status                       int
			date, retryAfter, rateLimits string
		}{
			{0, http.StatusOK, "Sat, 01 Jan 2000 00:00:00 GMT", "", `"default";r=1;t=60`},
			{10 * time.Second, http.StatusServiceUnavailable, "Sat, 01 Jan 2000 00:00:10 GMT", "Sat, 01 Jan 2000 00:00:21 GMT", ""},
			{20 * time.Second, http.StatusServiceUnavailable, "Sat, 01 Jan 2000 00:00:20 GMT", "Sat, 01 Jan 2000 00:00:21 GMT", ""},
			{20500 * time.Millisecond, http.StatusOK, "Sat, 01 Jan 2000 00:00:20 GMT", "", `"default";r=0;t=40`},
		}
		for _, tt := range tests {
			sleepUntil(start, tt.at)
			resp, _ := send(t, c, "")
			got := []any{resp.StatusCode, resp.Header.Get("Date"), resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit")}
			if want := []any{tt.status, tt.date, tt.retryAfter, tt.rateLimits}; !reflect.DeepEqual(got, want) {
				t.Errorf("at %v: %v, want %v", tt.at, got, want)
			}
		}
		s := h.Stats()
		if want := map[int]int{200: 2, 503: 2}; s.Requests != 4 || s.Admitted != 2 || s.Refused != 0 || !maps.Equal(s.Status, want) {
			t.Errorf("Stats = %+v, want 4 requests, 2 admitted, none refused, Status %v", s, want)
		}
	})
}

func TestMaintenanceUTC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := client(ratelimittest.NewHandler(ratelimittest.Config{
			UTCDates:    true,
			Maintenance: ratelimittest.Window{End: 10 * time.Second},
		}))
		resp, _ := send(t, c, "")
		got := []string{resp.Header.Get("Retry-After"), resp.Header.Get("Date")}
		if want := []string{"Sat, 01 Jan 2000 00:00:10 UTC", "Sat, 01 Jan 2000 00:00:00 GMT"}; !reflect.DeepEqual(got, want) {
			t.Errorf("Retry-After, Date = %q, want %q", got, want)
		}
	})
}

func TestProblem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := client(ratelimittest.NewHandler(ratelimittest.Config{
			Problem: true,
			Policies: []ratelimittest.Policy{
				{Name: "burst", Quota: 1, Window: time.Second},
				{Name: "hourly", Quota: 100, Window: time.Hour},
				{Name: "daily", Quota: 1, Window: 24 * time.Hour},
			},
		}))
		if resp, body := send(t, c, ""); resp.StatusCode != http.StatusOK || body != "ok" {
			t.Errorf("first response %d %q, want 200 \"ok\"", resp.StatusCode, body)
		}
		resp, body := send(t, c, "")
		want := `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Quota Exceeded","status":429,"violated-policies":["burst","daily"]}` + "\n"
		if resp.StatusCode != http.StatusTooManyRequests || body != want {
			t.Errorf("refusal %d %s, want 429 %s", resp.StatusCode, body, want)
		}
		if got, want := resp.Header.Get("Content-Type"), "application/problem+json"; got != want {
			t.Errorf("refusal Content-Type %q, want %q", got, want)
		}
		if got, want := resp.Header.Get("Retry-After"), "86400"; got != want {
			t.Errorf("refusal Retry-After %q, want %q", got, want)
		}
	})
}

func TestRefuseStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{Policies: twoPerMinute, RefuseStatus: http.StatusServiceUnavailable})
		c := client(h)
		var got []int
		for range 3 {
			resp, _ := send(t, c, "")
			got = append(got, resp.StatusCode)
		}
		if want := []int{200, 200, 503}; !reflect.DeepEqual(got, want) {
			t.Errorf("statuses %v, want %v", got, want)
		}
		if s := h.Stats(); s.Refused != 1 || s.Status[503] != 1 {
			t.Errorf("Refused, Status[503] = %d, %d, want 1, 1", s.Refused, s.Status[503])
		}
	})
}
