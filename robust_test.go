package polite_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
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

// present moves a bubble's clock from 2000 to 2026, where epoch resets
// read as such.
func present() {
	time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
}

// fuzzStatus maps any int to a status a handler may write: 200 to 599.
func fuzzStatus(s int) int {
	if s >= 200 && s <= 599 {
		return s
	}
	s %= 400
	if s < 0 {
		s += 400
	}
	return 200 + s
}

// fuzzHeader parses lines of "Name: value" into a header, skipping the
// lines net/http would not send.
func fuzzHeader(lines string) http.Header {
	h := http.Header{}
	for line := range strings.SplitSeq(lines, "\n") {
		name, value, ok := strings.Cut(strings.TrimSuffix(line, "\r"), ":")
		value = strings.Trim(value, " \t")
		if !ok || !validName(name) || !validValue(value) {
			continue
		}
		h.Add(name, value)
	}
	return h
}

// validName reports whether s is an RFC 9110 token.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validValue reports whether s has no control characters but HTAB.
func validValue(s string) bool {
	for _, c := range []byte(s) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// FuzzTransport serves a response of any status and any header fields,
// then (when again is a status) the same fields with that status, else 200:
// whatever the server says, the Transport neither panics nor waits beyond
// MaxWait, and RoundTrip returns a response or an error it documents.
func FuzzTransport(f *testing.F) {
	seeds := []struct {
		status int
		lines  string
		again  int
	}{
		{429, "Retry-After: 1000000", 0},
		{429, "Retry-After: -1", 0},
		{503, "Retry-After: garbage", 0},
		{429, "Retry-After: 99999999999999999999999", 429},
		{429, "Retry-After: 600", 0},
		{503, "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT", 503},
		{429, "Retry-After: Fri, 01 Jan 2100 00:00:00 GMT\nDate: Sun, 01 Nov 2026 00:00:00 GMT", 0},
		{429, "retry-after-ms: 1e400\nRetry-After: 1", 429},
		{200, `RateLimit: "default";r=0;t=99999999999`, 0},
		{200, "RateLimit-Policy: \"api\";q=10;w=9223372036854775807\nRateLimit: \"api\";r=999999999999999;t=1", 200},
		{200, "X-RateLimit-Limit: 10\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: 1000000000", 0},
		{429, "X-RateLimit-Limit: 10\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: 4102444800", 429},
		{200, "Age: 120\nRateLimit: \"default\";r=0;t=60", 0},
		{200, "RateLimit-Policy: \"a\";q=;w=\nRateLimit: ;;;,\"a\";r=-1;t=-1", 0},
		{200, "RateLimit: \"d\";r=0", 200},
		{200, "RateLimit-Policy: \"c\";q=0;qu=\"concurrent-requests\"\nRateLimit: \"c\";r=0", 200},
		{429, "RateLimit: \"d\";r=0;t=0\nRetry-After: 0", 429},
		{503, "Retry-After: 1\nContent-Type: application/problem+json", 0},
		{-5, "", 1000},
	}
	for _, s := range seeds {
		f.Add(s.status, s.lines, s.again)
	}
	f.Fuzz(func(t *testing.T, status int, lines string, again int) {
		first, header := fuzzStatus(status), fuzzHeader(lines)
		synctest.Test(t, func(t *testing.T) {
			present()
			var sends atomic.Int64
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if sends.Add(1) > 1 {
					if again == 0 {
						return
					}
					first = fuzzStatus(again)
				}
				for k, vs := range header {
					w.Header()[k] = slices.Clone(vs)
				}
				w.WriteHeader(first)
			})
			const maxWait = 10 * time.Minute // the default
			const maxAttempts = 8            // the default
			var (
				mu    sync.Mutex
				waits []polite.Event
			)
			tr := &polite.Transport{
				Base: &ratelimittest.Transport{Handler: h},
				OnEvent: func(e polite.Event) {
					mu.Lock()
					waits = append(waits, e)
					mu.Unlock()
				},
			}
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			took := time.Since(start)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}

			var we *polite.WaitError
			switch {
			case err == nil && resp == nil:
				t.Error("RoundTrip = nil, nil")
			case err != nil && resp != nil:
				t.Errorf("RoundTrip = %v, %v; want a response or an error", resp.Status, err)
			case err != nil && !errors.As(err, &we) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("RoundTrip error %v (%T), want a *WaitError or a context error", err, err)
			}
			if we != nil && (we.Delay <= maxWait || !errors.Is(err, polite.ErrWaitTooLong)) {
				t.Errorf("WaitError %+v for a wait within MaxWait %v", we, maxWait)
			}
			if took > maxAttempts*maxWait {
				t.Errorf("RoundTrip took %v, want at most MaxAttempts × MaxWait = %v", took, maxAttempts*maxWait)
			}
			if n := sends.Load(); n > maxAttempts {
				t.Errorf("server saw %d requests, want at most MaxAttempts (%d)", n, maxAttempts)
			}
			for _, e := range waits {
				if e.Wait < 0 {
					t.Errorf("%s event with a negative Wait: %+v", e.Kind, e)
				}
				if (e.Kind == polite.EventWait || e.Kind == polite.EventRetry) && e.Wait > maxWait {
					t.Errorf("%s event with a Wait beyond MaxWait: %+v", e.Kind, e)
				}
			}
		})
	})
}

func TestRetryAfterOfMaxWaitIsHonoured(t *testing.T) {
	// MaxWait is the longest wait honoured: a Retry-After of exactly
	// MaxWait is a wait to honour, not to give up on.
	synctest.Test(t, func(t *testing.T) {
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n++; n == 1 {
				w.Header().Set("Retry-After", "600")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		c, _ := politeOver(h)
		start := time.Now()
		status, _ := get(t, c, "http://api.test/")
		if status != http.StatusOK || n != 2 {
			t.Errorf("GET = %d after %d sends, want 200 after 2", status, n)
		}
		if d := time.Since(start); d < 10*time.Minute {
			t.Errorf("took %v, want at least the 10m asked for", d)
		}
	})
}

func TestSaturatedRetryAfterIsNotRetried(t *testing.T) {
	// A Retry-After too large for an int64 asks for a wait beyond any cap:
	// the refusal goes back to the caller at once, unretried.
	synctest.Test(t, func(t *testing.T) {
		var sends atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sends.Add(1)
			w.Header().Set("Retry-After", "99999999999999999999999")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		ev := &events{}
		c, tr := politeOver(h)
		tr.OnEvent = ev.on
		status, _ := get(t, c, "http://api.test/")
		if status != http.StatusTooManyRequests || sends.Load() != 1 {
			t.Errorf("GET = %d after %d sends, want 429 after 1", status, sends.Load())
		}
		if g := ev.of(polite.EventGiveUp); len(g) != 1 || g[0].Wait != math.MaxInt64 {
			t.Errorf("EventGiveUp = %+v, want one asking for the longest Duration", g)
		}
	})
}

// The tests below use real sockets on loopback, outside synctest, for wire
// facts only; nothing in them waits.

func TestWireBodyReplayedConnectionReused(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
		conns  atomic.Int64
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, strings.Repeat("slow down ", 1000))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	base := &http.Transport{}
	tr := &polite.Transport{Base: base}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader("payload"))
	for i := range 3 {
		if i > 0 {
			req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d, want 200", i+1, resp.StatusCode)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"payload", "payload", "", ""}; !slices.Equal(bodies, want) {
		t.Errorf("server saw bodies %q, want %q", bodies, want)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 requests and a retry, want 1 (the refusal drained and closed)", n)
	}
}

func TestWireHeadersForwarded(t *testing.T) {
	var got http.Header
	var host string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, host = r.Header.Clone(), r.Host
		w.Header()["X-Multi"] = []string{"one", "two"}
		w.Header().Set("RateLimit", `"default";r=5;t=10`)
		w.Header().Set("Cache-Control", "no-store")
	}))
	defer srv.Close()
	tr := &polite.Transport{Base: &http.Transport{}}
	defer tr.CloseIdleConnections()

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/path?q=1", nil)
	req.Host = "api.example"
	req.Header["X-Multi"] = []string{"a", "b"}
	req.Header.Set("Authorization", "Bearer t0ken")
	req.Header.Set("User-Agent", "polite-test/1")
	req.Header.Set("Idempotency-Key", "k1")
	sent := req.Header.Clone()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k, want := range sent {
		if !slices.Equal(got[k], want) {
			t.Errorf("server saw %s = %q, want %q", k, got[k], want)
		}
	}
	if host != "api.example" {
		t.Errorf("server saw Host %q, want %q", host, "api.example")
	}
	if !slices.Equal(resp.Header["X-Multi"], []string{"one", "two"}) || resp.Header.Get("RateLimit") != `"default";r=5;t=10` || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("response header = %v, want the server's, unchanged", resp.Header)
	}
	if !sameHeader(sent, req.Header) {
		t.Errorf("request header changed to %v, want %v", req.Header, sent)
	}
}

// sameHeader reports whether a and b hold the same fields and values.
func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// idleCloser is a Base that records CloseIdleConnections.
type idleCloser struct {
	http.RoundTripper
	closed int
}

func (c *idleCloser) CloseIdleConnections() { c.closed++ }

func TestCloseIdleConnectionsForwarded(t *testing.T) {
	base := &idleCloser{}
	tr := &polite.Transport{Base: base}
	tr.CloseIdleConnections()
	if base.closed != 1 {
		t.Errorf("Base.CloseIdleConnections called %d times, want 1", base.closed)
	}
	// A Base without the method is fine too.
	(&polite.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("unused") })}).CloseIdleConnections()
}

func TestBasePanicReleasesTheOrigin(t *testing.T) {
	// A Base that panics must not leave its origin waiting for an answer.
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if calls++; calls == 1 {
				panic("base broke")
			}
			return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		})
		c := &http.Client{Transport: &polite.Transport{Base: base}}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic of Base did not reach the caller")
				}
			}()
			c.Get("http://api.test/")
		}()
		resp, err := c.Get("http://api.test/")
		if err != nil {
			t.Fatalf("second request: %v, want it sent", err)
		}
		resp.Body.Close()
	})
}

func TestBaseNilResponse(t *testing.T) {
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })
	_, err := (&polite.Transport{Base: base}).RoundTrip(httptest.NewRequest(http.MethodGet, "http://api.test/", nil))
	if err == nil {
		t.Fatal("RoundTrip over a Base returning nil, nil: err = nil, want an error")
	}
	// RoundTrip must always close the request's body, including on
	// errors: such a Base may not have, and the body is closed for it.
	body := &closeCounter{Reader: strings.NewReader("x")}
	req := httptest.NewRequest(http.MethodPost, "http://api.test/", nil)
	req.Body = body
	if _, err := (&polite.Transport{Base: base}).RoundTrip(req); err == nil || body.closed == 0 {
		t.Errorf("RoundTrip over a Base returning nil, nil: err %v, body closed %d times; want an error and the body closed", err, body.closed)
	}
}

func TestOneResponseCannotLockAnOrigin(t *testing.T) {
	// A Retry-After of a century pauses the origin for a day at most; a
	// day and IdleTTL later, the origin is forgotten, and its next request
	// goes at once.
	synctest.Test(t, func(t *testing.T) {
		present()
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host == "a.test" {
				if n++; n == 1 {
					w.Header().Set("Retry-After", "99999999999999999999")
					w.WriteHeader(http.StatusTooManyRequests)
				}
			}
		})
		b := &polite.Budget{IdleTTL: time.Minute}
		c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b}}
		if status, _ := get(t, c, "http://a.test/"); status != http.StatusTooManyRequests {
			t.Fatalf("first GET = %d, want the 429 (its wait exceeds MaxWait)", status)
		}
		st, ok := b.Inspect("http://a.test", time.Now())
		if !ok || time.Until(st.PauseUntil) != 24*time.Hour {
			t.Fatalf("pause ends in %v (found %v), want the cap of 24h", time.Until(st.PauseUntil), ok)
		}
		time.Sleep(24*time.Hour + time.Minute + time.Second)
		get(t, c, "http://b.test/") // a new key drops expired ones
		if st, ok := b.Inspect("http://a.test", time.Now()); ok {
			t.Fatalf("a.test kept %+v a day and IdleTTL after its pause, want it forgotten", st)
		}
		start := time.Now()
		if status, _ := get(t, c, "http://a.test/"); status != http.StatusOK || time.Since(start) != 0 {
			t.Errorf("GET a.test after it was forgotten = %d after %v, want 200 at once", status, time.Since(start))
		}
	})
}

func TestYearOldDateCannotLockAnOrigin(t *testing.T) {
	// A Date a year in the past with an epoch reset of now: measured from
	// the Date, the reset is a year away. The key pauses for a day at
	// most.
	synctest.Test(t, func(t *testing.T) {
		present()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			now := time.Now()
			w.Header().Set("Date", now.AddDate(-1, 0, 0).UTC().Format(http.TimeFormat))
			w.Header().Set("X-RateLimit-Limit", "10")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(now.Unix(), 10))
		})
		c, tr := politeOver(h)
		get(t, c, "http://api.test/")
		st, ok := tr.Inspect("http://api.test", time.Now())
		if !ok || st.PauseUntil.IsZero() || time.Until(st.PauseUntil) > 24*time.Hour+10*time.Millisecond {
			t.Errorf("pause ends in %v (found %v), want at most the cap of 24h", time.Until(st.PauseUntil), ok)
		}
	})
}

// One response with a bogus Date (the epoch) throws the key's estimate of
// the server's clock 400 days back. The next response, whose Date is good,
// is read from that Date: its reset, a minute away, pauses the key for a
// minute, not for the day a reset 400 days away would.
func TestBogusDateThenGoodDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n++
			now := time.Now()
			w.Header().Set("X-RateLimit-Limit", "10")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(now.Unix()+60, 10))
			if n == 1 {
				w.Header().Set("Date", "Thu, 01 Jan 1970 00:00:00 GMT")
				w.Header().Set("X-RateLimit-Remaining", "5")
				return
			}
			w.Header().Set("Date", now.UTC().Format(http.TimeFormat))
			w.Header().Set("X-RateLimit-Remaining", "0")
		})
		c, tr := politeOver(h)
		get(t, c, "http://api.test/")
		get(t, c, "http://api.test/")
		st, ok := tr.Inspect("http://api.test", time.Now())
		if d := time.Until(st.PauseUntil); !ok || d < time.Minute || d > time.Minute+10*time.Second {
			t.Errorf("after an answer whose quota resets in a minute, the key pauses for %v (ok %v); want a minute", d, ok)
		}
	})
}

// A quota of one request a year, stated once, holds its key for a day at
// most, as a pause does (DESIGN.md §5): then a request goes again.
func TestYearWindowHoldsADay(t *testing.T) {
	for _, tt := range []struct{ name, field, value string }{
		{"IETF", "RateLimit-Policy", `"a";q=1;w=31536000`},
		{"Kong", "X-RateLimit-Limit-Year", "1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sends []time.Time
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					sends = append(sends, time.Now())
					w.Header().Set(tt.field, tt.value)
				})
				c, _ := politeOver(h)
				start := time.Now()
				for time.Since(start) < 30*time.Hour {
					req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
					if resp, err := c.Do(req); err == nil {
						resp.Body.Close()
					}
					time.Sleep(5 * time.Minute)
				}
				if len(sends) != 2 || sends[1].Sub(sends[0]) > 24*time.Hour+5*time.Minute {
					t.Errorf("sent at %v over 30 hours; want twice, a day apart", sends)
				}
			})
		})
	}
}
