package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func TestGetUserAgent(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.Header.Get("User-Agent"))
		mu.Unlock()
	}))
	defer srv.Close()

	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, defaultUserAgent},
		{[]string{"-user-agent", "mybot/1.0 (+https://mybot.example)"}, "mybot/1.0 (+https://mybot.example)"},
	} {
		agents = nil
		var stdout, stderr bytes.Buffer
		if err := runGet(t.Context(), append(tt.args, srv.URL+"/"), &stdout, &stderr); err != nil {
			t.Fatalf("get %v: %v\n%s", tt.args, err, stderr.String())
		}
		if len(agents) != 1 || agents[0] != tt.want {
			t.Errorf("get %v: User-Agent %q, want %q", tt.args, agents, tt.want)
		}
	}
}

// TestGetRobotsRefused checks that -robots is refused, not ignored, while
// the Transport cannot read robots.txt.
func TestGetRobotsRefused(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := runGet(t.Context(), []string{"-robots", "http://127.0.0.1:1/"}, &stdout, &stderr); err == nil {
		t.Error("get -robots succeeded, want a usage error")
	}
}
