package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// inspect -cost takes unit=amount pairs and rejects the units no request
// declares ("requests": every request costs one). content-bytes is such a
// unit too (polite.Cost ignores it: the Transport charges a response's
// content, which no request declares), but -cost content-bytes=5000 was
// taken and silently dropped: the report said "a request costing
// tokens=0", a cost the user never gave, and its wait.
func TestInspectCostContentBytesRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"bytes";q=1000;w=60;qu="content-bytes"`)
		w.Header().Set("RateLimit", `"bytes";r=0;t=60`)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	err := runInspect(t.Context(), []string{"-cost", "content-bytes=5000", srv.URL}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error()+stderr.String(), "content-bytes") {
		t.Errorf("inspect -cost content-bytes=5000: error %v, stderr %q; want a usage error naming content-bytes; stdout:\n%s", err, stderr.String(), stdout.String())
	}
}
