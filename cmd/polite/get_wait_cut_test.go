package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// get's help: waited_s is the "time spent waiting for the origin's
// budget". A URL held for its origin's quota until get was stopped
// (Ctrl-C, which cancels main's context) was logged with waited_s 0: the
// tracker learned of a wait only from EventWait, which the Transport
// emits when a wait is granted, never when the request's context ends it.
// The log said the URL never waited, though it spent its whole life
// waiting. (Its reason, which no event reports, stays empty.)
func TestGetWaitCutByStopIsLogged(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Minute}},
	})
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr syncBuffer
	errc := make(chan error, 1)
	// One worker: /a takes the quota, then /b waits about a minute for it.
	go func() {
		errc <- getMain(ctx, []string{"-c", "1", srv.URL + "/a", srv.URL + "/b"}, nil, &stdout, &stderr)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for srv.Handler.Stats().Requests < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // /b waits for the quota
	cancel()
	select {
	case <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("get still running 5s after its context ended")
	}
	b, ok := getRecords(t, stderr.String())[srv.URL+"/b"]
	if !ok {
		t.Fatalf("no record of /b; log:\n%s", stderr.String())
	}
	if b.WaitedS < 0.2 {
		t.Errorf("/b, stopped after about 0.3 s waiting for its origin's quota: waited_s %v; want at least 0.2", b.WaitedS)
	}
}

// get's help: waited_s includes "a wait an interrupt or -timeout cut
// short". A URL whose first request was sent and redirected, and whose
// redirected request then waits for the origin's quota (the redirect
// spent it, reset a minute away) until get is interrupted, spent that time
// waiting for the budget; fetch charged a cut wait only when nothing had
// been sent, and the redirect's send had: waited_s 0.
func TestGetWaitCutAfterRedirectIsLogged(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/r" {
			w.Header().Set("X-RateLimit-Limit", "1")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
			http.Redirect(w, r, "/x", http.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr syncBuffer
	errc := make(chan error, 1)
	go func() { errc <- getMain(ctx, []string{"-c", "1", srv.URL + "/r"}, nil, &stdout, &stderr) }()
	time.Sleep(400 * time.Millisecond) // /x waits for the quota's reset
	cancel()
	select {
	case <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("get still running 5s after its context ended")
	}
	rec, ok := getRecords(t, stderr.String())[srv.URL+"/r"]
	if !ok {
		t.Fatalf("no record; log:\n%s", stderr.String())
	}
	if rec.Attempts != 1 {
		t.Fatalf("attempts %d, want 1 (the redirect); log:\n%s", rec.Attempts, stderr.String())
	}
	if rec.WaitedS < 0.2 {
		t.Errorf("redirected, then held ~0.4 s for the quota until interrupted: waited_s %v; want at least 0.2 (help: a wait an interrupt cut short included); error %q", rec.WaitedS, rec.Error)
	}
}

// A request granted at once, whose TLS handshake hangs (a listener that
// accepts and never answers) until -timeout ends it, waited for no budget:
// nothing was written yet, and fetch charged all the time since the
// request began to waited_s, as if the origin's budget had held it.
func TestGetConnectTimeNotChargedAsWait(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	var stdout, stderr syncBuffer
	u := "https://" + ln.Addr().String() + "/x"
	getMain(t.Context(), []string{"-timeout", "300ms", u}, nil, &stdout, &stderr)
	rec, ok := getRecords(t, stderr.String())[u]
	if !ok {
		t.Fatalf("no record; log:\n%s", stderr.String())
	}
	if rec.WaitedS > 0.1 {
		t.Errorf("granted at once, then stuck in the TLS handshake until -timeout: waited_s %v, reason %q, error %q; want ~0: no budget held it", rec.WaitedS, rec.Reason, rec.Error)
	}
}
