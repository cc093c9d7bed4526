package ratelimittest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// net/http's server adds a Date header to every response whose handler
// sets none (RFC 9110 §6.6.1: an origin server with a clock MUST send
// one), so that a client measures absolute resets against it. The
// Transport, whose doc says a response "reads like one from the network",
// sent none: the package's own QueueHandler and RobotsHandler, and any
// custom handler, answered without a Date through it, though with one over
// loopback.
func TestTransportSendsDate(t *testing.T) {
	plain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(plain)
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close()
	if resp.Header.Get("Date") == "" {
		t.Fatalf("over loopback: no Date")
	}

	synctest.Test(t, func(t *testing.T) {
		for name, h := range map[string]http.Handler{
			"plain handler": plain,
			"QueueHandler":  ratelimittest.NewQueueHandler(ratelimittest.QueueConfig{ServiceTime: time.Millisecond}),
			"RobotsHandler": ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{Body: "User-agent: *\n"}),
		} {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/robots.txt", nil)
			resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got, want := resp.Header.Get("Date"), time.Now().UTC().Format(http.TimeFormat); got != want {
				t.Errorf("%s through Transport: Date %q, want %q as net/http's server sends", name, got, want)
			}
		}
	})
}
