package polite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// The log of a run with one refusal that is retried, one that is given up,
// and one request refused locally with a *WaitError, as it prints: run with
// -v to see it.
func TestLogExcerpt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/items":
				if n++; n == 1 {
					w.Header().Set("Retry-After", "2")
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				w.Header().Set("RateLimit-Policy", `"default";q=100;w=60`)
				w.Header().Set("RateLimit", `"default";r=98;t=58`)
			case "/report":
				w.Header().Set("Retry-After", "86400")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		var logs bytes.Buffer
		ev := &events{}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, OnEvent: ev.on,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		c := &http.Client{Transport: tr}

		get(t, c, "http://api.test/items?token=s3cret")
		if code, _ := get(t, c, "http://api.test/report"); code != http.StatusTooManyRequests {
			t.Fatalf("GET /report: %d, want the 429 back", code)
		}
		_, err := c.Get("http://api.test/items?page=2")
		var we *polite.WaitError
		if !errors.As(err, &we) {
			t.Fatalf("GET after the give-up: %v, want a *WaitError", err)
		}
		t.Logf("the log:\n%s", logs.String())

		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		want := []struct{ msg, has string }{
			{"polite: retry", `level=INFO msg="polite: retry" key=http://api.test method=GET path=/items attempt=1 status=429 wait=2s reason=retry-after`},
			{"polite: wait", `level=DEBUG msg="polite: wait" key=http://api.test method=GET path=/items attempt=2 wait=2`},
			{"polite: observe", `level=DEBUG msg="polite: observe" key=http://api.test method=GET path=/items attempt=2 status=200 quotas=1`},
			{"polite: give-up", `level=WARN msg="polite: give-up" key=http://api.test method=GET path=/report attempt=1 status=429 wait=24h0m0s reason=retry-after`},
			{"polite: wait-error", `level=WARN msg="polite: wait-error" key=http://api.test method=GET path=/items attempt=1 wait=24h0m0s reason=retry-after limit=max-wait until=2000-01-02T00:00:0`},
		}
		if len(lines) != len(want) {
			t.Fatalf("%d log lines, want %d", len(lines), len(want))
		}
		for i, w := range want {
			if !strings.Contains(lines[i], w.has) {
				t.Errorf("line %d = %s\nwant it to contain %s", i+1, lines[i], w.has)
			}
		}
		for _, bad := range []string{"s3cret", "token", "page", `reason=""`, "status=0", "µs"} {
			if strings.Contains(logs.String(), bad) {
				t.Errorf("the log holds %q", bad)
			}
		}
		if e := ev.of(polite.EventWaitError); len(e) != 1 || e[0].Err != err.(interface{ Unwrap() error }).Unwrap() && !errors.Is(e[0].Err, polite.ErrWaitTooLong) {
			t.Errorf("EventWaitError = %+v, want one carrying the *WaitError", e)
		}
	})
}

// A log record holds only its kind's fields, and the path only when the
// key is the origin: a custom key may be built from the path.
func TestLogOmitsPathForCustomKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		var logs bytes.Buffer
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1,
			Key:    func(r *http.Request) string { return r.URL.Path },
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		get(t, &http.Client{Transport: tr}, "http://api.test/bot-t0ken/send")
		if s := logs.String(); strings.Contains(s, "t0ken") || strings.Contains(s, "path=") || !strings.Contains(s, "key=key-") {
			t.Errorf("log = %s\nwant the key as a fingerprint and no path", s)
		}
	})
}

// TestLogErrorOmitsSecrets checks that a log record quoting Base's error
// shows neither the request's query nor its password, which the error's
// text may quote (a URL in it), nor its path with a custom Key: the log
// showed error="GET http://api.test/p?api_key=TOPSECRET: unexpected EOF".
func TestLogErrorOmitsSecrets(t *testing.T) {
	for _, custom := range []bool{false, true} {
		t.Run(fmt.Sprint("custom=", custom), func(t *testing.T) { testLogErrorOmitsSecrets(t, custom) })
	}
}

func testLogErrorOmitsSecrets(t *testing.T, custom bool) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return nil, fmt.Errorf("GET %s: %w", r.URL, io.ErrUnexpectedEOF)
		})
		tr := &polite.Transport{Base: base, RetryTransient: true, MaxAttempts: 2,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		if custom {
			tr.Key = func(r *http.Request) string { return r.URL.Path }
		}
		if _, err := (&http.Client{Transport: tr}).Get("http://alice:pa55word@api.test/bot-t0ken/p?api_key=TOPSECRET"); err == nil {
			t.Fatal("no error")
		}
		s := logs.String()
		if strings.Contains(s, "TOPSECRET") || strings.Contains(s, "pa55word") || custom && strings.Contains(s, "t0ken") ||
			!strings.Contains(s, "unexpected EOF") {
			t.Errorf("custom key %v: log = %s\nwant the error without the query, password or (custom key) path", custom, s)
		}
	})
}

// RetryAt answers for a refusal given back what the WaitError of the next
// request carries.
func TestRetryAtMatchesWaitError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		retryAfter := "3600"
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", retryAfter)
			w.WriteHeader(http.StatusTooManyRequests)
		})
		c, tr := politeOver(h)
		tr.MaxWait = time.Minute
		resp, err := c.Get("http://api.test/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		at, ok := tr.RetryAt(resp)
		if !ok || at.Before(time.Now().Add(time.Hour)) {
			t.Fatalf("RetryAt = %v, %v; want an hour from now at least", at, ok)
		}
		_, err = c.Get("http://api.test/b")
		var we *polite.WaitError
		if !errors.As(err, &we) || !we.Until.Equal(at) {
			t.Fatalf("next request: %v; want a *WaitError until %v", err, at)
		}

		// Out of attempts on a short wait: the next request would wait,
		// and one whose deadline comes first fails with the same instant.
		retryAfter = "5"
		tr2 := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1}
		c2 := &http.Client{Transport: tr2}
		resp, err = c2.Get("http://api.test/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		at, ok = tr2.RetryAt(resp)
		if d := time.Until(at); !ok || d < 5*time.Second || d > 5*time.Second+10*time.Millisecond {
			t.Fatalf("RetryAt = now+%v, %v; want 5s and at most 10ms of jitter", d, ok)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/b", nil)
		_, err = c2.Do(req)
		if !errors.As(err, &we) || !we.Deadline || !we.Until.Equal(at) {
			t.Fatalf("next request: %v; want a deadline *WaitError until %v", err, at)
		}

		// Once the pause is over, now.
		time.Sleep(6 * time.Second)
		if at, ok := tr2.RetryAt(resp); !ok || !at.Equal(time.Now()) {
			t.Errorf("RetryAt after the pause = %v, %v; want now (%v)", at, ok, time.Now())
		}
		// Not a refusal, or no request: false.
		for _, r := range []*http.Response{nil, {StatusCode: 200, Request: resp.Request}, {StatusCode: 429}} {
			if _, ok := tr2.RetryAt(r); ok {
				t.Errorf("RetryAt(%+v) reports true", r)
			}
		}
	})
}

// RetryAt and the WaitError of a spent quota's window agree too.
func TestRetryAtSpentQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Hour}},
		})
		c, tr := politeOver(h)
		tr.MaxWait = time.Minute
		get(t, c, "http://api.test/")
		// The quota is spent: no refusal yet, but the next request fails
		// at once, and a refusal, were there one, would say the same.
		_, err := c.Get("http://api.test/")
		var we *polite.WaitError
		if !errors.As(err, &we) {
			t.Fatalf("second request: %v, want a *WaitError", err)
		}
		refusal := &http.Response{StatusCode: 429, Request: httptestRequest("http://api.test/x")}
		if at, ok := tr.RetryAt(refusal); !ok || !at.Equal(we.Until) {
			t.Errorf("RetryAt = %v, %v; want %v", at, ok, we.Until)
		}
	})
}

// RetryAt reports when the key accepts a request again, its paces
// counted: Budget.MaxRate, and a stated quota's q per w (the refused
// request spent its one request a minute). Before, it left them out, and
// a request sent at the instant it gave, after a 5-second pause, was held
// for the pace, 55 s more.
func TestRetryAtCountsPaces(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy string // the RateLimit-Policy of every response; "" for none
		budget *polite.Budget
	}{
		{"Budget.MaxRate of one a minute", "", &polite.Budget{MaxRate: 1.0 / 60}},
		{"a stated q=1;w=60", `"p";q=1;w=60`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if tt.policy != "" {
						w.Header().Set("RateLimit-Policy", tt.policy)
					}
					if n++; n == 2 {
						w.Header().Set("Retry-After", "5")
						w.WriteHeader(http.StatusTooManyRequests)
					}
				})
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: tt.budget, MaxAttempts: 1}
				c := &http.Client{Transport: tr}
				get(t, c, "http://api.test/a")
				time.Sleep(time.Minute) // the first start's pace has passed
				resp, err := c.Get("http://api.test/b")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				at, ok := tr.RetryAt(resp)
				if resp.StatusCode != http.StatusTooManyRequests || !ok {
					t.Fatalf("status %d, RetryAt %v; want a 429 and its RetryAt", resp.StatusCode, ok)
				}
				d := time.Until(at)
				time.Sleep(d)
				start := time.Now()
				get(t, c, "http://api.test/c")
				if waited := time.Since(start); waited > time.Second {
					t.Errorf("RetryAt = now+%v, but a request sent then waited %v more", d, waited)
				}
			})
		})
	}
}

func httptestRequest(url string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, url, nil)
	return r
}

// The error texts, as a caller sees them through an http.Client: run with
// -v to see them.
func TestWaitErrorTexts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/day" {
				w.Header().Set("Retry-After", "86400")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.Header().Set("RateLimit", `"default";r=0;t=30`)
		})
		base := &ratelimittest.Transport{Handler: h}
		tr := &polite.Transport{Base: base}
		c := &http.Client{Transport: tr}
		get(t, c, "http://a.test/day")
		_, err := c.Get("http://a.test/day")
		t.Logf("MaxWait:          %v", err)
		var we *polite.WaitError
		if !errors.As(err, &we) || we.Limit != 10*time.Minute || we.Deadline {
			t.Errorf("MaxWait: %+v, want Limit 10m", we)
		}

		get(t, c, "http://b.test/")
		time.Sleep(4 * time.Second) // the request has waited 4s when it gives up
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://b.test/", nil)
		_, err = c.Do(req)
		t.Logf("context deadline: %v", err)
		if !errors.As(err, &we) || !we.Deadline || we.Limit != 10*time.Second || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("context deadline: %+v, want Deadline, Limit 10s", we)
		}

		// Through a Client with a Timeout, after waiting: the second
		// request to a fresh origin waits 2s for the first, the probe
		// (which answers within the 3s a probe holds a key), whose answer
		// spends the quota for 30s, beyond the 20s Timeout.
		slow := &polite.Transport{Base: &ratelimittest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(2 * time.Second)
			w.Header().Set("RateLimit", `"default";r=0;t=30`)
		})}}
		cl := &http.Client{Transport: slow, Timeout: 20 * time.Second}
		go func() {
			if resp, err := cl.Get("http://c.test/probe"); err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait()
		_, err = cl.Get("http://c.test/")
		t.Logf("client timeout:   %v", err)
		if !errors.As(err, &we) || !we.Deadline || we.Limit != 18*time.Second || we.Waited != 2*time.Second {
			t.Errorf("client timeout: %+v, want Deadline, Limit 18s, Waited 2s", we)
		}
		synctest.Wait()
	})
}

// EventGiveUp's Wait is the wait the server asked for, when known
// (event.go), as for a transient give-up: a refusal that asked for none,
// given up after MaxAttempts, reports 0. It reported the backoff polite
// would have used before.
func TestGiveUpWaitIsTheServers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := &events{}
		tr := &polite.Transport{MaxAttempts: 1, OnEvent: ev.on, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		resp, err := tr.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		g := ev.of(polite.EventGiveUp)
		if len(g) != 1 || g[0].Wait != 0 {
			t.Errorf("give-ups %+v; want one with Wait 0 (the server asked for no wait)", g)
		}
	})
}

// The user information and the query are hidden however Base's error
// quotes the URL: percent-escaped, as URL.String writes a password with
// an @ or a /, or within a Go-quoted string, as *url.Error writes it.
func TestLogErrorOmitsEscapedSecrets(t *testing.T) {
	for _, tc := range []struct {
		name, format, url string
		secrets           []string
	}{
		{"escaped password", "GET %s: %w", "http://alice:p%40ss%2Fw0rd@api.test/x?token=abc", []string{"p%40ss%2Fw0rd", "p@ss/w0rd", "token=abc"}},
		{"token as user name", "GET %s: %w", "https://ghp_t0kenvalue@api.test/x", []string{"ghp_t0kenvalue"}},
		{"quoted query", "GET %q: %w", `http://api.test/x?q="s3cretvalue"`, []string{"s3cretvalue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs bytes.Buffer
				tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
					Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
					Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
						return nil, fmt.Errorf(tc.format, r.URL.String(), io.ErrUnexpectedEOF)
					})}
				req, err := http.NewRequest(http.MethodGet, tc.url, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tr.RoundTrip(req); err == nil {
					t.Fatal("no error")
				}
				s := logs.String()
				for _, x := range tc.secrets {
					if strings.Contains(s, x) {
						t.Errorf("log shows %q: %s", x, s)
					}
				}
				if !strings.Contains(s, "unexpected EOF") || !strings.Contains(s, "api.test") {
					t.Errorf("log = %s; want the error's text with its host", s)
				}
			})
		})
	}
}

// logOfFailure runs one request to rawURL through a Transport whose Base
// fails with an error quoting text(r), and returns the log.
func logOfFailure(t *testing.T, rawURL string, custom bool, text func(*http.Request) string) string {
	var logs bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{RetryTransient: true, MaxAttempts: 1,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("GET %s: %w", text(r), io.ErrUnexpectedEOF)
			})}
		if custom {
			tr.Key = func(r *http.Request) string { return r.URL.Path }
		}
		req, err := http.NewRequest(http.MethodGet, rawURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.RoundTrip(req); err == nil {
			t.Fatal("no error")
		}
	})
	if !strings.Contains(logs.String(), "EOF") { // "unexpected" may hold a password hidden
		t.Fatalf("no log of the error: %s", logs.String())
	}
	return logs.String()
}

// A log record's error shows the request's text "without the request's
// query ..., should Base's error quote its URL, escaped or not" (doc.go,
// Observing; logError: "as it appears in a URL (percent-escaped),
// decoded, or within a Go-quoted string"). A query quoted decoded (a
// base64 token, whose + / = a URL escapes) was shown whole.
func TestLogErrorHidesDecodedQuery(t *testing.T) {
	const secret = "sk+Live/T0ken=="
	raw := "http://api.test/x?api_key=" + url.QueryEscape(secret)
	s := logOfFailure(t, raw, false, func(r *http.Request) string {
		q, _ := url.QueryUnescape(r.URL.RawQuery)
		return r.URL.Path + "?" + q // as a Base that logs r.URL.Query() writes it
	})
	if strings.Contains(s, secret) {
		t.Errorf("log shows the query's secret %q decoded:\n%s", secret, s)
	}
}

// With a custom Key, a log record's error hides the request's path,
// "escaped or not" (doc.go): only the escaped form was replaced, and a
// path quoted decoded (r.URL.Path) was shown whole.
func TestLogErrorHidesDecodedPathWithCustomKey(t *testing.T) {
	const secret = "/bot t\u00f6ken-7731/send"
	raw := "http://api.test" + (&url.URL{Path: secret}).EscapedPath()
	s := logOfFailure(t, raw, true, func(r *http.Request) string { return r.URL.Path })
	if strings.Contains(s, "t\u00f6ken-7731") {
		t.Errorf("log shows the path (the custom key) decoded:\n%s", s)
	}
}
