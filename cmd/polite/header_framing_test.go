package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An -H with a value that net/http does not send as given
// (Content-Length, Transfer-Encoding, Trailer: it writes them from the
// request itself) was dropped silently, and the request went without it;
// it is a usage error, naming the field and not its value. (Allowing a
// Trailer, which HTTP/2 sends, let HTTP/1.1 drop it silently again.)
func TestFramingHeaderIsUsageError(t *testing.T) {
	for _, cmd := range []string{"inspect", "get"} {
		for _, h := range []string{"Content-Length: 5", "transfer-encoding: chunked", " Transfer-Encoding : gzip", "Trailer: X-Sum"} {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), []string{cmd, "-H", h, "http://127.0.0.1:1/"}, &stdout, &stderr)
			name, value, _ := strings.Cut(h, ":")
			if code != 2 {
				t.Errorf("polite %s -H %q: exit %d, want 2; stderr: %s", cmd, h, code, stderr.String())
			}
			if !strings.Contains(strings.ToLower(stderr.String()), strings.ToLower(name)) {
				t.Errorf("polite %s -H %q: stderr does not name %s: %s", cmd, h, name, stderr.String())
			}
			if strings.Contains(stderr.String(), strings.TrimSpace(value)) {
				t.Errorf("polite %s -H %q: stderr shows the value: %s", cmd, h, stderr.String())
			}
		}
	}
}

// The first form of the check above failed curl's way of asking that a
// field not be sent, -H 'Name:', which net/http honours by sending none.
func TestFramingHeaderWithoutValueIsSent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, h := range []string{"Transfer-Encoding:", "Content-Length:", "Trailer:"} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), []string{"inspect", "-H", h, srv.URL + "/"}, &stdout, &stderr); code != 0 {
			t.Errorf("polite inspect -H %q: exit %d, want 0; stderr: %s", h, code, stderr.String())
		}
	}
}
