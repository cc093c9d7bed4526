package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/politehttp/polite/ratelimittest"
)

func TestGetUserAgent(t *testing.T) {
	var mu sync.Mutex
	var agents [][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.Header.Values("User-Agent"))
		mu.Unlock()
	}))
	defer srv.Close()

	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, []string{defaultUserAgent}},
		{[]string{"-user-agent", "mybot/1.0 (+https://mybot.example)"}, []string{"mybot/1.0 (+https://mybot.example)"}},
		// -H replaces the User-Agent, whatever the case of its name.
		{[]string{"-H", "User-Agent: x"}, []string{"x"}},
		{[]string{"-H", "user-agent: x", "-user-agent", "mybot"}, []string{"x"}},
	} {
		agents = nil
		var stdout, stderr bytes.Buffer
		if err := runGet(t.Context(), append(tt.args, srv.URL+"/"), &stdout, &stderr); err != nil {
			t.Fatalf("get %v: %v\n%s", tt.args, err, stderr.String())
		}
		if len(agents) != 1 || !slices.Equal(agents[0], tt.want) {
			t.Errorf("get %v: User-Agent %q, want %q", tt.args, agents, tt.want)
		}
	}
}

// TestGetRobots checks that -robots obeys robots.txt for the product token
// of -user-agent: a disallowed URL fails without being sent, and
// robots.txt is fetched once.
func TestGetRobots(t *testing.T) {
	h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
		Body: "User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow: /private/\n",
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"-robots", "-user-agent", "mybot/1.0 (+https://mybot.example)", "-c", "1", srv.URL + "/a", srv.URL + "/private/b", srv.URL + "/c"}
	err := runGet(t.Context(), args, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 URLs failed") {
		t.Errorf("get -robots = %v, want 1 of 3 URLs failed", err)
	}
	st := h.Stats()
	if st.Fetches != 1 || st.Requests != 2 || st.Paths["/private/b"] != 0 {
		t.Errorf("robots.txt fetched %d times, %d other requests %v; want 1 fetch and /a, /c", st.Fetches, st.Requests, st.Paths)
	}
	var rec getRecord
	for line := range strings.Lines(stderr.String()) {
		var r getRecord
		if json.Unmarshal([]byte(line), &r) == nil && strings.HasSuffix(r.URL, "/private/b") {
			rec = r
		}
	}
	if !strings.Contains(rec.Error, "robots.txt") || !strings.Contains(rec.Error, "/private/") || rec.Attempts != 0 {
		t.Errorf("log of /private/b = %+v, want an error naming robots.txt and the rule, no attempt", rec)
	}
}

func TestHeaderFlagApply(t *testing.T) {
	var h headerFlag
	for _, s := range []string{"Accept: a", "accept: b", "User-Agent: x", "Host: h.example"} {
		if err := h.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	dst := http.Header{"Accept": {"z"}, "User-Agent": {"default"}, "X-Other": {"kept"}}
	host := ""
	h.apply(dst, &host)
	want := http.Header{"Accept": {"a", "b"}, "User-Agent": {"x"}, "X-Other": {"kept"}}
	for name, v := range want {
		if !slices.Equal(dst[name], v) {
			t.Errorf("%s: %q, want %q", name, dst[name], v)
		}
	}
	if host != "h.example" {
		t.Errorf("host %q, want h.example", host)
	}
}

// get -robots -H 'User-Agent: mybot/1.0' sends every request as mybot, and
// obeys the rules robots.txt sets for mybot, the agent the site sees. It
// obeyed those of -user-agent's product token (polite-get).
func TestGetRobotsOfSentUserAgent(t *testing.T) {
	h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
		Body: "User-agent: mybot\nDisallow: /\n",
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"-robots", "-H", "User-Agent: mybot/1.0", srv.URL + "/private"}
	err := runGet(t.Context(), args, &stdout, &stderr)
	if n := h.Stats().Paths["/private"]; n != 0 {
		t.Errorf("get %q = %v: /private, disallowed for mybot, was requested %d times by an agent calling itself mybot\n%s",
			args, err, n, stderr.String())
	}
}

// SECURITY.md: the polite command "never shows a value given with -H". With
// -robots, a URL robots.txt disallowed, or whose robots.txt was
// unreachable, failed with an error that showed the value of -H 'Host: …'
// (a RobotsError names the Host), while its User-Agent was elided.
func TestGetRobotsErrorHidesHostHeader(t *testing.T) {
	var robots atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots.Add(1)
			w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	for _, u := range []string{srv.URL + "/private/x", "http://" + closedPort(t) + "/private/x"} {
		var stdout, stderr bytes.Buffer
		err := getMain(t.Context(), []string{"-robots", "-H", "Host: hostsecret.example", u}, strings.NewReader(""), &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if err != nil {
			out += err.Error()
		}
		if strings.Contains(strings.ToLower(out), "hostsecret") {
			t.Errorf("polite get -robots -H 'Host: …' %s printed the -H value:\n%s", u, out)
		}
		if !strings.Contains(out, "(Host …)") {
			t.Errorf("polite get -robots -H 'Host: …' %s: no robots.txt error with the Host elided:\n%s", u, out)
		}
	}
	if robots.Load() == 0 {
		t.Error("robots.txt was never fetched")
	}
}

// A custom credential header (-H 'X-Api-Key: ...', Anthropic's x-api-key,
// api-key...) does not follow a redirect to another host from inspect or
// get; net/http strips only Authorization and Cookie, and it did.
func TestHeadersDroppedOnRedirectToOtherHost(t *testing.T) {
	const secret = "sk-review-secret"
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if v := r.Header.Get("X-Api-Key"); v != "" {
			leaked = append(leaked, v)
		}
	}))
	defer other.Close()
	// Another host for net/http's rules: localhost, not 127.0.0.1.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+"/landing", http.StatusFound)
	}))
	defer api.Close()
	for _, args := range [][]string{
		{"inspect", "-H", "X-Api-Key: " + secret, api.URL + "/v1"},
		{"get", "-H", "X-Api-Key: " + secret, api.URL + "/v1"},
	} {
		mu.Lock()
		leaked = nil
		mu.Unlock()
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), args, &stdout, &stderr)
		mu.Lock()
		if len(leaked) > 0 {
			t.Errorf("polite %s (exit %d): the other host %s received X-Api-Key %q", args[0], code, otherURL, leaked)
		}
		mu.Unlock()
	}
}
