package polite_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// TestCostGrantedBeforeUnitKnownReserves: an OpenAI-shaped origin of
// 12,000 tokens a minute whose GETs state only its requests quota, so the
// key knows no token quota when POSTs A and then B (5000 tokens each) are
// granted. A's answer, written when A arrived, states 7000 left; B is
// still in flight. Requests granted before the key knew the unit reserved
// nothing, and A's answer counted B neither: C (5000) was sent against
// 7000 and refused, since B had left 2000. C waits for the tokens it
// lacks, as it does when the quota was known before the grants.
func TestCostGrantedBeforeUnitKnownReserves(t *testing.T) {
	_, want := grantedBeforeUnit(t, true)
	if want < 15*time.Second { // 3000 tokens lacking, at 200 a second
		t.Fatalf("with the quota known before the grants, C was sent %v after A's answer; want at least 15s", want)
	}
	refused, waited := grantedBeforeUnit(t, false)
	if refused != 0 {
		t.Errorf("%d refused; want 0: C was sent while B, granted after A and in flight, had spent all but 2000 of the 7000 A's answer stated", refused)
	}
	if waited != want {
		t.Errorf("C sent %v after A's answer; want %v, as when the quota was known before the grants", waited, want)
	}
}

// grantedBeforeUnit runs the scenario; known says whether the key knew the
// token quota before A and B were granted. It returns the requests the
// server refused and how long after A's answer C reached the server.
func grantedBeforeUnit(t *testing.T, known bool) (refused int, waited time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		const limit, perSec = 12000, 200 // 12,000 tokens a minute
		var mu sync.Mutex
		level, at := float64(limit), time.Now()
		var answered time.Time // when A's answer was read
		bArrived := make(chan struct{})
		release := make(chan struct{})
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			h := http.Header{}
			h.Set("x-ratelimit-limit-requests", "500")
			h.Set("x-ratelimit-remaining-requests", "499")
			h.Set("x-ratelimit-reset-requests", "120ms")
			resp := &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
			mu.Lock()
			now := time.Now()
			level = min(limit, level+perSec*now.Sub(at).Seconds())
			at = now
			if req.Method == http.MethodPost {
				if req.Header.Get("X-Name") == "C" {
					waited = now.Sub(answered)
				}
				if cost := 5000.0; cost > level {
					refused++
					resp.StatusCode = http.StatusTooManyRequests
				} else {
					level -= cost
				}
			}
			if req.Method == http.MethodPost || known {
				h.Set("x-ratelimit-limit-tokens", strconv.Itoa(limit))
				h.Set("x-ratelimit-remaining-tokens", strconv.FormatInt(int64(level), 10))
				h.Set("x-ratelimit-reset-tokens", time.Duration((limit-level)/perSec*float64(time.Second)).Round(time.Millisecond).String())
			}
			mu.Unlock()
			switch req.Header.Get("X-Name") {
			case "A":
				<-bArrived // A's answer, written at its arrival, is read after B was sent
				mu.Lock()
				answered = time.Now()
				mu.Unlock()
			case "B":
				close(bArrived)
				<-release // B's answer takes long
			}
			return resp, nil
		})
		c := &http.Client{Transport: &polite.Transport{Base: base, MaxAttempts: 1}}
		post := func(name string) {
			req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), polite.Cost{Tokens: 5000}), http.MethodPost, "http://llm.test/v1/chat/completions", nil)
			req.Header.Set("X-Name", name)
			resp, err := c.Do(req)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			resp.Body.Close()
		}
		get(t, c, "http://llm.test/v1/models") // the probe: the ramp opens
		var wg sync.WaitGroup
		wg.Go(func() { post("A") })
		synctest.Wait() // A is granted first, and waits at the server for B
		wg.Go(func() { post("B") })
		synctest.Wait()             // A answered (7000 left, B not counted); B in flight
		wg.Go(func() { post("C") }) // 2000 are left once B is counted: C must wait for 3000 more
		synctest.Wait()
		close(release)
		wg.Wait()
	})
	return refused, waited
}
