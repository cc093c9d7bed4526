package ratelimittest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// trackingBody is a request body that records whether it was closed.
type trackingBody struct {
	io.Reader
	closed bool
}

func (b *trackingBody) Close() error {
	b.closed = true
	return nil
}

func TestTransportResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/items?page=2", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		got := []any{resp.StatusCode, resp.Status, resp.Proto, resp.ProtoMajor, resp.ProtoMinor,
			resp.ContentLength, resp.Header.Get("Content-Length"), resp.Request == req, string(body)}
		want := []any{200, "200 OK", "HTTP/1.1", 1, 1, int64(2), "2", true, "ok"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("response %v, want %v", got, want)
		}
		if got, want := resp.Header.Get("Date"), "Sat, 01 Jan 2000 00:00:00 GMT"; got != want {
			t.Errorf("Date %q, want %q", got, want)
		}
	})
}

func TestTransportServerRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen *http.Request
		var seenBody string
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = r
			b, _ := io.ReadAll(r.Body)
			seenBody = string(b)
			r.Header.Set("X-Changed", "yes")
			r.URL.Path = "/changed"
			w.Header()["x-lower-case"] = []string{"kept"}
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, "created")
		})
		tr := &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{Next: next})}
		body := &trackingBody{Reader: strings.NewReader("hello")}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.example/items?x=1", body)
		req.Header.Set("X-Caller", "1")
		wantHeader, wantURL := req.Header.Clone(), *req.URL

		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		defer resp.Body.Close()
		respBody, _ := io.ReadAll(resp.Body)

		got := []any{seen.Method, seen.RequestURI, seen.Host, seen.Proto, seen.RemoteAddr, seen.Header.Get("X-Caller"), seenBody}
		want := []any{"POST", "/items?x=1", "api.example", "HTTP/1.1", "192.0.2.1:1234", "1", "hello"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("server request %v, want %v", got, want)
		}
		if !reflect.DeepEqual(req.Header, wantHeader) || *req.URL != wantURL {
			t.Errorf("caller's request changed to %v %v, want %v %v", req.Header, req.URL, wantHeader, &wantURL)
		}
		if !body.closed {
			t.Errorf("request body not closed")
		}
		got = []any{resp.StatusCode, resp.ContentLength, resp.Header.Get("X-Lower-Case"), string(respBody)}
		want = []any{201, int64(7), "kept", "created"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("response %v, want %v", got, want)
		}
	})
}

func TestTransportHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodHead, "http://api.example/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("RoundTrip: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ContentLength != 2 || len(body) != 0 {
			t.Errorf("HEAD: ContentLength %d, body %q; want 2, empty", resp.ContentLength, body)
		}
	})
}

func TestTransportContext(t *testing.T) {
	t.Run("done before", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := ratelimittest.NewHandler(ratelimittest.Config{})
			tr := &ratelimittest.Transport{Handler: h}
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			body := &trackingBody{Reader: strings.NewReader("x")}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.example/", body)
			resp, err := tr.RoundTrip(req)
			if resp != nil || !errors.Is(err, context.Canceled) {
				t.Errorf("RoundTrip = %v, %v; want nil, context.Canceled", resp, err)
			}
			if !body.closed {
				t.Errorf("request body not closed")
			}
			if n := h.Stats().Requests; n != 0 {
				t.Errorf("Handler saw %d requests, want 0", n)
			}
		})
	})
	t.Run("done during latency", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := ratelimittest.NewHandler(ratelimittest.Config{Latency: time.Second})
			tr := &ratelimittest.Transport{Handler: h}
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/", nil)
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			if resp != nil || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("RoundTrip = %v, %v; want nil, context.DeadlineExceeded", resp, err)
			}
			if got := time.Since(start); got != 300*time.Millisecond {
				t.Errorf("RoundTrip returned after %v, want 300ms", got)
			}
			if s := h.Stats(); s.Admitted != 1 || len(s.Status) != 0 {
				t.Errorf("Stats = %+v, want 1 admitted and no status", s)
			}
		})
	})
}

func TestTransportNilHandler(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
	if resp, err := new(ratelimittest.Transport).RoundTrip(req); resp != nil || err == nil {
		t.Errorf("RoundTrip with nil Handler = %v, %v; want nil, an error", resp, err)
	}
}

// TestTransportThroughClient checks the Transport under an http.Client,
// which wraps errors in *url.Error.
func TestTransportThroughClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := client(ratelimittest.NewHandler(ratelimittest.Config{}))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.example/", nil)
		_, err := c.Do(req)
		var ue *url.Error
		if !errors.As(err, &ue) || !errors.Is(err, context.Canceled) {
			t.Errorf("Do = %v, want a *url.Error wrapping context.Canceled", err)
		}
	})
}

// roundTrip sends a request of the given method through a Transport to h.
func roundTrip(t *testing.T, h http.Handler, method string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, "http://api.example/", nil)
	resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v", err)
	}
	return resp
}

func TestTransportStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "a")
			http.NewResponseController(w).Flush()
			time.Sleep(time.Second)
			io.WriteString(w, "b")
			w.Header().Set("X-Late", "ignored")
		})
		start := time.Now()
		resp := roundTrip(t, h, http.MethodGet)
		got := []any{time.Since(start), resp.StatusCode, resp.ContentLength, resp.TransferEncoding, resp.Header.Get("Content-Length"), resp.Header.Get("Content-Type")}
		want := []any{time.Duration(0), 200, int64(-1), []string{"chunked"}, "", "text/plain; charset=utf-8"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("streamed response %v, want %v", got, want)
		}
		b := make([]byte, 10)
		n, err := resp.Body.Read(b)
		if string(b[:n]) != "a" || err != nil || time.Since(start) != 0 {
			t.Errorf("first read %q, %v at %v; want \"a\" at once", b[:n], err, time.Since(start))
		}
		n, err = resp.Body.Read(b)
		if string(b[:n]) != "b" || err != nil || time.Since(start) != time.Second {
			t.Errorf("second read %q, %v at %v; want \"b\" at 1s", b[:n], err, time.Since(start))
		}
		if n, err := resp.Body.Read(b); n != 0 || err != io.EOF {
			t.Errorf("third read %d, %v; want 0, EOF", n, err)
		}
		if resp.Header.Get("X-Late") != "" {
			t.Errorf("a header field set after the flush reached the client")
		}
		if err := resp.Body.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := resp.Body.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := resp.Body.Read(b); err == nil || err == io.EOF {
			t.Errorf("Read after Close: %v, want an error", err)
		}
	})
}

func TestTransportStreamContentLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "2")
			w.WriteHeader(http.StatusAccepted)
			http.NewResponseController(w).Flush()
			io.WriteString(w, "ok")
		})
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			resp := roundTrip(t, h, method)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			wantBody := "ok"
			if method == http.MethodHead {
				wantBody = ""
			}
			got := []any{resp.StatusCode, resp.Status, resp.ContentLength, resp.TransferEncoding, string(body), err}
			want := []any{202, "202 Accepted", int64(2), []string(nil), wantBody, nil}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: response %v, want %v", method, got, want)
			}
		}
	})
}

// TestTransportStreamClientGone checks that closing a streamed body ends
// the context of the request the handler serves, and that its writes then
// fail.
func TestTransportStreamClientGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var ended time.Duration
		var writeErr error
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
			ended = time.Since(start)
			_, writeErr = io.WriteString(w, "too late")
		})
		done := make(chan struct{})
		resp := roundTrip(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(done)
			h.ServeHTTP(w, r)
		}), http.MethodGet)
		time.Sleep(250 * time.Millisecond)
		resp.Body.Close()
		<-done
		if ended != 250*time.Millisecond || writeErr == nil {
			t.Errorf("handler's context ended at %v, write error %v; want 250ms, an error", ended, writeErr)
		}
	})
}

func TestTransportSniffs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resp := roundTrip(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html></html>")
		}), http.MethodGet)
		resp.Body.Close()
		if got, want := resp.Header.Get("Content-Type"), "text/html; charset=utf-8"; got != want {
			t.Errorf("Content-Type %q, want %q", got, want)
		}
	})
}

// A Read waiting on a streamed body returns once the body is closed, as
// net/http's does, even while the handler goes on ignoring its context.
// The Read waited for the handler's next write or its end: for ever.
func TestTransportStreamCloseWakesRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		resp := roundTrip(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.NewResponseController(w).Flush()
			<-release // deaf to its context
		}), http.MethodGet)
		var readErr error
		read := make(chan struct{})
		go func() {
			defer close(read)
			_, readErr = resp.Body.Read(make([]byte, 8))
		}()
		synctest.Wait()
		resp.Body.Close()
		synctest.Wait()
		select {
		case <-read:
			if readErr == nil {
				t.Errorf("Read after Close: no error")
			}
		default:
			t.Errorf("Read still waiting after the body was closed")
		}
	})
}

// closeCounter records whether the request body was closed.
type closeCounter struct {
	io.Reader
	closed bool
}

func (c *closeCounter) Close() error { c.closed = true; return nil }

// A request built by hand with no Header map (net/http's Transport
// answers it with the error "http: nil Request.Header" and closes the
// body): Transport.RoundTrip set Content-Length on the clone's nil map for
// a POST, PUT or PATCH, or any request with a body, and panicked
// "assignment to entry in nil map" in the caller's goroutine, the body
// left open. It returns an error, the body closed.
func TestTransportNilHeader(t *testing.T) {
	u, _ := url.Parse("http://api.example/items")
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			body := &closeCounter{Reader: strings.NewReader("hello")}
			req := &http.Request{Method: method, URL: u, Body: body, ContentLength: 5}
			var resp *http.Response
			var err error
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Errorf("RoundTrip panicked: %v", v)
					}
				}()
				resp, err = (&ratelimittest.Transport{Handler: ratelimittest.NewHandler(ratelimittest.Config{})}).RoundTrip(req)
			}()
			if resp != nil {
				resp.Body.Close()
			}
			if !body.closed {
				t.Errorf("RoundTrip returned (%v, %v) and left the request body open", resp, err)
			}
		})
	}
}

// A server reads at most Content-Length bytes of a request body, and one
// that ends short of it as a broken connection: through the Transport, the
// Handler told ContentLength 3 read 5 of a longer body, and a shorter one
// ended cleanly.
func TestTransportRequestBodyAsContentLength(t *testing.T) {
	for _, tt := range []struct {
		body string
		cl   int64
		read int
		err  error
	}{
		{"hello", 3, 3, nil},
		{"hi", 5, 2, io.ErrUnexpectedEOF},
		{"hello", 5, 5, nil},
	} {
		var read int
		var rerr error
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			read, rerr = len(b), err
		})
		req, _ := http.NewRequest(http.MethodPost, "http://api.test/", io.NopCloser(strings.NewReader(tt.body)))
		req.ContentLength = tt.cl
		resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		if read != tt.read || !errors.Is(rerr, tt.err) && rerr != tt.err {
			t.Errorf("body %q, ContentLength %d: Handler read %d bytes, error %v; want %d, %v", tt.body, tt.cl, read, rerr, tt.read, tt.err)
		}
	}
}
