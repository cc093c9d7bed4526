package polite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// chat posts an OpenAI chat completion of task through c to the token
// handler's API, and returns the status; ctx may be nil.
func chat(t *testing.T, c *http.Client, ctx context.Context, task ratelimittest.TokenTask) (int, error) {
	t.Helper()
	if ctx == nil {
		ctx = t.Context()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/chat/completions", strings.NewReader(task.Body(ratelimittest.OpenAIAPI)))
	return statusOf(c, req)
}

// statusOf sends req through c and returns its status, its body read and
// closed.
func statusOf(c *http.Client, req *http.Request) (int, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestTokensSpentWaits is the case of a new user: the token quota is
// spent (remaining-tokens 0) while requests remain. The next request waits
// for the tokens it needs, a fraction of the reset, and is not refused.
func TestTokensSpentWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 6000 tokens a minute: 100 a second.
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 500, Tokens: 6000})
		c, _ := politeOver(h)
		if code, err := chat(t, c, nil, ratelimittest.TokenTask{Input: 3000, MaxOutput: 3000}); code != http.StatusOK {
			t.Fatalf("first request: %d, %v", code, err)
		}
		start := time.Now()
		if code, err := chat(t, c, nil, ratelimittest.TokenTask{Input: 100, MaxOutput: 100}); code != http.StatusOK {
			t.Fatalf("second request: %d, %v", code, err)
		}
		// 200 tokens at 100 a second, not the minute until the quota is
		// whole.
		if d := time.Since(start); d < 2*time.Second || d > 2100*time.Millisecond {
			t.Errorf("waited %v, want 2s", d)
		}
		if st := h.Stats(); st.Refused != 0 {
			t.Errorf("%d refused, want 0", st.Refused)
		}
	})
}

// TestCostOncePerRequest checks that Transport.Cost is called once per
// request, whatever its retries, and that a cost declared with WithCost
// takes its place.
func TestCostOncePerRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n++; n <= 2 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		var calls atomic.Int64
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Cost: func(r *http.Request) polite.Cost {
			calls.Add(1)
			return polite.Cost{Tokens: 10}
		}}
		c := &http.Client{Transport: tr}
		get(t, c, "http://api.test/")
		if n != 3 || calls.Load() != 1 {
			t.Errorf("%d attempts, Cost called %d times; want 3 and 1", n, calls.Load())
		}
		req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), polite.Cost{Tokens: 5}), http.MethodGet, "http://api.test/", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if calls.Load() != 1 {
			t.Errorf("Cost called for a request whose context declares its cost")
		}
	})
}

// sharedBody is a request body whose GetBody seeks the one reader back to
// its start and hands it out again, as the official OpenAI and Anthropic
// SDKs do for a *bytes.Reader body (and Anthropic's SigV4 middleware for
// every request): Body and GetBody share it. It counts the closes of the
// request's own Body.
type sharedBody struct {
	r      *bytes.Reader
	closed atomic.Int32
}

func (b *sharedBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *sharedBody) Close() error               { b.closed.Add(1); return nil }

func (b *sharedBody) request(t *testing.T, url string) *http.Request {
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, nil)
	req.Body, req.ContentLength = b, b.r.Size()
	req.GetBody = func() (io.ReadCloser, error) {
		_, err := b.r.Seek(0, io.SeekStart)
		return io.NopCloser(b.r), err
	}
	return req
}

// A GetBody that shares its reader with the request's Body: the estimate
// (the default one, or a Transport.Cost that calls EstimateCost) read it
// to its end before the first attempt, which then sent Body as it was
// left, empty (through net/http: "http: ContentLength=N with Body length
// 0"). The first attempt sends a copy from GetBody, and the request's own
// Body is closed once.
func TestEstimateSharedGetBody(t *testing.T) {
	const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Write a haiku about rate limits."}],"max_tokens":100}`
	for _, tc := range []struct {
		name string
		cost func(*http.Request) polite.Cost
		path string
	}{
		{"default estimate", nil, "/v1/chat/completions"},
		{"Cost calling EstimateCost", polite.EstimateCost, "/v1/chat/completions"},
		{"no estimate: not an LLM API", nil, "/upload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				b, _ := io.ReadAll(r.Body)
				r.Body.Close()
				got = append(got, string(b))
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			sb := &sharedBody{r: bytes.NewReader([]byte(body))}
			req := sb.request(t, "https://llm.example"+tc.path)
			resp, err := (&polite.Transport{Base: base, Cost: tc.cost}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(got) != 1 || got[0] != body {
				t.Errorf("server received %q, want one body of %d bytes", got, len(body))
			}
			if n := sb.closed.Load(); n != 1 {
				t.Errorf("request's Body closed %d times, want 1", n)
			}
		})
	}
	// GetBody failing for the first attempt's copy: the request is not
	// sent, fails with GetBody's error, and its Body is closed once.
	t.Run("GetBody fails", func(t *testing.T) {
		var sends atomic.Int32
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sends.Add(1)
			r.Body.Close()
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		sb := &sharedBody{r: bytes.NewReader([]byte(body))}
		req := sb.request(t, "https://llm.example/v1/chat/completions")
		get, calls := req.GetBody, 0
		errGone := errors.New("body gone")
		req.GetBody = func() (io.ReadCloser, error) {
			if calls++; calls > 1 {
				return nil, errGone
			}
			return get()
		}
		_, err := (&polite.Transport{Base: base}).RoundTrip(req)
		if !errors.Is(err, errGone) || sends.Load() != 0 || sb.closed.Load() != 1 {
			t.Errorf("RoundTrip: %v (want %v), sent %d times (want 0), Body closed %d times (want 1)", err, errGone, sends.Load(), sb.closed.Load())
		}
	})
}

// TestCostError checks that a request costing more than a whole quota
// fails at once with a *CostError, without being sent, and that its body
// is closed.
func TestCostError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 500, Tokens: 6000})
		for _, custom := range []bool{false, true} {
			h.Reset()
			tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
			if custom {
				tr.Key = func(*http.Request) string { return "sk-secret" }
			}
			c := &http.Client{Transport: tr}
			if code, err := chat(t, c, nil, ratelimittest.TokenTask{Input: 100, MaxOutput: 100}); code != http.StatusOK {
				t.Fatalf("first request: %d, %v", code, err)
			}
			start := time.Now()
			body := &closeCheck{Reader: strings.NewReader(ratelimittest.TokenTask{Input: 5000, MaxOutput: 1001}.Body(ratelimittest.OpenAIAPI))}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://llm.example/v1/chat/completions", body)
			req.GetBody = func() (io.ReadCloser, error) {
				return io.NopCloser(strings.NewReader(ratelimittest.TokenTask{Input: 5000, MaxOutput: 1001}.Body(ratelimittest.OpenAIAPI))), nil
			}
			_, err := tr.RoundTrip(req)
			var ce *polite.CostError
			if !errors.As(err, &ce) || !errors.Is(err, polite.ErrCostExceedsQuota) {
				t.Fatalf("err = %v, want a *CostError", err)
			}
			if ce.Unit != "tokens" || ce.Cost != 6001 || ce.Limit != 6000 {
				t.Errorf("CostError = %+v, want 6001 tokens over 6000", *ce)
			}
			if custom && (strings.Contains(err.Error(), "sk-secret") || !strings.HasPrefix(ce.Key, "key-")) {
				t.Errorf("a custom key shows: %v", err)
			}
			if !custom && ce.Key != "http://llm.example" {
				t.Errorf("Key = %q", ce.Key)
			}
			if time.Since(start) != 0 || h.Stats().Requests != 1 || !body.closed {
				t.Errorf("waited %v, server saw %d requests, body closed %v; want at once, 1, true", time.Since(start), h.Stats().Requests, body.closed)
			}
		}
	})
}

type closeCheck struct {
	io.Reader
	closed bool
}

func (c *closeCheck) Close() error { c.closed = true; return nil }

// TestTokenRefusalWaitsForTokens checks a refusal on tokens that polite
// did not foresee (another client spent them): without Retry-After, the
// retry waits for the tokens the request lacks, not a bare backoff nor
// the whole reset, and succeeds.
func TestTokenRefusalWaitsForTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 500, Tokens: 6000})
		var events []polite.Event
		var mu sync.Mutex
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, OnEvent: func(e polite.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}}
		c := &http.Client{Transport: tr}
		chat(t, c, nil, ratelimittest.TokenTask{Input: 1001, MaxOutput: 100})
		// Another client takes 4000 tokens behind polite's back.
		other := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}
		if code, _ := chat(t, other, nil, ratelimittest.TokenTask{Input: 2000, MaxOutput: 2000}); code != http.StatusOK {
			t.Fatal("the other client was refused")
		}
		start := time.Now()
		if code, err := chat(t, c, nil, ratelimittest.TokenTask{Input: 1000, MaxOutput: 500}); code != http.StatusOK {
			t.Fatalf("request: %d, %v", code, err)
		}
		// 899 tokens left, 1500 needed: 601 at 100 a second.
		if d := time.Since(start); d < 6*time.Second || d > 6100*time.Millisecond {
			t.Errorf("took %v, want about 6.01s", d)
		}
		mu.Lock()
		defer mu.Unlock()
		retried := false
		for _, e := range events {
			if e.Kind == polite.EventRetry {
				retried = true
				if e.Reason != polite.ReasonQuota {
					t.Errorf("retry for %v, want %v", e.Reason, polite.ReasonQuota)
				}
			}
		}
		if !retried {
			t.Error("no retry")
		}
		st, _ := tr.Inspect("http://llm.example", time.Now())
		if st.Learned != nil || st.HintsDistrustedUntil.After(time.Now()) {
			t.Errorf("a refusal on tokens was taken as a lie: %+v", st)
		}
	})
}

// TestInspectTokens checks what Inspect shows of a token quota: its
// limit, what the requests in flight reserve, what is left, its refill,
// and what a request of a given cost would wait.
func TestInspectTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 500, Tokens: 6000, Latency: 10 * time.Second})
		c, tr := politeOver(h)
		chat(t, c, nil, ratelimittest.TokenTask{Input: 1001, MaxOutput: 100})
		// 10 s later, 5899 left, refilling at about 100 a second. One
		// request in flight reserves 2000.
		go chat(t, c, nil, ratelimittest.TokenTask{Input: 1000, MaxOutput: 1000})
		synctest.Wait()
		st, ok := tr.Inspect("http://llm.example/v1/chat/completions", time.Now())
		if !ok {
			t.Fatal("no state")
		}
		var tok *polite.PolicyState
		for i := range st.Policies {
			if st.Policies[i].Unit == "tokens" {
				tok = &st.Policies[i]
			}
		}
		if tok == nil {
			t.Fatalf("no tokens policy: %+v", st.Policies)
		}
		if tok.Quota != 6000 || tok.Reserved != 2000 || tok.Remaining != 3899 || tok.Refill < 99 || tok.Refill > 100 || !st.At.Equal(time.Now()) {
			t.Errorf("tokens = %+v, want quota 6000, 2000 reserved, 3899 left, about 100/s", *tok)
		}
		// 500 tokens lacking: about 5 s.
		if d, err := st.WaitFor(polite.Cost{InputTokens: 3000, OutputTokens: 1399}); err != nil || d < 5*time.Second || d > 5060*time.Millisecond {
			t.Errorf("WaitFor(4399 tokens) = %v, %v; want about 5s", d, err)
		}
		if d, err := st.WaitFor(polite.Cost{Tokens: 100}); err != nil || d != 0 {
			t.Errorf("WaitFor(100 tokens) = %v, %v; want 0", d, err)
		}
		var ce *polite.CostError
		if _, err := st.WaitFor(polite.Cost{Tokens: 6001}); !errors.As(err, &ce) || ce.Limit != 6000 {
			t.Errorf("WaitFor(6001 tokens) = %v, want a *CostError", err)
		}
		synctest.Wait()
		time.Sleep(10 * time.Second)
	})
}

// TestTokenReservationsShared checks that two Budgets sharing a Store
// (two processes, say) share their reservations: together they are never
// refused.
func TestTokenReservationsShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 500, Tokens: 20000, Latency: time.Second})
		st := newBytesStore()
		clients := []*http.Client{
			{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}}},
			{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}}},
		}
		tasks := tokenWorkload(60)
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= len(tasks) {
						return
					}
					if code, err := chat(t, clients[w%2], nil, tasks[i]); code != http.StatusOK {
						t.Errorf("task %d: %d, %v", i, code, err)
					}
				}
			})
		}
		wg.Wait()
		if s := h.Stats(); s.Refused != 0 {
			t.Errorf("%d refused, want 0", s.Refused)
		}
	})
}

// TestWaitForStaleLimit checks that WaitFor fails a cost beyond a whole
// quota as the Transport does: only while the limit is fresh (a minute, or
// its window). Two minutes after a limit of 400 was stated, the Transport
// sends a request of 500 tokens (the server has raised its limit), and
// WaitFor returned a *CostError for it.
func TestWaitForStaleLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var limit atomic.Int64
		limit.Store(400)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l := strconv.FormatInt(limit.Load(), 10)
			w.Header().Set("X-Ratelimit-Limit-Tokens", l)
			w.Header().Set("X-Ratelimit-Remaining-Tokens", l)
			w.Header().Set("X-Ratelimit-Reset-Tokens", "0s")
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
		send := func() error {
			req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), polite.Cost{Tokens: 500}), http.MethodGet, "http://llm.example/", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		start := time.Now()
		send()
		limit.Store(1000)
		for _, after := range []time.Duration{30 * time.Second, 90 * time.Second} {
			time.Sleep(after - time.Since(start))
			st, _ := tr.Inspect("http://llm.example", time.Now())
			_, werr := st.WaitFor(polite.Cost{Tokens: 500})
			if err := send(); (werr == nil) != (err == nil) {
				t.Errorf("%v after the limit of 400: WaitFor(500 tokens) = %v, RoundTrip = %v", after, werr, err)
			}
		}
	})
}

// openAIHeaders sets what an OpenAI answer states: tokens limit 6000.
func openAIHeaders(w http.ResponseWriter, remaining string) {
	w.Header().Set("x-ratelimit-limit-requests", "500")
	w.Header().Set("x-ratelimit-remaining-requests", "499")
	w.Header().Set("x-ratelimit-reset-requests", "120ms")
	w.Header().Set("x-ratelimit-limit-tokens", "6000")
	w.Header().Set("x-ratelimit-remaining-tokens", remaining)
	w.Header().Set("x-ratelimit-reset-tokens", "10s")
}

// TestCostErrorBeforeCeiling: a request whose cost exceeds a whole quota
// "fails at once, without waiting" (CostError), a local ceiling holding
// it or not, the Budget's state in memory or in a Store. With
// MaxConcurrency 1 and another request in flight, it waited for that
// request first; on a Store, it did still, the check reading the
// fallback, which holds no quota while the Store answers.
func TestCostErrorBeforeCeiling(t *testing.T) {
	for _, store := range []bool{false, true} {
		t.Run(fmt.Sprintf("store=%v", store), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { costErrorBeforeCeiling(t, store) })
		})
	}
}

func costErrorBeforeCeiling(t *testing.T, store bool) {
	var st polite.Store
	if store {
		st = newBytesStore()
	}
	tr, release := slotHeld(t, st, 0, nil)
	released := make(chan struct{})
	go func() { time.Sleep(30 * time.Second); release(); close(released) }()
	defer func() { <-released }()
	start := time.Now()
	err := sendCost(t, tr, polite.Cost{Tokens: 10000}) // beyond the whole quota of 6000
	d := time.Since(start)
	var ce *polite.CostError
	if !errors.As(err, &ce) || d > 0 {
		t.Errorf("a request beyond the whole quota: err %v after %v; want a *CostError at once", err, d)
	}
}

// countStore counts the Updates of a MemoryStore: one per look at a key.
type countStore struct {
	polite.MemoryStore
	n atomic.Int64
}

func (s *countStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	s.n.Add(1)
	return s.MemoryStore.Update(ctx, key, fn)
}

// TestWholeQuotaLooksOnRelease: a request that only a request in flight
// ending can make room for (the token quota is already whole; the other's
// reservation holds it) looks again when that request ends. It looked
// again every (lacking tokens)/rate: every millisecond for the 10 s the
// other request was in flight.
func TestWholeQuotaLooksOnRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n++
			rem := "0"
			if n == 2 {
				time.Sleep(10 * time.Second) // a long completion
				rem = "10"
			}
			w.Header().Set("x-ratelimit-limit-requests", "500")
			w.Header().Set("x-ratelimit-remaining-requests", "499")
			w.Header().Set("x-ratelimit-reset-requests", "120ms")
			w.Header().Set("x-ratelimit-limit-tokens", "60000")
			w.Header().Set("x-ratelimit-remaining-tokens", rem)
			w.Header().Set("x-ratelimit-reset-tokens", "1m0s")
		})
		st := &countStore{}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}}
		do := func(c polite.Cost) error { return sendCost(t, tr, c) }
		if err := do(polite.Cost{Tokens: 1}); err != nil { // 0 of 60000 left, whole in a minute
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute) // whole again
		done := make(chan struct{})
		go func() { do(polite.Cost{Tokens: 59990}); close(done) }()
		synctest.Wait() // in flight, reserving 59990
		before := st.n.Load()
		if err := do(polite.Cost{Tokens: 11}); err != nil {
			t.Fatal(err)
		}
		<-done
		if looks := st.n.Load() - before; looks > 50 {
			t.Errorf("the held request looked at the key %d times while the other was in flight 10 s", looks)
		}
	})
}

// TestStaleLimitUnderCeiling: a limit heard of two minutes ago is stale:
// the budget lets a request beyond it go (see TestWaitForStaleLimit), and
// so does a local ceiling that holds it (MaxConcurrency, another request
// in flight whose answer raises the limit): it is sent once the slot
// frees. The check made for a request a ceiling holds (see
// TestCostErrorBeforeCeiling) read every limit however old, and failed it
// with a CostError at once.
func TestStaleLimitUnderCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var limit atomic.Int64
		limit.Store(400)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				time.Sleep(5 * time.Second)
			}
			l := strconv.FormatInt(limit.Load(), 10)
			w.Header().Set("X-Ratelimit-Limit-Tokens", l)
			w.Header().Set("X-Ratelimit-Remaining-Tokens", l)
			w.Header().Set("X-Ratelimit-Reset-Tokens", "0s")
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxConcurrency: 1}
		send := func(path string, c polite.Cost) error {
			req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), c), http.MethodGet, "http://llm.example"+path, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := send("/", polite.Cost{Tokens: 100}); err != nil {
			t.Fatal(err)
		}
		limit.Store(1000) // the server raised it
		time.Sleep(2 * time.Minute)
		done := make(chan error, 1)
		go func() { done <- send("/slow", polite.Cost{Tokens: 1}) }()
		synctest.Wait() // in flight: MaxConcurrency holds the next
		start := time.Now()
		err := send("/", polite.Cost{Tokens: 500})
		if err != nil {
			t.Errorf("500 tokens, the limit of 400 stale two minutes, held by MaxConcurrency: %v after %v; want it sent once the slot frees", err, time.Since(start))
		}
		<-done
	})
}

// sendCost sends a GET costing c to llm.example through tr, reads its body
// and closes it.
func sendCost(t *testing.T, tr *polite.Transport, c polite.Cost) error {
	req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), c), http.MethodGet, "http://llm.example/v1/x", nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return err
}

// decodeStore is a bytesStore (every Update decodes and encodes the
// state) that records the stored forms KeyState.UnmarshalBinary rejects:
// each was written by KeyState.MarshalBinary.
type decodeStore struct {
	*bytesStore
	bad   atomic.Int64
	first atomic.Value
}

func (s *decodeStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	err := s.bytesStore.Update(ctx, key, fn)
	if err != nil && !errors.Is(err, errStoreDown) && ctx.Err() == nil {
		if s.bad.Add(1) == 1 {
			s.first.Store(err)
		}
	}
	return err
}

// 300 chat completions at once, well within their quotas, over a Store
// that keeps bytes: more than 64 in flight merge reservations. Before,
// between 112 and 234 Updates found a state that MarshalBinary wrote and
// UnmarshalBinary rejected.
func TestMergedReservationsStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 100000, Tokens: 10000000, Latency: time.Second})
		st := &decodeStore{bytesStore: newBytesStore()}
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}}}
		var wg sync.WaitGroup
		for range 300 {
			wg.Go(func() { chat(t, c, nil, ratelimittest.TokenTask{Input: 100, MaxOutput: 100}) })
		}
		wg.Wait()
		if n := st.bad.Load(); n != 0 {
			t.Errorf("%d Updates found a stored state that MarshalBinary wrote and UnmarshalBinary rejects: %v", n, st.first.Load())
		}
	})
}

// A (4000 tokens) reaches the server first and is slow; B (4000) comes
// second, is charged, and answers at once without rate-limit fields; A's
// answer then says what was left after A alone. C (4000) must wait for the
// next window: 1900 are left. Before, A's answer, taken whole as the
// latest, dropped B's charge, and C was sent into 1900 tokens and refused.
func TestUnstatedChargeSurvivesOlderAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tw := newTokenWindow()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ok, now, reset := tw.take(r)
			if r.URL.Path == "/b" {
				return // charged, but no fields: a proxy stripped them, say
			}
			w.Header().Set("RateLimit-Policy", `"tpm";q=10000;qu="tokens";w=60`)
			w.Header().Set("RateLimit", `"tpm";r=`+strconv.FormatInt(now, 10)+`;t=`+strconv.FormatInt(reset, 10))
			if !ok {
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			if r.URL.Path == "/a" {
				time.Sleep(time.Second)
			}
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1}
		send := func(path string, tokens int64) int {
			req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), polite.Cost{Tokens: tokens}), http.MethodGet, "http://llm.example"+path, nil)
			req.Header.Set("X-Cost", strconv.FormatInt(tokens, 10))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		send("/p", 100) // 9900 left
		done := make(chan int)
		go func() { done <- send("/a", 4000) }()
		synctest.Wait()  // A is at the server: 5900 left
		send("/b", 4000) // 1900 left
		<-done
		start := time.Now()
		if code := send("/c", 4000); code != http.StatusOK || tw.refused != 0 {
			t.Errorf("C: status %d after %v, %d refused; the server had 1900 tokens left, and C should have waited for the next window", code, time.Since(start), tw.refused)
		}
	})
}

// A refusal that first states a whole quota below the request's cost goes
// back to the caller: no wait can make room. Before, the request was
// resent, failed with a CostError ("the request was not sent") after the
// server had seen it, and the refusal was lost.
func TestCostRefusalStatingLimitGoesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent++
			w.Header().Set("x-ratelimit-limit-tokens", "4000")
			w.Header().Set("x-ratelimit-remaining-tokens", "4000")
			w.Header().Set("x-ratelimit-reset-tokens", "0s")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		var giveUp polite.Reason
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventGiveUp {
				giveUp = e.Reason
			}
		}}
		req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), polite.Cost{Tokens: 5000}), http.MethodGet, "http://llm.example/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip = %v after the server saw the request %d time(s); want its refusal", err, sent)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || sent != 1 {
			t.Errorf("RoundTrip = %d, sent %d times; want the 429, sent once", resp.StatusCode, sent)
		}
		if giveUp != polite.ReasonQuota {
			t.Errorf("give-up reason %q, want %q", giveUp, polite.ReasonQuota)
		}
	})
}

// A refusal that states a spent token quota but neither a reset nor a
// Retry-After gives no wait: a request with a cost backs off as one
// without (doc.go, Retries), not at a second's floor. Before, the cost
// quota that explained the refusal gave a wait of 0 as the server's, and
// the request was sent 8 times in 8 s.
func TestCostRefusalWithoutWaitBacksOff(t *testing.T) {
	for _, c := range []polite.Cost{{}, {Tokens: 100}} {
		t.Run(c.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var arrivals []time.Time
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					arrivals = append(arrivals, time.Now())
					w.Header().Set("x-ratelimit-limit-tokens", "1000")
					w.Header().Set("x-ratelimit-remaining-tokens", "0")
					w.WriteHeader(http.StatusTooManyRequests)
				})
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
				start := time.Now()
				sendCost(t, tr, c)
				// The shortest backoff of 7 retries (each at half its
				// step): 0.5+1+2+4+8+16+30 s.
				if took := time.Since(start); took < time.Minute {
					t.Errorf("%d attempts in %v; want exponential backoff, over a minute", len(arrivals), took)
				}
			})
		})
	}
}

// anthropicFields states Anthropic's quotas on w: input-tokens (limit
// 30000) and output-tokens (limit 8000) with their remaining and resets,
// and tokens, their sum, as Anthropic states it.
func anthropicFields(w http.ResponseWriter, in, out int64, inReset, outReset time.Duration) {
	now := time.Now()
	set := func(unit string, limit, rem int64, reset time.Duration) {
		w.Header().Set("anthropic-ratelimit-"+unit+"-limit", strconv.FormatInt(limit, 10))
		w.Header().Set("anthropic-ratelimit-"+unit+"-remaining", strconv.FormatInt(rem, 10))
		w.Header().Set("anthropic-ratelimit-"+unit+"-reset", now.Add(reset).UTC().Format(time.RFC3339))
	}
	set("input-tokens", 30000, in, inReset)
	set("output-tokens", 8000, out, outReset)
	set("tokens", 38000, in+out, max(inReset, outReset))
}

// A refusal with no Retry-After, explained by Anthropic's input tokens
// (500 left of the 1000 the request needs, refilled at 100 a second),
// waits what the request lacks at that rate: the derived tokens quota
// stated beside it is not read (DESIGN.md §10). Before, its reset, the
// time until it is whole (295 s), was taken as the wait.
func TestAnthropicRefusalSkipsDerivedTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var arrivals []time.Time
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrivals = append(arrivals, time.Now())
			switch len(arrivals) {
			case 1: // the refill rate: 1000 spent, whole in 10 s
				anthropicFields(w, 29000, 8000, 10*time.Second, 0)
			case 2:
				anthropicFields(w, 500, 8000, 295*time.Second, 0)
				w.WriteHeader(http.StatusTooManyRequests)
			default:
				anthropicFields(w, 29000, 8000, 10*time.Second, 0)
			}
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
		if err := sendCost(t, tr, polite.Cost{InputTokens: 100}); err != nil {
			t.Fatal(err)
		}
		if err := sendCost(t, tr, polite.Cost{InputTokens: 1000, OutputTokens: 4000}); err != nil {
			t.Fatal(err)
		}
		if len(arrivals) != 3 {
			t.Fatalf("%d requests reached the server, want 3", len(arrivals))
		}
		if d := arrivals[2].Sub(arrivals[1]); d > 30*time.Second {
			t.Errorf("refused request resent after %v; want the seconds 500 input tokens take to refill, not the tokens quota's reset (295 s)", d)
		}
	})
}

// A retry whose body GetBody cannot rewind is not sent, and costs
// nothing: its cost was charged to the tokens quota as if the server had
// counted it. Here the latest answer says 5000 of 6000 tokens remain,
// refilling, and nothing is sent after it: the charge (4000) left 2000,
// and a request of 3000 waited about 10 s for tokens the server had.
func TestUnsentRetryNotCharged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n++
			openAIHeaders(w, "5000")
			if n == 2 {
				// Refused by its requests quota, spent for a second:
				// the tokens are untouched.
				w.Header().Set("x-ratelimit-remaining-requests", "0")
				w.Header().Set("x-ratelimit-reset-requests", "1s")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}}
		if err := sendCost(t, tr, polite.Cost{Tokens: 1}); err != nil {
			t.Fatal(err)
		}
		errGone := errors.New("body gone")
		req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), polite.Cost{Tokens: 4000}), http.MethodPost, "http://llm.example/v1/x", strings.NewReader("x"))
		req.GetBody = func() (io.ReadCloser, error) { return nil, errGone }
		if _, err := tr.RoundTrip(req); !errors.Is(err, errGone) || n != 2 {
			t.Fatalf("RoundTrip: %v after %d sends, want GetBody's error after 2", err, n)
		}
		st, _ := tr.Inspect("http://llm.example", time.Now())
		for _, p := range st.Policies {
			if p.Unit == "tokens" && p.Remaining < 5000 {
				t.Errorf("tokens remaining %d after an attempt never sent, want at least the 5000 last stated", p.Remaining)
			}
		}
		start := time.Now()
		if err := sendCost(t, tr, polite.Cost{Tokens: 3000}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 0 {
			t.Errorf("a request of 3000 tokens with 5000 left waited %v", d)
		}
	})
}

// TestCostOverEstimatedBeyondLimit: a server whose tokenizer counts the
// prompt as 3/4 of the estimate (English prose is over-counted by about a
// third) admits these requests, estimated at 12,500 tokens against a limit
// of 10,000. Once the limit was known, polite failed the very request the
// server had just accepted with a *CostError; a cost the server accepted
// now waits for the whole quota.
func TestCostOverEstimatedBeyondLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 500, Tokens: 10000,
			Prompt: func(e int64) int64 { return e * 3 / 4 }})
		c, _ := politeOver(h)
		body := ratelimittest.TokenTask{Input: 12000, MaxOutput: 500}.Body(ratelimittest.OpenAIAPI)
		for i := range 3 {
			req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/chat/completions", strings.NewReader(body))
			resp, err := c.Do(req)
			var ce *polite.CostError
			if errors.As(err, &ce) {
				t.Fatalf("request %d: %v, though the server accepted the same request (admitted %d, refused %d)", i, err, h.Stats().Admitted, h.Stats().Refused)
			}
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("request %d: status %d", i, resp.StatusCode)
			}
		}
	})
}

// TestCostNegativeTokens: negative amounts count as zero, and a Tokens of
// zero is InputTokens plus OutputTokens. A negative Tokens was taken as a
// cost of 0 tokens, and the request went unpaced by the tokens quota: 3 of
// 10 sequential requests were refused.
func TestCostNegativeTokens(t *testing.T) {
	c := polite.Cost{Tokens: -1, InputTokens: 500, OutputTokens: 500}
	if got := c.In("tokens"); got != 1000 {
		t.Errorf("Cost%+v.In(\"tokens\") = %d, want 1000 (negative Tokens counts as zero: InputTokens+OutputTokens)", c, got)
	}
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 500, Tokens: 6000})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Cost: func(r *http.Request) polite.Cost {
			e := polite.EstimateCost(r)
			e.Tokens = -1
			return e
		}}
		cl := &http.Client{Transport: tr}
		for range 10 {
			body := ratelimittest.TokenTask{Input: 1000, MaxOutput: 1000}.Body(ratelimittest.OpenAIAPI)
			req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/chat/completions", strings.NewReader(body))
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if n := h.Stats().Refused; n != 0 {
			t.Errorf("%d of 10 sequential requests refused, want 0", n)
		}
	})
}

// TestCostAnthropicTokensQuotaOfItsOwn: an Anthropic-shaped server that
// enforces a tokens quota of its own (6,000) beside its input and output
// quotas (10,000 each): the tokens quota is not their sum, so it is
// charged as any quota. Taken as derived from them, it was never charged,
// and 6 of 12 sequential requests were refused.
func TestCostAnthropicTokensQuotaOfItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{API: ratelimittest.AnthropicAPI,
			Requests: 50, Tokens: 6000, InputTokens: 10000, OutputTokens: 10000})
		c, _ := politeOver(h)
		for range 12 {
			body := ratelimittest.TokenTask{Input: 500, MaxOutput: 1000}.Body(ratelimittest.AnthropicAPI)
			req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/messages", strings.NewReader(body))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if n := h.Stats().Refused; n != 0 {
			t.Errorf("%d of 12 sequential requests refused by the stated tokens quota, want 0", n)
		}
	})
}

// tooLargeServer states an OpenAI tokens quota of limit() (always whole) and
// answers a request whose X-Cost exceeds it with status big; others 200.
func tooLargeServer(limit func() int64, big int, sent *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		l := limit()
		h := w.Header()
		h.Set("x-ratelimit-limit-requests", "1000")
		h.Set("x-ratelimit-remaining-requests", "999")
		h.Set("x-ratelimit-reset-requests", "60ms")
		h.Set("x-ratelimit-limit-tokens", strconv.FormatInt(l, 10))
		h.Set("x-ratelimit-remaining-tokens", strconv.FormatInt(l, 10))
		h.Set("x-ratelimit-reset-tokens", "0s")
		if n > l {
			w.WriteHeader(big)
			io.WriteString(w, `{"error":{"message":"request too large"}}`)
			return
		}
		io.WriteString(w, "{}")
	})
}

func declaredCostClient(h http.Handler) *http.Client {
	tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Cost: func(r *http.Request) polite.Cost {
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		return polite.Cost{Tokens: n}
	}}
	return &http.Client{Transport: tr}
}

func sendDeclared(c *http.Client, cost int64) (int, error) {
	req, _ := http.NewRequest(http.MethodPost, "http://llm.example/v1/chat/completions", nil)
	req.Header.Set("X-Cost", strconv.FormatInt(cost, 10))
	return statusOf(c, req)
}

// A server that answers a request beyond its tokens limit 400 or 413
// (not 429), stating its quota: such an answer does not show that the
// cost fits (only a 2xx does). It did, and the same too-large request was
// sent again every time instead of failing with a CostError.
func TestCostFitsNotRaisedByRejection(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sent atomic.Int64
				c := declaredCostClient(tooLargeServer(func() int64 { return 10000 }, status, &sent))
				costErrs := 0
				for range 5 {
					_, err := sendDeclared(c, 20000)
					var ce *polite.CostError
					if errors.As(err, &ce) {
						costErrs++
					} else if err != nil {
						t.Fatal(err)
					}
				}
				if n := sent.Load(); n > 1 {
					t.Errorf("a 20000-token request against a stated limit of 10000, answered %d: sent %d times of 5 (%d CostErrors), want once", status, n, costErrs)
				}
			})
		})
	}
}

// The limit shrinks (20000 to 10000): a cost the server did within the old
// limit (15000) says nothing of the new one, and each request between the
// new limit and it fails at once. Counted as accepted for ever, each was
// sent and refused.
func TestCostFitsForgottenWithTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int64
		var limit atomic.Int64
		limit.Store(20000)
		c := declaredCostClient(tooLargeServer(limit.Load, http.StatusTooManyRequests, &sent))
		if st, err := sendDeclared(c, 15000); err != nil || st != 200 {
			t.Fatalf("first: %d %v", st, err)
		}
		limit.Store(10000)
		if st, err := sendDeclared(c, 1000); err != nil || st != 200 { // states the new limit
			t.Fatalf("second: %d %v", st, err)
		}
		before := sent.Load()
		costErrs := 0
		for _, cost := range []int64{14000, 13000, 12000, 11000} {
			st, err := sendDeclared(c, cost)
			var ce *polite.CostError
			switch {
			case errors.As(err, &ce):
				costErrs++
			case err != nil:
				t.Logf("cost %d: %v", cost, err)
			default:
				t.Logf("cost %d: status %d", cost, st)
			}
		}
		if n := sent.Load() - before; n > 0 {
			t.Errorf("4 requests of 11000-14000 tokens against a stated limit of 10000 (fresh): %d sent and refused, %d CostErrors; want 0 sent", n, costErrs)
		}
	})
}

// A cost above the limit, refused while another client keeps part of the
// quota spent (so it is never whole at the refusal): it fails at once
// from then on. Given another chance at every whole quota, one request
// was sent 8 times, until MaxAttempts.
func TestCostFitsRefusedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent, big atomic.Int64
		var limit atomic.Int64
		limit.Store(20000)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent.Add(1)
			n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
			l := limit.Load()
			hd := w.Header()
			hd.Set("x-ratelimit-limit-requests", "1000")
			hd.Set("x-ratelimit-remaining-requests", "999")
			hd.Set("x-ratelimit-reset-requests", "60ms")
			hd.Set("x-ratelimit-limit-tokens", strconv.FormatInt(l, 10))
			hd.Set("x-ratelimit-remaining-tokens", strconv.FormatInt(l-1000, 10)) // another client's 1000
			hd.Set("x-ratelimit-reset-tokens", "6s")
			if n > l {
				big.Add(1)
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error":{"type":"tokens","code":"rate_limit_exceeded"}}`)
				return
			}
			io.WriteString(w, "{}")
		})
		c := declaredCostClient(h)
		if st, err := sendDeclared(c, 15000); err != nil || st != 200 {
			t.Fatalf("first: %d %v", st, err)
		}
		limit.Store(10000)
		if st, err := sendDeclared(c, 1000); err != nil || st != 200 {
			t.Fatalf("second: %d %v", st, err)
		}
		start := time.Now()
		for i := range 2 {
			st, err := sendDeclared(c, 14000)
			t.Logf("14000 #%d: status %d, err %v", i, st, err)
		}
		if n := big.Load(); n > 1 {
			t.Errorf("two requests of 14000 tokens against a stated limit of 10000: sent and refused %d times in %v", n, time.Since(start))
		}
	})
}

// An answer that stated a cost quota's limit (RateLimit-Policy) but not
// what was left (its RateLimit member missing: the server states only some
// of its policies, or a proxy kept one field of two) counted the request
// nowhere: the quota was marked as stated, so the request was not charged
// to it as one whose answer states nothing is (DESIGN.md §10, "A charge
// past the reset"), and its reservation was freed at its answer. After two
// requests of 4,000 into the 9,900 left, a third was sent into 1,900.
func TestLimitOnlyAnswerCharged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tw := newTokenWindow()
		var n atomic.Int32
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			first := n.Add(1) == 1
			ok, now, reset := tw.take(r)
			w.Header().Set("RateLimit-Policy", `"tpm";q=10000;qu="tokens";w=60`)
			if first || !ok {
				w.Header().Set("RateLimit", `"tpm";r=`+strconv.FormatInt(now, 10)+`;t=`+strconv.FormatInt(reset, 10))
			}
			if !ok {
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1}
		send := func(tokens int64) int {
			req, _ := http.NewRequestWithContext(polite.WithCost(t.Context(), polite.Cost{Tokens: tokens}), http.MethodPost, "http://llm.example/v1", nil)
			req.Header.Set("X-Cost", strconv.FormatInt(tokens, 10))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		send(100)  // 9900 left, stated
		send(4000) // 5900 left, the limit stated, not the remaining
		send(4000) // 1900 left, likewise
		st, _ := tr.Inspect("http://llm.example", time.Now())
		for _, p := range st.Policies {
			if p.Unit == "tokens" && p.Remaining != 1900 {
				t.Errorf("before the fourth request: Remaining %d, want 1900 (9900 stated, 8000 sent since)", p.Remaining)
			}
		}
		start := time.Now()
		code := send(4000)
		if code != http.StatusOK || tw.refused != 0 {
			t.Errorf("fourth request of 4000: status %d after %v, %d refused; the key had been told 9900 left and sent 8000 since, and should have waited for the next window", code, time.Since(start), tw.refused)
		}
	})
}

// tokenWindow is a server's fixed window of 10,000 tokens a minute, from
// its creation, that refuses a request costing more than is left.
type tokenWindow struct {
	mu      sync.Mutex
	left    int64
	end     time.Time
	refused int // read once the requests are over
}

func newTokenWindow() *tokenWindow {
	return &tokenWindow{left: 10000, end: time.Now().Add(time.Minute)}
}

// take counts r's cost, its X-Cost header, if it fits, and returns whether
// it did, the tokens left, and the seconds to the window's end, rounded
// up.
func (tw *tokenWindow) take(r *http.Request) (ok bool, left, reset int64) {
	cost, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
	tw.mu.Lock()
	defer tw.mu.Unlock()
	for !time.Now().Before(tw.end) {
		tw.left, tw.end = 10000, tw.end.Add(time.Minute)
	}
	if ok = cost <= tw.left; ok {
		tw.left -= cost
	} else {
		tw.refused++
	}
	return ok, tw.left, int64((time.Until(tw.end) + time.Second - 1) / time.Second)
}

// A refused request is retried (EventRetry, Attempt 1). While its retry
// waits, another answer states a tokens quota below its cost: the retry
// fails with a *CostError, unsent. Its events ended with the EventRetry:
// none said that the retry announced did not happen, where a retry that
// could not rewind its body, or that robots.txt refused after its wait,
// gives up with an event. It gives up so now, the CostError in Err.
func TestRetryCostErrorGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		var mu sync.Mutex
		var evs []polite.Event
		sentA := 0
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Header.Get("X-Task") {
			case "":
				return &http.Response{StatusCode: 200, Header: http.Header{"Ratelimit-Policy": {`"r";q=1000;w=60`}, "Ratelimit": {`"r";r=999;t=60`}}, Body: http.NoBody, Request: req}, nil // warm-up
			case "A":
				mu.Lock()
				sentA++
				first := sentA == 1
				mu.Unlock()
				if first {
					time.Sleep(time.Second)
					return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"5"}}, Body: http.NoBody, Request: req}, nil
				}
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
			case "B":
				time.Sleep(2 * time.Second)
			}
			h := http.Header{
				"Ratelimit-Policy": {`"r";q=1000;w=60, "t";q=100;w=60;qu="tokens"`},
				"Ratelimit":        {`"r";r=990;t=58, "t";r=100;t=60`},
			}
			return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: req}, nil
		})
		tr := &polite.Transport{Base: base, OnEvent: func(e polite.Event) {
			mu.Lock()
			evs = append(evs, e)
			mu.Unlock()
		}}
		w, _ := http.NewRequest("GET", "http://api.test/", nil)
		if resp, err := tr.RoundTrip(w); err == nil {
			resp.Body.Close()
		}
		ctx := polite.WithCost(t.Context(), polite.Cost{Tokens: 500})
		reqA, _ := http.NewRequestWithContext(ctx, "GET", "http://api.test/", nil)
		reqA.Header.Set("X-Task", "A")
		var errA error
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := tr.RoundTrip(reqA)
			if err == nil {
				resp.Body.Close()
			}
			errA = err
		}()
		time.Sleep(100 * time.Millisecond)
		reqB, _ := http.NewRequest("GET", "http://api.test/", nil)
		reqB.Header.Set("X-Task", "B")
		if resp, err := tr.RoundTrip(reqB); err == nil {
			resp.Body.Close()
		} else {
			t.Logf("B: %v", err)
		}
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, e := range evs {
			t.Logf("%s req=%s attempt=%d wait=%v reason=%s status=%d err=%v", e.Kind, e.Request.Header.Get("X-Task"), e.Attempt, e.Wait, e.Reason, e.Status, e.Err)
		}
		t.Logf("A: %v (sent %d)", errA, sentA)
		if !errors.As(errA, new(*polite.CostError)) {
			t.Fatalf("scenario not reached: A got %v", errA)
		}
		var last polite.Event
		for _, e := range evs {
			if e.Request == reqA {
				last = e
			}
		}
		if last.Kind != polite.EventGiveUp || last.Attempt != 2 || last.Reason != polite.ReasonQuota || !errors.As(last.Err, new(*polite.CostError)) {
			t.Errorf("A's retry failed with a *CostError, unsent: its last event is %s (attempt %d, reason %s, err %v), want a give-up of attempt 2 for quota with the CostError", last.Kind, last.Attempt, last.Reason, last.Err)
		}
	})
}

// oneFailStore is a bytesStore whose Update number fail (counted from 1)
// fails, once, without touching the state: one call's failure, as a
// Store's network may blip.
type oneFailStore struct {
	*bytesStore
	calls atomic.Int64
	fail  atomic.Int64
}

func (s *oneFailStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.calls.Add(1) == s.fail.Load() {
		return errStoreDown
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// TestCostErrorAtOnceWhenStoreFailsAfterHold: a request whose cost is above
// the whole quota a fresh answer stated "fails at once, without waiting"
// with a *CostError (CostError's doc). Over a Store, the Budget reads the
// quota it exceeds with a second Update after the hold that says Never;
// when that one call fails, the Budget reads the fallback (which knows no
// quota), drops Never, and waits on the Store's hold, which has no end:
// the request waits until MaxWait (10 minutes), and only then gets its
// CostError. The Store answered the very next call.
func TestCostErrorAtOnceWhenStoreFailsAfterHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { openAIHeaders(w, "5000") })
		st := &oneFailStore{bytesStore: newBytesStore()}
		ev := &events{}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}, OnEvent: ev.on}
		if err := sendCost(t, tr, polite.Cost{Tokens: 100}); err != nil {
			t.Fatal(err)
		}
		// The next request's acquire is the next Update; the Store fails
		// the one after.
		st.fail.Store(st.calls.Load() + 2)
		start := time.Now()
		err := sendCost(t, tr, polite.Cost{Tokens: 10000}) // beyond the whole quota of 6000
		d := time.Since(start)
		var ce *polite.CostError
		if !errors.As(err, &ce) || d > time.Second {
			t.Errorf("a request beyond the whole quota, the Store failing one call: err %v after %v; want a *CostError at once", err, d)
		}
	})
}
