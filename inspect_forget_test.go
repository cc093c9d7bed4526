package polite_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// A streamed response (its body still arriving) was counted by the server
// in the r it answered, and the Transport sends the next request at once
// (DESIGN.md §4); Inspect's Remaining counted it again: 0 left until the
// reset, where 1 is.
func TestInspectRemainingAfterStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		pr, pw := io.Pipe()
		defer pw.Close()
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("RateLimit-Policy", `"api";q=100;w=60`)
			h.Set("RateLimit", `"api";r=1;t=60`)
			var body io.ReadCloser = io.NopCloser(strings.NewReader("ok"))
			cl := int64(2)
			if n.Add(1) == 1 {
				body, cl = pr, -1 // streamed: its body is still arriving
			}
			return &http.Response{StatusCode: 200, Header: h, Body: body, ContentLength: cl, Request: r}, nil
		})}
		c := &http.Client{Transport: tr}
		resp, err := c.Get("https://api.example/stream")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		st, _ := tr.Inspect("https://api.example", time.Now())
		var rem int64 = -2
		var reset time.Time
		if len(st.Policies) > 0 {
			rem, reset = st.Policies[0].Remaining, st.Policies[0].ResetAt
		}
		// What the Transport does: a second request goes at once.
		start := time.Now()
		resp2, err := c.Get("https://api.example/next")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp2.Body)
		resp2.Body.Close()
		waited := time.Since(start)
		if rem != 1 {
			t.Errorf("Inspect after a streamed answer of r=1: Remaining = %d (ResetAt in %v), want 1: the server counted the stream in r; the next request went after %v", rem, reset.Sub(start), waited)
		}
	})
}

// Forget and Inspect name the same key. A URL-shaped string once a custom
// key's, whose state went idle past IdleTTL, is no key the budget holds a
// state for: Inspect showed the origin the URL names, but Forget took the
// idle entry for the key, dropped it, and left the origin paused.
func TestForgetNamesWhatInspectNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			status := 200
			if r.Header.Get("X-Refuse") != "" {
				h.Set("Retry-After", "1200")
				status = http.StatusTooManyRequests
			}
			return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: r}, nil
		})
		budget := &polite.Budget{IdleTTL: time.Minute}
		byOrigin := &polite.Transport{Base: base, Budget: budget, MaxAttempts: 1}
		byURL := &polite.Transport{Base: base, Budget: budget, Key: func(r *http.Request) string { return r.URL.String() }}
		const u = "https://api.example/items/1"

		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("X-Refuse", "1")
		resp, err := byOrigin.RoundTrip(req) // the origin is paused for 20 minutes
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		req, _ = http.NewRequest(http.MethodGet, u, nil)
		if resp, err = byURL.RoundTrip(req); err != nil { // a custom key, u itself
			t.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(2 * time.Minute) // u's state is idle past IdleTTL; the origin's pause goes on

		before, ok := budget.Inspect(u, time.Now())
		if !ok || before.Key != "https://api.example" || before.PauseUntil.IsZero() {
			t.Fatalf("Inspect(%q) before Forget = %+v, %v; want the paused origin", u, before, ok)
		}
		budget.Forget(u)
		if after, ok := budget.Inspect(u, time.Now()); ok {
			t.Errorf("Inspect(%q) named %q (paused until %v); after Forget(%q) it still reports it: key %q, paused until %v",
				u, before.Key, time.Until(before.PauseUntil), u, after.Key, time.Until(after.PauseUntil))
		}
	})
}

// An origin whose host is an IPv6 literal with a zone (a link-local
// address, "http://[fe80::1%25en0]/") has the key "http://[fe80::1%en0]",
// as events and Inspect show it. Inspect of that key, as State.Key and
// Event.Key name it, found the state but took it for a custom key's, and
// showed a fingerprint instead of the origin; then so did a zone of 25 (an
// interface's number), shown "[fe80::1%25]", which url.Parse reads as an
// escaped '%' and no zone.
func TestInspectZoneOriginByItsKey(t *testing.T) {
	for _, zone := range []string{"en0", "25"} {
		t.Run(zone, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var evKey string
				tr := &polite.Transport{
					Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						h := http.Header{}
						h.Set("RateLimit-Policy", `"api";q=100;w=60`)
						h.Set("RateLimit", `"api";r=50;t=60`)
						return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: r}, nil
					}),
					OnEvent: func(e polite.Event) { evKey = e.Key },
				}
				u := "http://[fe80::1%25" + zone + "]:8080/x"
				resp, err := (&http.Client{Transport: tr}).Get(u)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				byURL, ok1 := tr.Inspect(u, time.Now())
				byKey, ok2 := tr.Inspect(evKey, time.Now())
				if !ok1 || !ok2 || byKey.Key != evKey || byURL.Key != evKey {
					t.Errorf("Event.Key %q; Inspect(%q).Key = %q (%v); Inspect(Event.Key).Key = %q (%v), want the origin %q",
						evKey, u, byURL.Key, ok1, byKey.Key, ok2, evKey)
				}
			})
		})
	}
}

// The repair of an unescaped IPv6 zone in a key looked up is a host's:
// "https://api.example/files/[50%]" is no URL (url.Parse and
// http.NewRequest reject it), so it is a custom key; repaired as a zone,
// it was taken for the origin, whose state Inspect showed for it and whose
// pause Forget cleared.
func TestBracketPercentPathIsNoOrigin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("Retry-After", "1200")
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: io.NopCloser(strings.NewReader("no")), ContentLength: 2, Request: r}, nil
		})
		budget := &polite.Budget{}
		tr := &polite.Transport{Base: base, Budget: budget, MaxAttempts: 1}
		req, _ := http.NewRequest(http.MethodGet, "https://api.example/x", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if st, ok := budget.Inspect("https://api.example", time.Now()); !ok || st.PauseUntil.IsZero() {
			t.Fatalf("origin not paused: %+v %v", st, ok)
		}
		const key = "https://api.example/files/[50%]"
		if _, err := http.NewRequest(http.MethodGet, key, nil); err == nil {
			t.Fatalf("%q is a valid request URL", key)
		}
		_, okPlain := budget.Inspect("https://api.example/files/50%", time.Now())
		st, ok := budget.Inspect(key, time.Now())
		if ok {
			t.Errorf("Inspect(%q) = key %q (paused %v), want none: it is no URL but a custom key with no state (Inspect(%q) = %v)",
				key, st.Key, !st.PauseUntil.IsZero(), "https://api.example/files/50%", okPlain)
		}
		budget.Forget(key)
		if st, ok := budget.Inspect("https://api.example", time.Now()); !ok || st.PauseUntil.IsZero() {
			t.Errorf("Forget(%q), a custom key with no state, cleared the origin https://api.example's pause (Inspect = %v, %v)", key, st.PauseUntil, ok)
		}
	})
}

// A Transport whose Budget is nil forgets a key through Transport.Forget:
// after a refusal with a long Retry-After, the next request goes at once
// instead of waiting out the pause, and Inspect shows nothing for it.
func TestTransportForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var refuse atomic.Bool
		refuse.Store(true)
		tr := &polite.Transport{MaxAttempts: 1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{}
			status := 200
			if refuse.Swap(false) {
				h.Set("Retry-After", "1200")
				status = http.StatusTooManyRequests
			}
			return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: r}, nil
		})}
		c := &http.Client{Transport: tr}
		resp, err := c.Get("https://api.example/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, ok := tr.Inspect("https://api.example", time.Now()); !ok {
			t.Fatal("Inspect after a refusal: no state")
		}
		tr.Forget("https://API.example:443/b")
		if st, ok := tr.Inspect("https://api.example", time.Now()); ok {
			t.Fatalf("Inspect after Forget: %+v, want none", st)
		}
		start := time.Now()
		resp, err = c.Get("https://api.example/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if waited := time.Since(start); waited != 0 {
			t.Errorf("request after Forget waited %v, want none", waited)
		}
	})
}
