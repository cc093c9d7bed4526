package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A Structured Fields Integer has at most 15 digits (RFC 9651 §3.3.1).
// serve took any -quota and -inflate, and with a quota of 16 digits or
// more (or one that -inflate made so) it sent q= and r= values no
// draft-11 reader accepts: without -malformed, the server's fields were
// malformed, and clients (polite, inspect) ignored them whole. Such
// values are a usage error now; those at the limit are served.
func TestServeQuotaFitsStructuredInteger(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		refused bool
	}{
		{[]string{"-quota", "1000000000000000"}, true},                   // 16 digits
		{[]string{"-quota", "10", "-inflate", "1000000000000000"}, true}, // advertised 1e16
		{[]string{"-quota", "999999999999999"}, false},
		{[]string{"-quota", "10", "-inflate", "99999999999999"}, false}, // advertised 999999999999990
	} {
		serveFieldsParse(t, tt.args, tt.refused)
	}
	// demo's -quota is the same flag.
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"demo", "-quota", "1000000000000000"}, &stdout, &stderr); code != 2 {
		t.Errorf("demo -quota 1000000000000000: exit %d, want 2; stderr:\n%s", code, stderr.String())
	}
}

// serveFieldsParse runs serve with args: it passes if serve refuses them
// with a usage error when refused, or else if its draft-11 fields parse.
func serveFieldsParse(t *testing.T, args []string, refused bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	errc := make(chan error, 1)
	go func() { errc <- runServe(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), &stdout, &stderr) }()
	base := ""
	for deadline := time.Now().Add(5 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-errc:
			if uerr := (*usageError)(nil); !refused {
				t.Errorf("serve %q = %v, want a server", args, err)
			} else if !errors.As(err, &uerr) {
				t.Errorf("serve %q = %v, want a usage error", args, err)
			}
			return
		default:
		}
		if s := stdout.String(); strings.Contains(s, "serving http://") {
			base = strings.TrimSuffix(strings.Fields(s[strings.Index(s, "http://"):])[0], "/")
		}
	}
	if base == "" {
		t.Fatalf("serve %q did not start", args)
	}
	defer func() { cancel(); <-errc }()
	if refused {
		t.Errorf("serve %q started, want a usage error", args)
		return
	}
	resp, err := http.Get(base + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := parse.Policies(resp.Header.Values("RateLimit-Policy")); err != nil {
		t.Errorf("serve %q: RateLimit-Policy %q is not valid draft-11: %v", args, resp.Header.Values("RateLimit-Policy"), err)
	}
	if _, err := parse.Limits(resp.Header.Values("RateLimit")); err != nil {
		t.Errorf("serve %q: RateLimit %q is not valid draft-11: %v", args, resp.Header.Values("RateLimit"), err)
	}
}
