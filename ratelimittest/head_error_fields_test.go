package ratelimittest_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// slowBody yields its text after a virtual delay, as a client uploading
// slowly.
type slowBody struct {
	delay time.Duration
	r     io.Reader
	slept bool
}

func (b *slowBody) Read(p []byte) (int, error) {
	if !b.slept {
		time.Sleep(b.delay)
		b.slept = true
	}
	return b.r.Read(p)
}

// A TokenHandler answered a request whose body is not a valid request
// (400) with the rate-limit fields and Date computed at the request's
// arrival, though it wrote them once the body was read. The buckets had
// meanwhile been advanced by another request, so the state was read "in
// the past": Anthropic's requests-reset instant was stated 5 s before the
// quota was whole again.
func TestTokenErrorFieldsCurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{
			API: ratelimittest.AnthropicAPI, Requests: 2, Window: time.Minute,
		})
		c := client(h)
		start := time.Now()
		var wg sync.WaitGroup
		var bad *http.Response
		wg.Go(func() {
			// Arrives at 0s; its (invalid) body is read by 10s.
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://llm.example"+messagesPath,
				&slowBody{delay: 10 * time.Second, r: strings.NewReader("not json")})
			resp, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			bad = resp
		})
		// At 5s a valid request is admitted: one request left, the quota
		// whole again at 5s + 30s = 35s.
		time.Sleep(5 * time.Second)
		if resp, _ := post(t, c, messagesPath, ratelimittest.TokenTask{Input: 10, MaxOutput: 10}.Body(ratelimittest.AnthropicAPI)); resp.StatusCode != 200 {
			t.Fatalf("valid request: %d", resp.StatusCode)
		}
		wg.Wait()
		if bad == nil {
			return
		}
		if bad.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", bad.StatusCode)
		}
		want := start.Add(35 * time.Second).UTC().Format(time.RFC3339)
		if got := bad.Header.Get("anthropic-ratelimit-requests-reset"); got != want {
			t.Errorf("400 written at 10s says requests-reset %s; the quota is whole again at %s (Date %s)",
				got, want, bad.Header.Get("Date"))
		}
		if got, want := bad.Header.Get("Date"), start.Add(10*time.Second).UTC().Format(http.TimeFormat); got != want {
			t.Errorf("400 written at 10s carries Date %s, want %s", got, want)
		}
	})
}

// A response to HEAD carries no content (RFC 9110 §9.3.2), and a
// "content-bytes" policy counts the content bytes of the bodies sent; yet
// the Handler charged a HEAD the whole BodySize at admission, so five
// HEADs spent a quota of five bodies and the GET after them was refused,
// though no byte of content was sent.
func TestHeadChargedNoContentBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			BodySize: 100,
			Policies: []ratelimittest.Policy{{Name: "bw", Quota: 500, Window: time.Minute, Unit: "content-bytes"}},
		})
		c := client(h)
		for range 5 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodHead, "http://api.example/items", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n != 0 {
				t.Fatalf("HEAD response carried %d content bytes", n)
			}
		}
		resp, _ := send(t, c, "")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET after 5 HEADs (no content sent) refused %d, RateLimit %q; want 200 with r=400",
				resp.StatusCode, resp.Header.Get("RateLimit"))
		}
	})
}
