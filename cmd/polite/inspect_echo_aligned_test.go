package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// A credential a server echoed into a policy's name is elided before the
// quotas' table is laid out: elided after it, the row that held it was
// shorter than the others by the credential's length less one, its
// columns out of line.
func TestInspectEchoKeepsColumns(t *testing.T) {
	const secret = "abcdefghijklmnopqrstuvwxyz"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("RateLimit-Policy", `"`+tok+`";q=10;w=60, "other";q=5;w=1`)
		w.Header().Set("RateLimit", `"`+tok+`";r=9;t=30, "other";r=4;t=1`)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{"-H", "Authorization: Bearer " + secret, srv.URL}, &stdout, &stderr); err != nil {
		t.Fatalf("runInspect = %v; stderr:\n%s", err, stderr.String())
	}
	out := stdout.String()
	if strings.Contains(out, secret) {
		t.Fatalf("the credential is shown:\n%s", out)
	}
	// Each row's unit column starts where the header's does, in runes:
	// "…" is one, of three bytes.
	var col int
	for line := range strings.Lines(out) {
		switch {
		case strings.HasPrefix(line, "  dialect"):
			col = utf8.RuneCountInString(line[:strings.Index(line, "unit")])
		case col > 0 && strings.HasPrefix(line, "  ietf"):
			if i := utf8.RuneCountInString(line[:strings.Index(line, "requests")]); i != col {
				t.Errorf("a row's unit at column %d, the header's at %d:\n%s", i, col, out)
			}
		}
	}
	if col == 0 {
		t.Fatalf("no quotas' table:\n%s", out)
	}
}
