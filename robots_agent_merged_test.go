package polite_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite"
)

// RobotsError.Agent was documented as the user-agent of the group whose
// rule disallows the path; groups naming the crawler in two spellings are
// merged (RFC 9309 §2.2.1), and the rule of the second was reported under
// the first's spelling. The documentation now says so: the merged group is
// named as the first of its groups names it.
func TestRobotsErrorAgentOfMergedGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const robots = "User-agent: mybot\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n\nUser-agent: MyBot\nDisallow: /c\n"
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			body := io.NopCloser(strings.NewReader(""))
			if r.URL.Path == "/robots.txt" {
				body = io.NopCloser(strings.NewReader(robots))
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: body, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Robots: &polite.Robots{UserAgent: "mybot/1.0"}}
		for _, p := range []string{"/a", "/c"} {
			req, _ := http.NewRequest(http.MethodGet, "http://site.test"+p, nil)
			_, err := tr.RoundTrip(req)
			var re *polite.RobotsError
			if !errors.As(err, &re) {
				t.Fatalf("GET %s: %v, want a *RobotsError", p, err)
			}
			if re.Rule != p || re.Agent != "mybot" {
				t.Errorf("GET %s disallowed by rule %q of agent %q, want %q of %q", p, re.Rule, re.Agent, p, "mybot")
			}
		}
	})
}
