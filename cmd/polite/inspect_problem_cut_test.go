package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A problem document that arrived slowly (polite serve -problem -drip
// 50ms) was cut by -timeout while inspect read it; the read error was
// dropped and the finding said the body "is not valid JSON within its
// first 4096 bytes", though only a few bytes of it had arrived.
func TestInspectCutProblemNotCalledInvalid(t *testing.T) {
	const start = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(start))
		http.NewResponseController(w).Flush()
		<-r.Context().Done() // the rest never comes before the client gives up
	}))
	defer srv.Close()
	rep := inspectJSON(t, srv.URL, "-timeout", "300ms")
	cut := false
	for _, f := range rep.Findings {
		if strings.Contains(f, "not valid JSON") {
			t.Errorf("finding %q: the document was cut by the timeout after %d bytes, not shown to be invalid", f, len(start))
		}
		cut = cut || strings.Contains(f, "cut short")
	}
	if !cut {
		t.Errorf("findings %q: none says the problem document was cut short", rep.Findings)
	}
}

// A Content-Type with an empty parameter ("application/problem+json;;
// charset=utf-8", which RFC 9110 §5.6.6 allows) names a problem document,
// as the Transport reads it; inspect took it for none.
func TestInspectProblemWithEmptyParameter(t *testing.T) {
	for _, ct := range []string{
		"application/problem+json;;charset=utf-8",
		"application/problem+json; ; charset=utf-8",
	} {
		if !isProblem(http.Header{"Content-Type": {ct}}) {
			t.Errorf("isProblem(Content-Type %q) = false, want true", ct)
		}
	}
}
