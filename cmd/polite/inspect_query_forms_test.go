package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// A query's API key written in forms other than name=value joined by '&'
// (a bare token, "?sk-live-…"; parameters joined by ';', which many
// servers split on) is a credential the request carried as much as
// "?api_key=…": a server that echoes it must not get it printed.
func TestInspectElidesEchoedQueryForms(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The key as a server that splits on '&' and ';' reads it.
		key := r.URL.RawQuery
		for kv := range strings.FieldsFuncSeq(r.URL.RawQuery, func(c rune) bool { return c == '&' || c == ';' }) {
			if n, v, ok := strings.Cut(kv, "="); ok && n == "api_key" {
				key = v
			}
		}
		w.Header().Set("X-RateLimit-Resource", key)
		w.Header().Set("X-RateLimit-Limit", "10")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	for _, q := range []string{secret, "v=2;api_key=" + secret} {
		if out := inspectOutput(t, srv.URL+"/v1/search?"+q); strings.Contains(out, secret) {
			t.Errorf("query %q: the output shows the query's API key the server echoed:\n%s", q, out)
		}
	}
}

// What the commands elide of a query: each value, whole and, for one that
// holds ';', by part; a bare parameter that looks like a token; not a
// bare word ("stream"), which elided blanked that word in the report.
func TestSecretsQueryForms(t *testing.T) {
	tests := []struct {
		url        string
		want, dont []string
	}{
		{"https://api.example/x?token=Ab3x9;Qz7k2", []string{"Ab3x9;Qz7k2"}, nil},
		{"https://api.example/x?v=2;api_key=sk-live-4f9a1c2e7b", []string{"sk-live-4f9a1c2e7b"}, nil},
		{"https://api.example/x?sk-live-4f9a1c2e7b", []string{"sk-live-4f9a1c2e7b"}, nil},
		{"https://api.example/x?format=json&stream&pretty", nil, []string{"stream", "pretty"}},
	}
	for _, tt := range tests {
		var h headerFlag
		got := h.secrets(tt.url)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("secrets(%q) = %q, want %q among them", tt.url, got, w)
			}
		}
		for _, d := range tt.dont {
			if slices.Contains(got, d) {
				t.Errorf("secrets(%q) = %q, want no %q", tt.url, got, d)
			}
		}
	}
}

// inspectOutput runs polite inspect with args and returns what it wrote,
// failing t unless that is a report.
func inspectOutput(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	runInspect(t.Context(), args, &stdout, &stderr)
	out := stdout.String() + stderr.String()
	if !strings.Contains(out, "quotas") {
		t.Fatalf("inspect %q: no report:\n%s", args, out)
	}
	return out
}
