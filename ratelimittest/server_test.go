package ratelimittest_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// TestServer checks the wire over loopback, outside synctest bubbles.
func TestServer(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 2, Window: time.Hour}},
	})
	defer srv.Close()

	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		t.Errorf("server listens on %s, want a loopback address", u.Host)
	}
	tests := []struct {
		status    int
		remaining string
	}{
		{http.StatusOK, `"default";r=1;`},
		{http.StatusOK, `"default";r=0;`},
		{http.StatusTooManyRequests, `"default";r=0;`},
	}
	for i, tt := range tests {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("request %d: status %d, want %d", i, resp.StatusCode, tt.status)
		}
		// t depends on real time; the rest is exact.
		if got := resp.Header.Get("RateLimit"); len(got) < len(tt.remaining) || got[:len(tt.remaining)] != tt.remaining {
			t.Errorf("request %d: RateLimit %q, want prefix %q", i, got, tt.remaining)
		}
		if got, want := resp.Header.Get("RateLimit-Policy"), `"default";q=2;w=3600`; got != want {
			t.Errorf("request %d: RateLimit-Policy %q, want %q", i, got, want)
		}
		if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil {
			t.Errorf("request %d: Date: %v", i, err)
		}
		if i == 0 && string(body) != "ok" {
			t.Errorf("request %d: body %q, want \"ok\"", i, body)
		}
	}
	if s := srv.Handler.Stats(); s.Requests != 3 || s.Admitted != 2 || s.Refused != 1 {
		t.Errorf("Stats = %+v, want 3 requests, 2 admitted, 1 refused", s)
	}
}

// Close ends the requests a Server is serving. Before, Close waited for
// them as httptest.Server.Close does, and a dripping refusal or a held
// request in flight held it: for the whole drip (65536 s here), or as long
// as the client waited. closeWithin's bound only detects such a hang.
func TestCloseEndsDrippingBody(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 0, Window: time.Second}},
		Drip:     time.Second,
	})
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", resp.StatusCode)
	}
	if !closeWithin(srv, 10*time.Second, func() { resp.Body.Close() }) {
		t.Errorf("Close waited for a dripping refusal in flight")
	}
}

// Close ends the requests the server holds, whatever their bodies.
func TestCloseEndsHeldRequest(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  ratelimittest.Config
		body string
		held func(ratelimittest.Stats) bool
	}{
		{"held GET", ratelimittest.Config{Hang: -1}, "", func(s ratelimittest.Stats) bool { return s.Hung > 0 }},
		// net/http ends a request's context when its connection closes
		// only once its body has been read, which the Handler does not
		// do: Close waited for a held POST, and for one in its Latency,
		// until the client gave up.
		{"held POST", ratelimittest.Config{Hang: -1}, `{"q":"hello"}`, func(s ratelimittest.Stats) bool { return s.Hung > 0 }},
		{"POST in its latency", ratelimittest.Config{Latency: time.Hour}, `{"q":"hello"}`, func(s ratelimittest.Stats) bool { return s.Admitted > 0 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := ratelimittest.NewServer(tt.cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				method, body := http.MethodGet, io.Reader(nil)
				if tt.body != "" {
					method, body = http.MethodPost, strings.NewReader(tt.body)
				}
				req, _ := http.NewRequestWithContext(ctx, method, srv.URL, body)
				resp, err := srv.Client().Do(req)
				if err == nil {
					resp.Body.Close()
				}
				errc <- err
			}()
			for !tt.held(srv.Handler.Stats()) { // until the server holds it
				runtime.Gosched()
			}
			if !closeWithin(srv, 10*time.Second, cancel) {
				t.Errorf("Close waited for the request")
			}
			<-errc
		})
	}
}

// closeWithin reports whether srv.Close returns within d; if not, it calls
// release (the client gives up) and gives Close d more, then leaves it.
func closeWithin(srv *ratelimittest.Server, d time.Duration, release func()) bool {
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		release()
		select {
		case <-done:
		case <-time.After(d):
		}
		return false
	}
}
