package polite

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// restraintAfterIdle runs, in a synctest bubble, one request to an
// origin whose first answer states policy and limit (RateLimit-Policy and
// RateLimit) and whose later answers state nothing, then, idle later, 16
// requests at once under Restraint{}. It returns the most of the 16 in
// flight at once, and what Inspect said of the origin before they went.
func restraintAfterIdle(t *testing.T, policy, limit string, idle time.Duration) (peak int, st State, known bool) {
	return restraintAfter(t, policy, limit, nil, func(*Transport, func(string)) { time.Sleep(idle) })
}

// restraintAfter is restraintAfterIdle with the Transport's Budget b (nil:
// its own) and between run in place of the idle time: get sends a request
// to the URL it is given.
func restraintAfter(t *testing.T, policy, limit string, b *Budget, between func(tr *Transport, get func(string))) (peak int, st State, known bool) {
	synctest.Test(t, func(t *testing.T) {
		var stated atomic.Bool
		stated.Store(true)
		var mu sync.Mutex
		in := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host != "origin.example" {
				return
			}
			mu.Lock()
			in++
			peak = max(peak, in)
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			if stated.Load() {
				w.Header().Set("RateLimit-Policy", policy)
				w.Header().Set("RateLimit", limit)
			}
			io.WriteString(w, "ok")
			mu.Lock()
			in--
			mu.Unlock()
		})
		tr := &Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: &Restraint{}, Budget: b}
		get := func(u string) {
			resp, err := tr.RoundTrip(robotsReq(t, t.Context(), u))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get("http://origin.example/") // the one answer that states a quota
		stated.Store(false)
		between(tr, get)
		st, known = tr.Inspect("http://origin.example", time.Now())
		mu.Lock()
		peak = 0
		mu.Unlock()
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() { get("http://origin.example/") })
		}
		wg.Wait()
	})
	return peak, st, known
}

// An origin stated a quota once, then stated nothing more; once the
// budget has forgotten the quota (idle for longer than IdleTTL), nothing
// paces the origin, and Restraint must hold it again rather than let
// every worker burst at once: lifted for good, it let 8 go at once.
func TestRestraintAfterQuotaForgotten(t *testing.T) {
	peak, st, known := restraintAfterIdle(t, `"default";q=1000;w=1`, `"default";r=999;t=1`, time.Hour)
	if known && len(st.Policies) > 0 {
		t.Fatalf("the budget still knows a quota: %+v", st)
	}
	if peak > 4 {
		t.Errorf("%d requests in flight at once to an origin with no quota known, want at most Restraint's 4", peak)
	}
}

// An origin states 100 per hour once. Twenty minutes later (past
// IdleTTL's 10 min, within the window) the budget still keeps the quota
// -- it keeps a state while a start it logged is within its window -- and
// paces by it. Read as forgotten once unused for IdleTTL, the origin was
// held under Restraint's 4 again; its lifting lasts as long as the
// longest window stated too.
func TestRestraintLiftedWhileBudgetKeepsQuota(t *testing.T) {
	peak, st, known := restraintAfterIdle(t, `"hour";q=100;w=3600`, `"hour";r=99;t=3600`, 20*time.Minute)
	if !known || len(st.Policies) == 0 {
		t.Fatalf("the budget forgot the quota: %+v", st)
	}
	if peak <= 4 {
		t.Errorf("the budget keeps the quota (%d policies) yet at most %d requests were in flight: Restraint's cap applied", len(st.Policies), peak)
	}
}

// A budget that forgot an origin's quota otherwise than by idle time
// (Budget.Forget, MaxKeys evicting the key) paced it by nothing, while
// Restraint stayed lifted on the Transport's memory of the quota: all 16
// requests went at once.
func TestRestraintAfterBudgetForgets(t *testing.T) {
	for _, tt := range []struct {
		name   string
		forget func(tr *Transport, get func(string))
	}{
		{"Budget.Forget", func(tr *Transport, get func(string)) { tr.Budget.Forget("http://origin.example") }},
		{"MaxKeys eviction", func(tr *Transport, get func(string)) { get("http://other.example/") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			peak, st, known := restraintAfter(t, `"default";q=1000;w=1`, `"default";r=999;t=1`, &Budget{MaxKeys: 1}, tt.forget)
			if known && len(st.Policies) > 0 {
				t.Fatalf("the budget still knows a quota: %+v", st)
			}
			if peak > 4 {
				t.Errorf("%d requests in flight at once to an origin whose budget knows no quota, want at most Restraint's 4", peak)
			}
		})
	}
}

// restraintStale: an origin's first answer states a live quota (hdr) and no
// RateLimit-Policy; every later answer states nothing. One worker keeps
// the origin in use (a request a second) for 30 minutes, far past the
// quota's t=1 and IdleTTL; then 16 workers send at once under
// Restraint{} (4). It returns the most of those in flight at once, and
// what the budget knows of the origin before they go.
func restraintStale(t *testing.T, hdr map[string]string) (peak int, st State) {
	synctest.Test(t, func(t *testing.T) {
		var stated atomic.Bool
		stated.Store(true)
		var mu sync.Mutex
		in := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			in++
			peak = max(peak, in)
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			if stated.Load() {
				for k, v := range hdr {
					w.Header().Set(k, v)
				}
			}
			io.WriteString(w, "ok")
			mu.Lock()
			in--
			mu.Unlock()
		})
		tr := &Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: &Restraint{}}
		get := func(ctx context.Context) bool {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://origin.example/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				return false
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return true
		}
		get(t.Context())
		stated.Store(false)
		// one worker keeps the origin in use for 30 minutes
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Minute)
		for get(ctx) {
			time.Sleep(time.Second)
		}
		cancel()
		st, _ = tr.Inspect("http://origin.example", time.Now())
		mu.Lock()
		peak = 0
		mu.Unlock()
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() { get(t.Context()) })
		}
		wg.Wait()
	})
	return peak, st
}

// Restraint was lifted by a quota stated once, and each request's start
// kept it lifted, though what the budget kept paced nothing: an
// observation past its reset with no policy, or a limit with no window.
// 30 minutes on, all 16 requests went at once.
func TestRestraintAfterQuotaPacesNothing(t *testing.T) {
	for name, hdr := range map[string]map[string]string{
		"ietf-r-only": {"RateLimit": `"default";r=999;t=1`},
		"x-ratelimit": {"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "999", "X-RateLimit-Reset": "1"},
	} {
		t.Run(name, func(t *testing.T) {
			peak, st := restraintStale(t, hdr)
			t.Logf("policies known: %+v", st.Policies)
			if peak > 4 {
				t.Errorf("%d in flight at once, want at most Restraint's 4: the quota stated once 30 min ago lifted it", peak)
			}
		})
	}
}
