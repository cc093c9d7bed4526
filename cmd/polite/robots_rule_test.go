package main

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/politehttp/polite/ratelimittest"
)

// A URL that robots.txt disallows fails with an error that should say
// which rule disallowed it: *polite.RobotsError carries it (Rule), it
// comes from the server's robots.txt, not from anything the user gave, and
// TestGetRobots wants "an error naming robots.txt and the rule". get
// elided every quotation in an error that is not a URL, so the log read
// `disallows the path for "…" (rule "…")`. TestGetRobots passed only
// because its rule, "/private/", is also a prefix of the URL shown. Here
// the rule, "/priv", is not: the user could not tell which line of
// robots.txt refused the URL. (The agent is elided on purpose, CHANGELOG says, and
// is not asked for here.)
func TestGetRobotsErrorNamesRule(t *testing.T) {
	h := ratelimittest.NewRobotsHandler(ratelimittest.RobotsConfig{
		Body: "User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow: /priv\n",
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"-robots", "-user-agent", "mybot/1.0", srv.URL + "/private/b"}
	if err := runGet(t.Context(), args, &stdout, &stderr); err == nil {
		t.Fatalf("get -robots of a disallowed URL succeeded; log:\n%s", stderr.String())
	}
	rec, ok := getRecords(t, stderr.String())[srv.URL+"/private/b"]
	if !ok {
		t.Fatalf("no record of the URL; log:\n%s", stderr.String())
	}
	if !strings.Contains(rec.Error, `"/priv"`) {
		t.Errorf("error %q; want it to name the rule \"/priv\" that disallowed the URL", rec.Error)
	}
}
