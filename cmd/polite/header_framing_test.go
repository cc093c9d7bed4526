package main

import (
	"bytes"
	"strings"
	"testing"
)

// An -H that net/http does not send (Content-Length, Transfer-Encoding,
// Trailer: it sets them from the request itself) was dropped silently,
// and the request went without it; it is a usage error, naming the
// field and not its value.
func TestFramingHeaderIsUsageError(t *testing.T) {
	for _, cmd := range []string{"inspect", "get"} {
		for _, h := range []string{"Content-Length: 5", "transfer-encoding: chunked", "Trailer: X-Sum"} {
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
