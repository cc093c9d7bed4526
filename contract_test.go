package polite_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// The RoundTripper contract at its edges: what a Base or a caller may hand
// over that net/http itself tolerates.

// A request without a URL fails with an error, as with http.Transport, and
// its body is closed.
func TestNilURL(t *testing.T) {
	tr := &polite.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) {
		t.Error("Base called for a request without a URL")
		return nil, errors.New("unreachable")
	})}
	body := &closeCounter{Reader: strings.NewReader("x")}
	req := &http.Request{Method: http.MethodPost, Header: http.Header{}, Body: body}
	resp, err := tr.RoundTrip(req)
	if resp != nil || err == nil {
		t.Errorf("RoundTrip = %v, %v; want an error", resp, err)
	}
	if n := body.closed; n != 1 {
		t.Errorf("request body closed %d times, want 1", n)
	}
}

// A Base may answer with a nil Body, which http.Client reads as an empty
// one: a refusal, a gateway's failure or a response that comes with an
// error so answered is retried or dropped without a panic.
func TestNilResponseBody(t *testing.T) {
	for _, tt := range []struct {
		name      string
		status    int
		header    http.Header
		err       error
		transient bool
	}{
		{"429", http.StatusTooManyRequests, http.Header{"Retry-After": {"1"}}, nil, false},
		{"503 problem", http.StatusServiceUnavailable, http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}, nil, false},
		{"502 retried", http.StatusBadGateway, http.Header{}, nil, true},
		{"a response with an error", http.StatusOK, http.Header{}, errors.New("broken"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				tr := &polite.Transport{RetryTransient: tt.transient, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if n.Add(1) == 1 {
						return &http.Response{StatusCode: tt.status, Header: tt.header, Request: r}, tt.err
					}
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})}
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				switch {
				case tt.err != nil:
					if resp != nil || err != tt.err {
						t.Errorf("RoundTrip = %v, %v; want nil, %v", resp, err, tt.err)
					}
				case err != nil || resp.StatusCode != http.StatusOK || n.Load() != 2:
					t.Errorf("RoundTrip = %v, %v after %d sends; want 200 after 2", resp, err, n.Load())
				default:
					resp.Body.Close()
				}
			})
		})
	}
}

// Reading a refusal's body before a retry (its problem document, or the
// rest, drained) ends with the request's context, not a second later.
func TestRefusalBodyReadEndsWithContext(t *testing.T) {
	for _, ct := range []string{"text/plain", "application/problem+json"} {
		t.Run(ct, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				body := polite.NewStuckBody()
				tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					time.AfterFunc(50*time.Millisecond, cancel)
					h := http.Header{"Retry-After": {"5"}, "Content-Type": {ct}}
					return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: body, ContentLength: -1, Request: r}, nil
				})}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if d := time.Since(start); d != 50*time.Millisecond || !errors.Is(err, context.Canceled) {
					t.Errorf("RoundTrip = %v after %v; want context.Canceled once the context ended, after 50ms", err, d)
				}
				if !body.Closed() {
					t.Error("the refusal's body was not closed")
				}
			})
		})
	}
}

// dripBody yields its first chunk at once and each of the others after
// delay.
type dripBody struct {
	chunks [][]byte
	delay  time.Duration
}

func (b *dripBody) Read(p []byte) (int, error) {
	if len(b.chunks) == 0 {
		return 0, io.EOF
	}
	if len(b.chunks) == 1 {
		time.Sleep(b.delay)
	}
	n := copy(p, b.chunks[0])
	b.chunks = b.chunks[1:]
	return n, nil
}

func (b *dripBody) Close() error { return nil }

// A refusal that goes back to the caller because the wait it asks for is
// longer than MaxWait goes back at once, its body unread, even a problem
// document that trickles in: reading it (for a second at most) would have
// delayed the caller, and cut it short.
func TestRefusalBeyondMaxWaitUnread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const doc = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"x",` + `"detail":"come back tomorrow"}`
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"Retry-After": {"86400"}, "Content-Type": {"application/problem+json"}}
			body := &dripBody{chunks: [][]byte{[]byte(doc[:40]), []byte(doc[40:])}, delay: 1500 * time.Millisecond}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: body, ContentLength: -1, Request: r}, nil
		})}
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("the refusal came back after %v, want at once", d)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != doc {
			t.Errorf("the refusal's body read %q, %v; want the whole document", b, err)
		}
	})
}

// MaxWait bounds a request's whole wait, not each hold of it: a request
// that wakes at the start it was promised and finds another took it waits
// again, but never longer than MaxWait in all.
func TestMaxWaitCountsEveryHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxWait = 1500 * time.Millisecond
		tr := &polite.Transport{Budget: &polite.Budget{MaxRate: 1}, MaxWait: maxWait, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var longest time.Duration
		failed := 0
		for range 6 {
			wg.Go(func() {
				start := time.Now()
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				d := time.Since(start)
				mu.Lock()
				defer mu.Unlock()
				var we *polite.WaitError
				switch {
				case errors.As(err, &we):
					failed++
					if d > maxWait {
						t.Errorf("a WaitError after %v, want it within MaxWait", d)
					}
				case err != nil:
					t.Errorf("RoundTrip: %v", err)
				default:
					resp.Body.Close()
					longest = max(longest, d)
				}
			})
		}
		wg.Wait()
		if longest > maxWait || failed == 0 {
			t.Errorf("longest wait of a request sent %v, %d WaitErrors; want at most MaxWait (%v), and some requests failed", longest, failed, maxWait)
		}
	})
}

// MaxWait bounds a hold whose end nobody knows too: a request held for a
// concurrency slot behind one that hangs fails with a WaitError once it
// has waited MaxWait, not when the hanging request's lease ends.
func TestMaxWaitBoundsHoldWithNoEnd(t *testing.T) {
	for _, tt := range []struct {
		name string
		tr   func(http.RoundTripper) *polite.Transport
	}{
		{"Budget.MaxConcurrency", func(b http.RoundTripper) *polite.Transport {
			return &polite.Transport{Base: b, MaxWait: time.Minute, Budget: &polite.Budget{MaxConcurrency: 1}}
		}},
		{"Transport.MaxConcurrency", func(b http.RoundTripper) *polite.Transport {
			return &polite.Transport{Base: b, MaxWait: time.Minute, MaxConcurrency: 1}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				c := &http.Client{Transport: tt.tr(roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if n.Add(1) == 1 {
						time.Sleep(30 * time.Minute)
					}
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				}))}
				var wg sync.WaitGroup
				wg.Go(func() {
					if resp, err := c.Get("http://api.test/"); err == nil {
						resp.Body.Close()
					}
				})
				synctest.Wait()
				start := time.Now()
				resp, err := c.Get("http://api.test/")
				if err == nil {
					resp.Body.Close()
				}
				var we *polite.WaitError
				if d := time.Since(start); !errors.As(err, &we) || d != time.Minute || we.Delay != time.Minute {
					t.Errorf("held behind a hanging request: %v after %v; want a WaitError after MaxWait (1m)", err, d)
				}
				wg.Wait()
			})
		})
	}
}

// When a wait would pass both MaxWait and the request's deadline, its
// WaitError names the sooner of the two: raising MaxWait would not help a
// request whose deadline comes first.
func TestWaitErrorNamesTheSoonerLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit", `"default";r=0;t=3600`)
		})
		c, tr := politeOver(h)
		tr.MaxWait = time.Minute
		get(t, c, "http://api.test/")
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		_, err := c.Do(req)
		var we *polite.WaitError
		if !errors.As(err, &we) || !we.Deadline || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a wait of an hour, MaxWait 1m, deadline in 2s: %v; want the deadline named", err)
		}
	})
}

// A WaitError tells whether the request was ever sent: its Attempt is 1
// when the first attempt's wait failed, 2 when the retry's did, after a
// refusal. Before, it said nothing of it, and its docs said the request
// was not sent: a request refused once, whose retry's wait then outlasted
// MaxWait (another request's refusal paused the origin for an hour), came
// back as a WaitError after it was sent.
func TestWaitErrorAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			refuse := func(after string) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {after}}, Body: http.NoBody, Request: r}, nil
			}
			switch r.URL.Path {
			case "/b":
				time.Sleep(20 * time.Millisecond)
				return refuse("1")
			case "/a":
				time.Sleep(500 * time.Millisecond)
				return refuse("3600")
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Ratelimit-Policy": {`"p";q=1000;w=60`}, "Ratelimit": {`"p";r=990;t=30`}}, Body: http.NoBody, Request: r}, nil
		})}
		do := func(path string) error {
			resp, err := tr.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test"+path, nil))
			if resp != nil {
				resp.Body.Close()
			}
			return err
		}
		for range 2 {
			if err := do("/"); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		var errB error
		wg.Go(func() { errB = do("/b") })
		// B is in flight; A, sent beside it (the stated quota lets both
		// go), is refused for an hour while B's retry waits its second.
		synctest.Wait()
		wg.Go(func() { do("/a") })
		wg.Wait()
		var we *polite.WaitError
		if !errors.As(errB, &we) || we.Attempt != 2 {
			t.Errorf("B, refused once, then its retry held for an hour: %v (%+v); want a WaitError with Attempt 2", errB, we)
		}
		err := do("/c")
		if !errors.As(err, &we) || we.Attempt != 1 {
			t.Errorf("C, never sent: %v (%+v); want a WaitError with Attempt 1", err, we)
		}
	})
}

// TestBodiesClosedOnce checks bodies closed exactly once where they were
// closed twice or never: a refusal's problem document cut short (by the
// drain's time bound, or by the request's context ending) was closed by
// the cut and again by the drain; a robots.txt body cut by the fetch's
// timeout was closed by the cut and again after the read; a request body
// was never closed when the Base panicked.
func TestBodiesClosedOnce(t *testing.T) {
	problem := func(body io.ReadCloser) *http.Response {
		return &http.Response{StatusCode: http.StatusTooManyRequests, ContentLength: -1, Body: body,
			Header: http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}}
	}
	ok := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}
	t.Run("problem cut by the drain's bound", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			body := polite.NewStuckBody()
			n := 0
			tr := &polite.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) {
				if n++; n == 1 {
					return problem(body), nil
				}
				return ok, nil
			})}
			resp, err := tr.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if body.Closes() != 1 {
				t.Errorf("refusal's body closed %d times, want 1", body.Closes())
			}
		})
	})
	t.Run("problem cut by the context", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			body := polite.NewStuckBody()
			ctx, cancel := context.WithCancel(t.Context())
			tr := &polite.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) {
				cancel()
				return problem(body), nil
			})}
			resp, err := tr.RoundTrip(httptest.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil))
			if err == nil {
				resp.Body.Close()
			}
			if body.Closes() != 1 {
				t.Errorf("refusal's body closed %d times, want 1", body.Closes())
			}
		})
	})
	t.Run("robots.txt cut by the fetch's timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			body := polite.NewStuckBody()
			tr := &polite.Transport{Robots: &polite.Robots{}, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/robots.txt" {
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, ContentLength: -1, Body: body}, nil
				}
				return ok, nil
			})}
			resp, err := tr.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/page", nil))
			if err == nil {
				resp.Body.Close()
			}
			if body.Closes() != 1 {
				t.Errorf("robots.txt body closed %d times, want 1", body.Closes())
			}
		})
	})
	t.Run("request body when the Base panics", func(t *testing.T) {
		body := &closeCounter{Reader: strings.NewReader("x")}
		tr := &polite.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { panic("broken Base") })}
		req := httptest.NewRequest(http.MethodPost, "http://api.test/", nil)
		req.Body = body
		func() {
			defer func() { recover() }()
			tr.RoundTrip(req)
		}()
		if body.closed != 1 {
			t.Errorf("request body closed %d times, want 1", body.closed)
		}
	})
}

// A refusal whose Retry-After fits the request's deadline is retried in
// time: the jitter that lengthens the key's pause leaves the retry time to
// go. The pause was checked against MaxWait only: the retry failed at once
// with a *WaitError, and the caller lost the server's refusal, drained.
func TestJitterWithinDeadline(t *testing.T) {
	fails := 0
	for i := 0; i < 20; i++ {
		synctest.Test(t, func(t *testing.T) {
			var n atomic.Int32
			tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if n.Add(1) == 1 {
					return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"5"}}, Body: http.NoBody, Request: r}, nil
				}
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second+time.Microsecond)
			defer cancel()
			req := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				var we *polite.WaitError
				if errors.As(err, &we) {
					fails++
					if fails == 1 {
						t.Logf("RoundTrip = nil, %v (sends: %d); the 429 was drained and dropped", err, n.Load())
					}
				} else {
					t.Errorf("RoundTrip error %v", err)
				}
				return
			}
			resp.Body.Close()
		})
	}
	if fails > 0 {
		t.Errorf("%d of 20 requests: a refusal judged retryable within the deadline ended in a *WaitError instead of a response", fails)
	}
}

// A Retry-After of 0 is a wait of the refusal floor (1s or more): with
// less than that to MaxWait or the deadline, the refusal goes back at
// once, unaltered, with its body unread. It was taken as a wait of 0 that
// fits, and the problem document read (up to drainTime) before the floor
// was found not to fit: the refusal came back late, its body cut.
func TestRetryAfterZeroBeyondMaxWaitUnread(t *testing.T) {
	const doc = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",` + `"detail":"later"}`
	for _, tt := range []struct {
		name     string
		maxWait  time.Duration
		deadline time.Duration
	}{
		{"MaxWait 500ms", 500 * time.Millisecond, 0},
		{"deadline 900ms", 0, 900 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				defer time.Sleep(10 * time.Second) // let the body's writer finish
				var n atomic.Int32
				tr := &polite.Transport{MaxWait: tt.maxWait, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					n.Add(1)
					return trickledRefusal(r, doc), nil
				})}
				ctx := t.Context()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				start := time.Now()
				resp, err := tr.RoundTrip(httptest.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil))
				took := time.Since(start)
				if err != nil {
					t.Fatalf("RoundTrip error %v", err)
				}
				defer resp.Body.Close()
				if n.Load() != 1 {
					t.Fatalf("%d sends, want 1 (the wait cannot fit)", n.Load())
				}
				b, rerr := io.ReadAll(resp.Body)
				if took != 0 || rerr != nil {
					t.Errorf("the refusal came back after %v, its body %q, %v; want at once, unread", took, b, rerr)
				}
			})
		})
	}
}

// With a MaxWait beyond a day, a Retry-After of 30 hours fits and the
// refusal is retried after 30 hours: the key's pause is capped at 24 hours
// (MaxPause), and the refused request carries the rest of its wait. It
// relied on the pause alone, and went six hours before the server's wait.
func TestRetryAfterBeyondMaxPauseHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends []time.Time
		tr := &polite.Transport{MaxWait: 48 * time.Hour, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sends = append(sends, time.Now())
			if len(sends) == 1 {
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"108000"}}, Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		resp, err := tr.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(sends) != 2 {
			t.Fatalf("%d sends, want 2", len(sends))
		}
		if d := sends[1].Sub(sends[0]); d < 30*time.Hour {
			t.Errorf("retried %v after a refusal with Retry-After: 108000 (30h); want at least 30h", d)
		}
	})
}

// A second Retry-After: 0 in a row waits the doubled floor (2s or more):
// with MaxWait 1.5s no retry can follow, so the refusal goes back at once,
// its body unread (TestRetryAfterZeroBeyondMaxWaitUnread for the first).
// Before, the check assumed the floor of one second: the problem document
// was read for a second, and the refusal came back late, its body cut. On
// a Store (any but the Budget's own MemoryStore), which keeps the refusals
// in a row, the check knew none until it asked the Store.
func TestRetryAfterZeroStreakUnread(t *testing.T) {
	for _, store := range []bool{false, true} {
		name := "memory"
		if store {
			name = "store"
		}
		t.Run(name, func(t *testing.T) { retryAfterZeroStreakUnread(t, store) })
	}
}

func retryAfterZeroStreakUnread(t *testing.T, store bool) {
	const doc = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",` + `"detail":"later"}`
	synctest.Test(t, func(t *testing.T) {
		defer time.Sleep(10 * time.Second) // let the body writers finish
		var sends []time.Time
		tr := &polite.Transport{MaxWait: 1500 * time.Millisecond, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sends = append(sends, time.Now())
			return trickledRefusal(r, doc), nil
		})}
		if store {
			tr.Budget = &polite.Budget{Store: &countingStore{}}
		}
		resp, err := tr.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil))
		if err != nil {
			t.Fatalf("RoundTrip error %v", err)
		}
		defer resp.Body.Close()
		back := time.Now()
		if len(sends) != 2 {
			t.Fatalf("%d sends, want 2 (one retry after the 1s floor)", len(sends))
		}
		b, rerr := io.ReadAll(resp.Body)
		if took := back.Sub(sends[1]); took != 0 || rerr != nil {
			t.Errorf("the second refusal came back %v after it arrived, its body %q, %v; want at once, unread", took, b, rerr)
		}
	})
}

// trickledRefusal is a 429 to r with Retry-After: 0 and the problem
// document doc: its first 40 bytes at once, the rest 5s later. Closing the
// body interrupts a read, as net/http's bodies do.
func trickledRefusal(r *http.Request, doc string) *http.Response {
	h := http.Header{"Retry-After": {"0"}, "Content-Type": {"application/problem+json"}}
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(doc[:40]))
		time.Sleep(5 * time.Second)
		pw.Write([]byte(doc[40:]))
		pw.Close()
	}()
	return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, ContentLength: -1, Body: pr, Request: r}
}

// A Base that panics fetching robots.txt for a request: the panic goes
// on, and the request's body is closed, as when Base panics sending it
// (TestBodiesClosedOnce). Before, it was never closed.
func TestBodyClosedWhenRobotsFetchPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{Robots: &polite.Robots{}, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				panic("broken Base")
			}
			if r.Body != nil {
				r.Body.Close()
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		body := &closeCounter{Reader: strings.NewReader("payload")}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/items", nil)
		req.Body, req.ContentLength = body, 7
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic of Base did not reach the caller")
				}
			}()
			tr.RoundTrip(req)
		}()
		if n := body.closed; n != 1 {
			t.Errorf("request body closed %d times after Base panicked fetching robots.txt, want 1", n)
		}
	})
}

// failOnceBody yields data, then fails once with err, then reports
// io.EOF, as net/http's own transfer body does for a body cut short of its
// Content-Length (io.ErrUnexpectedEOF, then io.EOF).
type failOnceBody struct {
	data   []byte
	err    error
	failed bool
}

func (b *failOnceBody) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	if !b.failed {
		b.failed = true
		return 0, b.err
	}
	return 0, io.EOF
}

func (b *failOnceBody) Close() error { return nil }

// A problem document polite reads (an abnormal-usage-detected refusal,
// which goes back to the caller) whose body fails mid-way: the body
// handed back gives the bytes read, then the error. Before, the error of
// polite's read was dropped, and the body read as complete.
func TestProblemBodyKeepsReadError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const doc = `{"type":"https://iana.org/assignments/http-problem-types#abnormal-usage-detected","title":"trunc`
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			h := http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}
			body := &failOnceBody{data: []byte(doc), err: io.ErrUnexpectedEOF}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: body, ContentLength: 500, Request: r}, nil
		})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, rerr := io.ReadAll(resp.Body)
		if !bytes.Equal(got, []byte(doc)) {
			t.Errorf("body %q, want %q", got, doc)
		}
		if !errors.Is(rerr, io.ErrUnexpectedEOF) {
			t.Errorf("reading the refusal's body: err = %v, want the body's own, io.ErrUnexpectedEOF", rerr)
		}
	})
}

// A Retry-After of 0 is a wait of the refusal floor, a second, and a
// refusal whose floor fits MaxWait or the deadline is retried. The jitter
// that spreads clients refused together was added to the floor before the
// retry was judged, and neither MaxWait nor the deadline capped it: with
// 1.1s allowed, about two refusals in three went back to the caller.
func TestFloorJitterKeepsRetryThatFits(t *testing.T) {
	for _, tt := range []struct {
		name     string
		maxWait  time.Duration
		deadline time.Duration
	}{
		{"MaxWait 1.1s", 1100 * time.Millisecond, 0},
		{"deadline 1.1s", 0, 1100 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gaveUp := 0
			for range 20 {
				synctest.Test(t, func(t *testing.T) {
					var n atomic.Int32
					tr := &polite.Transport{MaxWait: tt.maxWait, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						if n.Add(1) == 1 {
							return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"0"}}, Body: http.NoBody, Request: r}, nil
						}
						return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
					})}
					ctx := t.Context()
					if tt.deadline > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, tt.deadline)
						defer cancel()
					}
					resp, err := tr.RoundTrip(httptest.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil))
					if err != nil {
						t.Errorf("RoundTrip error %v", err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || n.Load() != 2 {
						gaveUp++
					}
				})
			}
			if gaveUp > 0 {
				t.Errorf("%d of 20 refusals with Retry-After: 0 (a floor of 1s, within the 1.1s allowed) went back to the caller", gaveUp)
			}
		})
	}
}

// trailerBody is a request body that sets the trailer X-Sum in tr at EOF,
// as a request body may (see http.Request.Trailer).
type trailerBody struct {
	r  io.Reader
	tr http.Header
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.tr.Set("X-Sum", "abc")
	}
	return n, err
}

func (b *trailerBody) Close() error { return nil }

// A retry sends the trailer values its body sets as it is read. The retry
// was a clone whose Trailer was copied before its body from GetBody was
// read; the body filled in the caller's, and a request refused before its
// body was read (an early 429, a refused Expect: 100-continue) was resent
// with its trailer empty.
func TestRetryKeepsRequestTrailers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		var got []string
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if n.Add(1) == 1 {
				r.Body.Close() // refused before the body was read
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, Body: http.NoBody, Request: r}, nil
			}
			// As http.Transport does: the body, then r.Trailer.
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			got = append(got, r.Trailer.Get("X-Sum"))
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/", nil)
		req.Trailer = http.Header{"X-Sum": nil}
		req.ContentLength = -1
		req.Body = &trailerBody{r: strings.NewReader("payload"), tr: req.Trailer}
		req.GetBody = func() (io.ReadCloser, error) {
			return &trailerBody{r: strings.NewReader("payload"), tr: req.Trailer}, nil
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if n.Load() != 2 || len(got) != 1 || got[0] != "abc" {
			t.Errorf("after %d sends, the retry carried trailer X-Sum %q, want %q, set by its body at EOF", n.Load(), got, "abc")
		}
	})
}

// A response to a request polite sent as a copy (a retry, or a first
// attempt sent from GetBody after the default estimate read it) hands
// back the caller's request as its Request, as net/http's Transport does
// after a retry of its own: it handed back polite's copy, whose Body
// polite had read and closed.
func TestResponseRequestIsCallers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		path    string
		refuses int
	}{
		{"retry", "/upload", 1},
		{"first attempt after the estimate", "/v1/chat/completions", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
					n++
					if n <= tc.refuses {
						return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, Body: http.NoBody, Request: r}, nil
					}
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				})}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test"+tc.path, strings.NewReader(`{"model":"m","messages":[]}`))
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if n != tc.refuses+1 {
					t.Fatalf("Base called %d times, want %d", n, tc.refuses+1)
				}
				if resp.Request != req {
					t.Errorf("resp.Request is %p, not the caller's request %p", resp.Request, req)
				}
			})
		})
	}
}

// What GetBody returns beside an error is left alone, as net/http's own
// rewind leaves it: a GetBody written `return gzip.NewReader(src)` returns
// a nil *gzip.Reader in a non-nil io.ReadCloser, whose Close panics, and
// one that cannot rewind may hand back req.Body itself, which Base, or
// RoundTrip as never sent, closes once. Closing that result (tried, to
// close a body returned with the error) made RoundTrip panic in the first
// case and closed req.Body two or three times in the second.
func TestGetBodyErrorResultLeftAlone(t *testing.T) {
	errRewind := errors.New("cannot rewind")
	refuse := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r.Body.Close()
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, Body: http.NoBody, Request: r}, nil
	})
	accept := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r.Body.Close()
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	const payload = `{"model":"m","messages":[]}`
	for _, tc := range []struct {
		name string
		base http.RoundTripper
		path string // an LLM path has the default estimate call GetBody
	}{
		{"retry", refuse, "/upload"},
		{"estimate", accept, "/v1/chat/completions"},
	} {
		t.Run(tc.name+"/typed nil", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &polite.Transport{Base: tc.base}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test"+tc.path, strings.NewReader(payload))
				req.GetBody = func() (io.ReadCloser, error) {
					return gzip.NewReader(strings.NewReader("this is not gzip data")) // (*gzip.Reader)(nil), gzip.ErrHeader
				}
				var err error
				func() {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("RoundTrip panicked: %v", p)
						}
					}()
					var resp *http.Response
					if resp, err = tr.RoundTrip(req); resp != nil {
						resp.Body.Close()
					}
				}()
				if !errors.Is(err, gzip.ErrHeader) {
					t.Errorf("RoundTrip = %v, want GetBody's error", err)
				}
			})
		})
		t.Run(tc.name+"/own body", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &polite.Transport{Base: tc.base}
				body := &closeCounter{Reader: strings.NewReader(payload)}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test"+tc.path, body)
				req.GetBody = func() (io.ReadCloser, error) { return req.Body, errRewind }
				resp, err := tr.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if body.closed != 1 {
					t.Errorf("req.Body closed %d times, want 1 (RoundTrip: %v)", body.closed, err)
				}
			})
		})
	}
}

// A retry whose body GetBody cannot rewind ends with an EventGiveUp
// carrying GetBody's error, the error the caller gets: the events ended
// with the retry's EventRetry and EventWait, as if it had been sent.
func TestRewindFailureGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errGone := errors.New("upload source gone")
		var kinds []polite.EventKind
		var last polite.Event
		tr := &polite.Transport{
			OnEvent: func(e polite.Event) { kinds = append(kinds, e.Kind); last = e },
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				r.Body.Close()
				return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}, Body: http.NoBody, Request: r}, nil
			}),
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, "http://api.test/", strings.NewReader("payload"))
		req.GetBody = func() (io.ReadCloser, error) { return nil, errGone }
		resp, err := tr.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		if !errors.Is(err, errGone) {
			t.Fatalf("RoundTrip: %v, %v; want GetBody's error", resp, err)
		}
		if last.Kind != polite.EventGiveUp || !errors.Is(last.Err, errGone) || last.Attempt != 2 {
			t.Errorf("events %v, the last %+v; want them to end with an EventGiveUp of attempt 2 carrying GetBody's error", kinds, last)
		}
	})
}

// A refusal (Retry-After: 0, a problem document) to a key that another
// answer has paused past MaxWait meanwhile cannot be retried: the release
// hands it back. It goes back at once, its body unread; before, its
// problem document was read first (up to a second), and it came back
// late, its body cut.
func TestPausedKeyRefusalUnread(t *testing.T) {
	const doc = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",` + `"detail":"later"}`
	synctest.Test(t, func(t *testing.T) {
		defer time.Sleep(10 * time.Second) // let the body writers finish
		var mu sync.Mutex
		aAnswered := make(chan struct{})
		var refusedAt time.Time
		bSends := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			switch r.URL.Path {
			case "/warm":
				h := http.Header{"Ratelimit-Policy": {`"p";q=1000;w=60`}, "Ratelimit": {`"p";r=900;t=60`}}
				return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
			case "/a":
				time.Sleep(10 * time.Millisecond)
				defer close(aAnswered)
				h := http.Header{"Ratelimit-Policy": {`"p";q=1000;w=60`}, "Ratelimit": {`"p";r=0;t=60`}}
				return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
			}
			<-aAnswered
			time.Sleep(10 * time.Millisecond)
			mu.Lock()
			bSends++
			refusedAt = time.Now()
			mu.Unlock()
			return trickledRefusal(r, doc), nil
		})
		tr := &polite.Transport{MaxWait: 5 * time.Second, Base: base}
		resp, err := tr.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/warm", nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := tr.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/a", nil))
			if err == nil {
				resp.Body.Close()
			}
		}()
		resp, err = tr.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/b", nil))
		wg.Wait()
		if err != nil {
			t.Fatalf("RoundTrip error %v", err)
		}
		defer resp.Body.Close()
		back := time.Now()
		mu.Lock()
		took := back.Sub(refusedAt)
		mu.Unlock()
		b, rerr := io.ReadAll(resp.Body)
		if resp.StatusCode != 429 || took != 0 || rerr != nil {
			t.Errorf("status %d after %d send(s): the refusal came back %v after it arrived, its body %q, %v; want at once, unread", resp.StatusCode, bSends, took, b, rerr)
		}
	})
}

// A refusal in an outage goes back to the caller whatever it says, yet its
// problem document is read: the outage is the retry budget's view, which
// the next acceptance ends, and the document is what says the server
// reported abnormal usage ("stops retries for ten minutes, and the
// refusal goes back to the caller, to stop its batch", doc.go). Left
// unread (as a change that handed such refusals back unread did), an
// abnormal-usage-detected 503 gave no EventStop (the signal `polite get`
// stops an origin's batch by) and no stop: once one request was accepted,
// refusals were retried again, minutes after the server said to stop.
func TestAbnormalUsageInOutageStops(t *testing.T) {
	const abnormal = `{"type":"https://iana.org/assignments/http-problem-types#abnormal-usage-detected","detail":"stop"}`
	synctest.Test(t, func(t *testing.T) {
		mode := "refuse"
		sends := 0
		var kinds []polite.EventKind
		var budgetGiveUp bool
		tr := &polite.Transport{
			MaxAttempts: 2,
			MaxWait:     time.Hour,
			OnEvent: func(e polite.Event) {
				if e.Kind == polite.EventGiveUp && e.Reason == polite.ReasonRetryBudget {
					budgetGiveUp = true
				}
				kinds = append(kinds, e.Kind)
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sends++
				switch mode {
				case "abnormal":
					h := http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}
					return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: h,
						Body: io.NopCloser(strings.NewReader(abnormal)), ContentLength: int64(len(abnormal)), Request: r}, nil
				case "accept":
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
				}
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"1"}},
					Body: http.NoBody, Request: r}, nil
			}),
		}
		get := func() *http.Response {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/x", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp
		}
		for i := 0; !budgetGiveUp; i++ { // into the outage
			if i == 100 {
				t.Fatal("no outage in 100 requests")
			}
			get()
		}
		mode = "abnormal"
		kinds = nil
		get()
		sawStop := false
		for _, k := range kinds {
			sawStop = sawStop || k == polite.EventStop
		}
		if !sawStop {
			t.Errorf("an abnormal-usage-detected refusal in an outage gave events %v; want an EventStop", kinds)
		}

		// The outage ends with one acceptance; the server's stop has
		// minutes to run.
		mode = "accept"
		get()
		mode = "refuse"
		sends = 0
		get()
		if sends != 1 {
			t.Errorf("a refusal just after the server reported abnormal usage was sent %d times; want once, retries stopped for ten minutes", sends)
		}
	})
}

// The same in the stop itself: a second abnormal-usage-detected report
// nine minutes into the ten-minute stop is read and renews the stop, with
// an EventStop; two minutes later (eleven after the first report, two
// after the second) refusals are still not retried.
func TestAbnormalUsageDuringStopRenewsIt(t *testing.T) {
	const abnormal = `{"type":"https://iana.org/assignments/http-problem-types#abnormal-usage-detected","detail":"stop"}`
	synctest.Test(t, func(t *testing.T) {
		mode := "abnormal"
		sends := 0
		var kinds []polite.EventKind
		tr := &polite.Transport{
			MaxWait: time.Hour,
			OnEvent: func(e polite.Event) { kinds = append(kinds, e.Kind) },
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sends++
				if mode == "abnormal" {
					h := http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}
					return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: h,
						Body: io.NopCloser(strings.NewReader(abnormal)), ContentLength: int64(len(abnormal)), Request: r}, nil
				}
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"1"}},
					Body: http.NoBody, Request: r}, nil
			}),
		}
		get := func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/x", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		get() // the first report: retries stop for ten minutes
		time.Sleep(9 * time.Minute)
		kinds = nil
		get() // the second
		sawStop := false
		for _, k := range kinds {
			sawStop = sawStop || k == polite.EventStop
		}
		if !sawStop {
			t.Errorf("a second abnormal-usage-detected report during the stop gave events %v; want an EventStop", kinds)
		}
		time.Sleep(2 * time.Minute)
		mode, sends = "refuse", 0
		get()
		if sends != 1 {
			t.Errorf("a refusal two minutes after the second report was sent %d times; want once, retries stopped ten minutes from it", sends)
		}
	})
}
