package main

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// serve and demo took any -window, but draft-11's w is whole seconds and
// ratelimittest states a window rounded up to one (at least 1): -window
// 1500ms -quota 3 enforced 2 requests a second and advertised q=3;w=2,
// 1.5 a second; -window 100ms advertised a tenth of the rate enforced. A
// client that obeys the fields ran slower than the server allows, and
// demo printed that as polite's efficiency against a perfect client that
// knows the true window (demo -window 500ms: polite 48%, the plain retry
// loop 50%; -window 1ns -quota 1 -tasks 30: polite 29 s, the retry loop
// 0.09 s). serve and demo refuse a -quota a draft-11 field cannot state,
// and now a -window too.
func TestServeWindowAdvertisedAsEnforced(t *testing.T) {
	const quota = 3
	for _, window := range []time.Duration{1500 * time.Millisecond, 100 * time.Millisecond} {
		policy, refused := servedPolicy(t, "-addr", "127.0.0.1:0", "-quota", "3", "-window", window.String())
		if refused {
			continue // a usage error: as good as stated truly
		}
		pols, err := parse.Policies(policy)
		if err != nil || len(pols) != 1 || pols[0].Window <= 0 {
			t.Fatalf("-window %v: RateLimit-Policy %q: %v", window, policy, err)
		}
		stated := float64(pols[0].Quota) / pols[0].Window.Seconds()
		enforced := quota / window.Seconds()
		if stated < enforced*0.99 {
			t.Errorf("serve -quota %d -window %v enforces %.3g requests a second but states %q, %.3g a second; want the window refused, or stated as enforced",
				quota, window, enforced, policy, stated)
		}
	}
}

// servedPolicy runs serve with args, sends it one GET and returns the
// RateLimit-Policy of the answer, or reports that serve refused args with
// a usage error.
func servedPolicy(t *testing.T, args ...string) (policy []string, refused bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	errc := make(chan error, 1)
	go func() { errc <- runServe(ctx, args, &stdout, &stderr) }()
	addr := regexp.MustCompile(`serving (http://\S+)/ `)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stdout.String()); m != nil {
			resp, err := http.Get(m[1] + "/")
			cancel()
			<-errc
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.Header.Values("RateLimit-Policy"), false
		}
		select {
		case err := <-errc:
			if uerr := (*usageError)(nil); errors.As(err, &uerr) {
				return nil, true
			}
			t.Fatalf("serve %q = %v; stderr:\n%s", args, err, stderr.String())
		default:
		}
	}
	t.Fatalf("serve %q did not start", args)
	return nil, false
}
