package main

import (
	"context"
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
