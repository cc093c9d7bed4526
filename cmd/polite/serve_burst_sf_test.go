package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// serve refused a -quota (or -quota times -inflate) past a Structured
// Fields Integer, so that it never sends q= or r= no draft-11 reader
// accepts; but a leaky bucket's r counts its -burst too (Burst+1 at once),
// and -burst was allowed up to ratelimittest.MaxBurst (19 digits): serve
// started and sent an r= of 16 digits, its RateLimit field ignored whole.
// Such a -burst is a usage error now.
func TestServeBurstFitsStructuredInteger(t *testing.T) {
	for _, args := range [][]string{
		{"-algorithm", "leaky-bucket", "-quota", "10", "-burst", "1000000000000000"},
		{"-algorithm", "leaky-bucket", "-quota", "10", "-burst", "999999999999000", "-inflate", "1000"}, // -quota times -inflate is 10000, r= is not
	} {
		ctx, cancel := context.WithCancel(t.Context())
		var stdout, stderr syncBuffer
		errc := make(chan error, 1)
		go func() { errc <- runServe(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), &stdout, &stderr) }()
		base, refused := "", false
		for deadline := time.Now().Add(5 * time.Second); base == "" && !refused && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			select {
			case err := <-errc:
				if uerr := (*usageError)(nil); !errors.As(err, &uerr) {
					t.Errorf("serve %q = %v, want a usage error or a server", args, err)
				}
				refused = true
				continue
			default:
			}
			if s := stdout.String(); strings.Contains(s, "serving http://") {
				base = strings.TrimSuffix(strings.Fields(s[strings.Index(s, "http://"):])[0], "/")
			}
		}
		if refused {
			cancel()
			continue
		}
		if base == "" {
			cancel()
			t.Fatalf("serve %q did not start", args)
		}
		resp, err := http.Get(base + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, err := parse.Limits(resp.Header.Values("RateLimit")); err != nil {
			t.Errorf("serve %q: RateLimit %q is not valid draft-11: %v", args, resp.Header.Values("RateLimit"), err)
		}
		if _, err := parse.Policies(resp.Header.Values("RateLimit-Policy")); err != nil {
			t.Errorf("serve %q: RateLimit-Policy %q is not valid draft-11: %v", args, resp.Header.Values("RateLimit-Policy"), err)
		}
		cancel()
		<-errc
	}
}
