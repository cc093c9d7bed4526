package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve prints "- (no answer)" for a request whose client left before its
// answer, and -hang negative holds a request until the client gives up,
// for a request with a body too (a POST, as an agent calling an LLM API
// sends): net/http notices a client leaving only once the body has been
// read, which the handler does not do, and such a POST was logged as
// answered (200) under -latency, and held until serve stopped under -hang.
func TestServeClientLeftWithBodyUnanswered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		method string
		body   string
		wait   time.Duration // after the client left, for the log's line
	}{
		{"latency GET (control)", []string{"-latency", "700ms"}, http.MethodGet, "", 2 * time.Second},
		{"latency POST", []string{"-latency", "700ms"}, http.MethodPost, `{"model":"x"}`, 2 * time.Second},
		{"hang GET (control)", []string{"-hang", "-1s"}, http.MethodGet, "", 2 * time.Second},
		{"hang POST", []string{"-hang", "-1s"}, http.MethodPost, `{"model":"x"}`, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, out, stop := startServe(t, append([]string{"-addr", "127.0.0.1:0", "-quota", "5", "-window", "1m"}, tc.args...)...)
			defer stop()
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			var body *strings.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			var req *http.Request
			if body != nil {
				req, _ = http.NewRequestWithContext(ctx, tc.method, base+"/left", body)
			} else {
				req, _ = http.NewRequestWithContext(ctx, tc.method, base+"/left", nil)
			}
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			if resp, err := (&http.Client{Transport: tr}).Do(req); err == nil {
				resp.Body.Close()
			}
			cancel() // the client has given up, its connection closed
			want := tc.method + " /left - (no answer)"
			log := out.String()
			for end := time.Now().Add(tc.wait); !strings.Contains(log, want) && time.Now().Before(end); log = out.String() {
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(log, want) {
				t.Errorf("serve %v: %v after the client of a %s gave up, the log has no %q:\n%s", tc.args, tc.wait, tc.method, want, log)
			}
		})
	}
}

// A small chunked body (no Content-Length: Go's client sends one for a
// body of unknown length, curl -T -) is read too, so that a client that
// gives up under -hang is noticed; left unread (its length unstated), the
// request was held until serve stopped.
func TestServeChunkedBodyClientLeftUnanswered(t *testing.T) {
	base, out, stop := startServe(t, "-addr", "127.0.0.1:0", "-quota", "5", "-window", "1m", "-hang", "-1s")
	defer stop()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/left", io.NopCloser(strings.NewReader(`{"model":"x"}`)))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	if resp, err := (&http.Client{Transport: tr}).Do(req); err == nil {
		resp.Body.Close()
	}
	cancel()
	want := "POST /left - (no answer)"
	log := out.String()
	for end := time.Now().Add(2 * time.Second); !strings.Contains(log, want) && time.Now().Before(end); log = out.String() {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(log, want) {
		t.Errorf("2s after the client of a chunked 13-byte POST gave up, the log has no %q:\n%s", want, log)
	}
}
