package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A value of a URL's query is elided where a server echoes it, as a
// secret may be; elided over the JSON text, one that was also a number or
// a key of the output (?size=100000, ?sort=status) made a get record
// "bytes":… or "…":200, and an inspect -json report "limit":…, which no
// JSON reader takes. The strings of the output are elided; its keys, and
// its numbers, are not, but for a number holding a credential (-H), which
// becomes the string "…".
func TestJSONOutputElidesStringsOnly(t *testing.T) {
	t.Run("get", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write(bytes.Repeat([]byte("x"), 100000))
		}))
		defer srv.Close()
		for _, q := range []string{"size=100000", "sort=status"} {
			var stdout, stderr bytes.Buffer
			if err := getMain(context.Background(), []string{srv.URL + "/file?" + q}, strings.NewReader(""), &stdout, &stderr); err != nil {
				t.Fatalf("?%s: %v", q, err)
			}
			line := strings.TrimSpace(stderr.String())
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("?%s: the record %s is not JSON: %v", q, line, err)
				continue
			}
			if rec["status"] != float64(200) || rec["bytes"] != float64(100000) {
				t.Errorf("?%s: the record %s; want status 200, bytes 100000", q, line)
			}
		}
	})

	t.Run("inspect", func(t *testing.T) {
		const key = "987654321"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// A server echoing the key: as a quota, and in a name.
			w.Header().Set("RateLimit-Policy", `"tier-`+r.Header.Get("X-Api-Key")+`";q=100000;w=60, "key";q=`+r.Header.Get("X-Api-Key")+`;w=3600`)
			w.Header().Set("RateLimit", `"tier-`+r.Header.Get("X-Api-Key")+`";r=99999;t=60`)
		}))
		defer srv.Close()
		var stdout, stderr bytes.Buffer
		err := runInspect(context.Background(), []string{"-json", "-H", "X-Api-Key: " + key, srv.URL + "/?per_page=100000&tab=findings"}, &stdout, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		out := stdout.String()
		var rep struct {
			Quotas []struct {
				Policy string `json:"policy"`
				Limit  any    `json:"limit"`
			} `json:"quotas"`
			Findings []string `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("inspect -json printed %s: not JSON: %v", out, err)
		}
		if strings.Contains(out, key) {
			t.Errorf("the key %s is shown: %s", key, out)
		}
		if len(rep.Findings) == 0 || len(rep.Quotas) < 2 {
			t.Errorf("the report lost its findings or quotas: %s", out)
		}
		for _, q := range rep.Quotas {
			switch {
			case strings.HasPrefix(q.Policy, "tier") && q.Limit != float64(100000):
				t.Errorf("policy %q: limit %v; want 100000, the value of ?per_page kept as the number it also is", q.Policy, q.Limit)
			case q.Policy == "key" && q.Limit != "…":
				t.Errorf("policy %q: limit %v; want \"…\", the credential elided", q.Policy, q.Limit)
			}
		}
	})
}
