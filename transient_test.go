package polite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// errReset is what net/http returns when the server resets the connection.
var errReset = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}

// flaky is a server that fails every third request it receives, by turns
// with a connection reset and with a 502, and answers the others; it
// counts what it received, by the task named in X-Task.
type flaky struct {
	latency  time.Duration // of every answer
	mu       sync.Mutex
	n        int
	received map[string]int
}

func (f *flaky) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	f.mu.Lock()
	f.n++
	n := f.n
	if f.received == nil {
		f.received = map[string]int{}
	}
	f.received[req.Header.Get("X-Task")]++
	f.mu.Unlock()
	if f.latency > 0 {
		time.Sleep(f.latency)
	}
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: 2, Request: req}
	switch {
	case n%6 == 3:
		return nil, errReset
	case n%6 == 0:
		resp.StatusCode = http.StatusBadGateway
		resp.Body = io.NopCloser(strings.NewReader("bad gateway"))
		resp.ContentLength = 11
	}
	return resp, nil
}

// task is one request of the flaky run.
type task struct {
	method, key string
	body        bool
}

func (tk task) idempotent() bool { return tk.method != http.MethodPost || tk.key != "" }

func TestRetryTransientFlakyServer(t *testing.T) {
	// 60 tasks, by turns: GET, PUT, POST without an Idempotency-Key, GET,
	// DELETE, POST with one.
	var tasks []task
	for range 10 {
		tasks = append(tasks, task{method: http.MethodGet}, task{method: http.MethodPut, body: true},
			task{method: http.MethodPost, body: true}, task{method: http.MethodGet},
			task{method: http.MethodDelete}, task{method: http.MethodPost, body: true, key: "k"})
	}
	tests := []struct {
		workers int
		latency time.Duration // of every answer
		allOK   bool          // every idempotent task ends ok
	}{
		{1, 0, true},
		{1, 50 * time.Millisecond, true},
		// Four at once fail faster than the retry budget refills (a third
		// of the requests fail, and retries may use a fifth of the first
		// attempts plus two a second): the retries it cannot afford wait
		// for it, and every idempotent task still ends ok.
		{4, 0, true},
		{4, 50 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d workers, latency %v", tt.workers, tt.latency), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &flaky{latency: tt.latency}
				ev := &events{}
				tr := &polite.Transport{Base: srv, RetryTransient: true, OnEvent: ev.on}
				c := &http.Client{Transport: tr}
				var (
					mu      sync.Mutex
					outcome = map[string]int{} // "ok", "502", "error" by idempotent or not
					next    atomic.Int64
					wg      sync.WaitGroup
				)
				start := time.Now()
				for range tt.workers {
					wg.Go(func() {
						for {
							i := int(next.Add(1)) - 1
							if i >= len(tasks) {
								return
							}
							tk := tasks[i]
							var body io.Reader
							if tk.body {
								body = strings.NewReader("payload")
							}
							req, _ := http.NewRequestWithContext(t.Context(), tk.method, "http://api.test/items", body)
							req.Header.Set("X-Task", fmt.Sprint(i))
							if tk.key != "" {
								req.Header.Set("Idempotency-Key", fmt.Sprint(i))
							}
							res := "ok"
							resp, err := c.Do(req)
							switch {
							case err != nil:
								res = "error"
								if !errors.Is(err, syscall.ECONNRESET) {
									t.Errorf("task %d: %v, want the reset itself", i, err)
								}
							case resp.StatusCode != http.StatusOK:
								res = fmt.Sprint(resp.StatusCode)
								fallthrough
							default:
								io.Copy(io.Discard, resp.Body)
								resp.Body.Close()
							}
							kind := "idempotent"
							if !tk.idempotent() {
								kind = "POST without a key"
							}
							mu.Lock()
							outcome[kind+" "+res]++
							mu.Unlock()
						}
					})
				}
				wg.Wait()

				idem := 0
				for i, tk := range tasks {
					n := srv.received[fmt.Sprint(i)]
					if tk.idempotent() {
						idem++
					} else if n != 1 {
						t.Errorf("task %d (POST without a key) received %d times, want once", i, n)
					}
				}
				reasons := map[polite.Reason]int{}
				for _, e := range ev.of(polite.EventGiveUp) {
					reasons[e.Reason]++
				}
				if tt.allOK && outcome["idempotent ok"] != idem {
					t.Errorf("outcomes %v, want all %d idempotent tasks ok", outcome, idem)
				}
				if failed := idem - outcome["idempotent ok"]; failed != reasons[polite.ReasonRetryBudget] {
					t.Errorf("%d idempotent tasks failed and %d were denied by the retry budget, want the same", failed, reasons[polite.ReasonRetryBudget])
				}
				if tt.workers == 1 && outcome["POST without a key ok"] == 10 {
					t.Error("no POST without a key met a failure: the run shows nothing of them")
				}
				t.Logf("%d workers, latency %v: %d tasks (%d idempotent) in %v virtual; the server received %d requests; %d retries; give-ups by reason %v; outcomes %v",
					tt.workers, tt.latency, len(tasks), idem, time.Since(start), srv.n, len(ev.of(polite.EventRetry)), reasons, outcome)
				for _, e := range ev.of(polite.EventRetry) {
					if e.Reason != polite.ReasonTransient || (e.Status != 0) != (e.Err == nil) || (e.Status != 0 && e.Status != 502) {
						t.Errorf("EventRetry %+v, want reason transient, and status 502 or an error", e)
					}
				}
			})
		})
	}
}

// Off, the default: a reset and a 502 go back at once, without an event.
func TestRetryTransientOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &flaky{n: 2} // the next request is reset, the third after it gets 502
		ev := &events{}
		c := &http.Client{Transport: &polite.Transport{Base: srv, OnEvent: ev.on}}
		if _, err := c.Get("http://api.test/"); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("reset: %v", err)
		}
		srv.n = 5
		resp, err := c.Get("http://api.test/")
		if err != nil || resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("502: %v %v", resp, err)
		}
		resp.Body.Close()
		if srv.n != 6 || len(ev.all) != 0 {
			t.Errorf("%d requests, events %+v; want one each, no event", srv.n, ev.all)
		}
	})
}

// A 504's Retry-After is a floor for the request's own wait; the origin
// does not pause: another request goes meanwhile.
func TestRetryTransientRetryAfterFloorNoPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		sent := map[string][]time.Duration{}
		start := time.Now()
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			sent[req.URL.Path] = append(sent[req.URL.Path], time.Since(start))
			n := len(sent[req.URL.Path])
			mu.Unlock()
			resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}
			if req.URL.Path == "/gw" && n == 1 {
				resp.StatusCode = http.StatusGatewayTimeout
				resp.Header.Set("Retry-After", "5")
			}
			return resp, nil
		})
		c := &http.Client{Transport: &polite.Transport{Base: base, RetryTransient: true}}
		done := make(chan struct{})
		go func() {
			if resp, err := c.Get("http://api.test/gw"); err == nil {
				resp.Body.Close()
			}
			close(done)
		}()
		synctest.Wait()
		time.Sleep(time.Second)
		get(t, c, "http://api.test/other")
		<-done
		if g, o := sent["/gw"], sent["/other"]; len(g) != 2 || g[1] != 5*time.Second || len(o) != 1 || o[0] != time.Second {
			t.Errorf("/gw sent at %v, /other at %v; want /gw at 0s and 5s, /other at 1s", g, o)
		}
	})
}

// The wait before a transient failure's retry is reported with
// ReasonTransient, as the retry is; ReasonBackoff is a refusal's. Before,
// its EventWait said "backoff".
func TestRetryTransientWaitReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		var waits []polite.Event
		tr := &polite.Transport{
			RetryTransient: true,
			OnEvent: func(e polite.Event) {
				if e.Kind == polite.EventWait {
					waits = append(waits, e)
				}
			},
			Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if n++; n == 1 {
					return nil, errReset
				}
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
			}),
		}
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(waits) != 1 || waits[0].Reason != polite.ReasonTransient {
			t.Errorf("wait events %+v; want one, with reason %q", waits, polite.ReasonTransient)
		}
	})
}

// Transient retries share MaxAttempts and the key's retry budget with
// refusals.
func TestRetryTransientBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends atomic.Int64
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			sends.Add(1)
			return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		})
		ev := &events{}
		c := &http.Client{Transport: &polite.Transport{Base: base, RetryTransient: true, MaxAttempts: 3, OnEvent: ev.on}}
		resp, err := c.Get("http://api.test/")
		if err != nil || resp.StatusCode != http.StatusBadGateway || sends.Load() != 3 {
			t.Fatalf("got %v %v after %d sends, want the 502 after 3", resp, err, sends.Load())
		}
		resp.Body.Close()
		if r, g := ev.of(polite.EventRetry), ev.of(polite.EventGiveUp); len(r) != 2 || len(g) != 1 || g[0].Reason != polite.ReasonTransient || g[0].Status != 502 {
			t.Errorf("retries %+v, give-ups %+v; want 2 and 1 (transient, 502)", r, g)
		}

		// Many at once: the budget spaces out the retries it cannot afford
		// at once; none is dropped.
		ev2 := &events{}
		c = &http.Client{Transport: &polite.Transport{Base: base, RetryTransient: true, MaxAttempts: 2, OnEvent: ev2.on}}
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				if resp, err := c.Get("http://other.test/"); err == nil {
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		denied := 0
		for _, e := range ev2.of(polite.EventGiveUp) {
			if e.Reason == polite.ReasonRetryBudget {
				denied++
			}
		}
		if r := len(ev2.of(polite.EventRetry)); r != 10 || denied != 0 {
			t.Errorf("%d retries and %d denied by the retry budget, want 10 and none (see TestDecideTransient for the spacing)", r, denied)
		}
	})
}

// A request whose context has ended is never retried, even on an error
// that would be transient otherwise; a backoff wait ends with the context,
// and a wait that would outlast the deadline is not begun.
func TestRetryTransientContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends atomic.Int64
		var cancel context.CancelFunc
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			sends.Add(1)
			if cancel != nil {
				cancel()
			}
			return nil, errReset
		})
		c := &http.Client{Transport: &polite.Transport{Base: base, RetryTransient: true}}

		var ctx context.Context
		ctx, cancel = context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		if _, err := c.Do(req); !errors.Is(err, syscall.ECONNRESET) || sends.Load() != 1 {
			t.Errorf("ended during the send: %v after %d sends, want the reset after 1", err, sends.Load())
		}

		cancel = nil
		sends.Store(0)
		ctx, stop := context.WithCancel(t.Context())
		time.AfterFunc(300*time.Millisecond, stop) // the backoff is 1s ±50%
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		start := time.Now()
		if _, err := c.Do(req); !errors.Is(err, context.Canceled) || sends.Load() != 1 || time.Since(start) != 300*time.Millisecond {
			t.Errorf("canceled during the backoff: %v after %d sends and %v, want context.Canceled after 1 and 300ms", err, sends.Load(), time.Since(start))
		}

		sends.Store(0)
		c.Timeout = 400 * time.Millisecond
		start = time.Now()
		if _, err := c.Get("http://api.test/"); !errors.Is(err, syscall.ECONNRESET) || sends.Load() != 1 || time.Since(start) != 0 {
			t.Errorf("a deadline sooner than the backoff: %v after %d sends and %v, want the reset at once", err, sends.Load(), time.Since(start))
		}
	})
}

// An answer that arrives once the request's context has ended (here
// cancelled during the send, as TestRetryTransientContext does for a
// reset) is not retried: "never once the request's context has ended"
// (Transport.RetryTransient). A 502, and a 429 likewise, comes back as the
// reset does: after one send, with no retry event. Before, the Transport
// reported an EventRetry it never performed, drained and closed the
// answer, and returned context.Canceled (the 429 until a round later).
func TestAnswerAfterContextEnded(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
	}{
		{http.StatusBadGateway, "bad gateway"},
		{http.StatusTooManyRequests, "slow down"},
	} {
		t.Run(strconv.Itoa(c.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sends atomic.Int64
				var cancel context.CancelFunc
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					sends.Add(1)
					cancel() // the context ends during the send
					return &http.Response{StatusCode: c.status, Header: http.Header{"Retry-After": {"1"}},
						Body: io.NopCloser(strings.NewReader(c.body)), ContentLength: int64(len(c.body)), Request: req}, nil
				})
				ev := &events{}
				tr := &polite.Transport{Base: base, RetryTransient: true, OnEvent: ev.on}
				var ctx context.Context
				ctx, cancel = context.WithCancel(t.Context())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				if err != nil || resp == nil || resp.StatusCode != c.status {
					t.Errorf("context ended during the send of a %d: got resp=%v err=%v, want it back (not retried)", c.status, resp, err)
				}
				if r := ev.of(polite.EventRetry); len(r) != 0 {
					t.Errorf("%d EventRetry for a request whose context had already ended (never retried: %d sends), want 0", len(r), sends.Load())
				}
				// A give-up, as for any answer that goes back: the 502 had
				// none before.
				if g := ev.of(polite.EventGiveUp); len(g) != 1 {
					t.Errorf("%d EventGiveUp for the %d handed back, want 1", len(g), c.status)
				}
			})
		})
	}
}

// pipeBody is a streamed body that ends when closed.
type pipeBody struct {
	once   sync.Once
	closed chan struct{}
	first  atomic.Bool
}

func (b *pipeBody) Read(p []byte) (int, error) {
	if b.first.CompareAndSwap(false, true) {
		return copy(p, "<html>"), nil
	}
	<-b.closed
	return 0, io.EOF
}

func (b *pipeBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// "A request counts as in flight until its response body is read to its
// end, fails or is closed ... A refusal ends its request with its headers"
// (doc.go "Streaming responses"). A 502 is not a refusal: its streamed
// body holds its slot, with RetryTransient or without. With it, a 502
// that could not go again (a POST, never resent) was handed back with its
// body unwrapped, its request no longer in flight: MaxConcurrency 1 let a
// second request go while the first body still streamed. So was, after
// that fix, a GET whose retry was denied (Retry-After beyond MaxWait).
func TestTransientGiveUpStreamHoldsSlot(t *testing.T) {
	for _, c := range []struct {
		name       string
		retry      bool
		method     string
		retryAfter string
	}{
		{"RetryTransient off", false, http.MethodPost, ""},
		{"RetryTransient on", true, http.MethodPost, ""},
		{"RetryTransient on, retry denied", true, http.MethodGet, "3600"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var sent []time.Duration
				start := time.Now()
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					mu.Lock()
					defer mu.Unlock()
					sent = append(sent, time.Since(start))
					if len(sent) == 1 {
						h := http.Header{}
						if c.retryAfter != "" {
							h.Set("Retry-After", c.retryAfter)
						}
						return &http.Response{StatusCode: http.StatusBadGateway, Header: h,
							Body: &pipeBody{closed: make(chan struct{})}, ContentLength: -1, Request: req}, nil
					}
					return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
				})
				tr := &polite.Transport{Base: base, RetryTransient: c.retry, MaxConcurrency: 1, MaxWait: time.Minute}
				req, _ := http.NewRequestWithContext(t.Context(), c.method, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil || resp.StatusCode != http.StatusBadGateway {
					t.Fatalf("%s: %v %v, want the 502", c.method, resp, err)
				}
				resp.Body.Read(make([]byte, 16))
				time.AfterFunc(3*time.Second, func() { resp.Body.Close() })
				req2, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
				resp2, err := tr.RoundTrip(req2)
				if err != nil {
					t.Fatal(err)
				}
				resp2.Body.Close()
				mu.Lock()
				defer mu.Unlock()
				if len(sent) != 2 || sent[1] != 3*time.Second {
					t.Errorf("sent at %v; want the GET at 3s, when the streamed 502 body was closed (MaxConcurrency 1)", sent)
				}
			})
		})
	}
}

// The wait before a transient retry runs while the failed response's body
// is drained, as a refusal's does: a 502 with Retry-After: 2 whose body
// trickles is retried 2s after it arrived, within a deadline of 2.5s the
// wait was judged to fit. The wait started after the drain (1s) before,
// and the request failed with the deadline, the 502 lost.
func TestTransientWaitRunsDuringDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends []time.Time
		tr := &polite.Transport{RetryTransient: true, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sends = append(sends, time.Now())
			if len(sends) == 1 {
				return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{"Retry-After": {"2"}},
					Body: polite.NewStuckBody(), ContentLength: -1, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
		defer cancel()
		resp, err := tr.RoundTrip(httptest.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil))
		if err != nil {
			t.Errorf("RoundTrip error %v after %d sends (the second at %v); want the retry 2s after the 502", err, len(sends), time.Since(sends[0]))
			return
		}
		resp.Body.Close()
		if len(sends) != 2 || sends[1].Sub(sends[0]) != 2*time.Second {
			t.Errorf("retried %v after the 502; want 2s (Retry-After)", sends[len(sends)-1].Sub(sends[0]))
		}
	})
}
