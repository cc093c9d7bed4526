package main

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A Basic credential written without base64 padding (as `base64 | tr -d
// =` writes it; lenient decoders read it, as polite's own logError does)
// is a Basic credential all the same: its password, decoded and echoed by
// the server, is shown as "…".
func TestInspectEchoBasicUnpaddedDecoded(t *testing.T) {
	const password = "hunter2-4f9a1c2e7bx"
	raw := base64.RawStdEncoding.EncodeToString([]byte("alice:" + password))
	if raw == base64.StdEncoding.EncodeToString([]byte("alice:"+password)) {
		t.Fatal("test needs a credential whose base64 has padding")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred := strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
		b, _ := base64.RawStdEncoding.DecodeString(strings.TrimRight(cred, "="))
		_, p, _ := strings.Cut(string(b), ":")
		w.Header().Set("RateLimit-Policy", `"`+p+`";q=10;w=60`)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{"-H", "Authorization: Basic " + raw, srv.URL}, &stdout, &stderr); err != nil {
		t.Fatalf("runInspect = %v; stderr:\n%s", err, stderr.String())
	}
	out := stdout.String() + stderr.String()
	if !strings.Contains(out, "quotas") {
		t.Fatalf("no report:\n%s", out)
	}
	if strings.Contains(out, password) {
		t.Errorf("the decoded password of an unpadded Basic credential the server echoed is shown:\n%s", out)
	}
}
