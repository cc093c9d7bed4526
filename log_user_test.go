package polite

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestLogErrorKeepsHostNamedAsUser: a user name of 6 bytes or more was
// replaced everywhere in the message, not only in the URL's user
// information. A user name that is also the host's label (GitLab's
// "https://gitlab:TOKEN@gitlab.example", "docker", "github"...) then
// erased the host from the dial error: the record no longer said which
// host failed to resolve.
func TestLogErrorKeepsHostNamedAsUser(t *testing.T) {
	req, err := http.NewRequest("GET", "https://gitlab:s3cr3t-tok@gitlab.example/api/v4/projects", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &url.Error{Op: "Get", URL: req.URL.String(), Err: errors.New("dial tcp: lookup gitlab.example: no such host")}
	got := logError(e, req, false, "")
	if strings.Contains(got, "s3cr3t-tok") {
		t.Fatalf("token leaked: %s", got)
	}
	if !strings.Contains(got, "lookup gitlab.example") {
		t.Errorf("the host was erased from the error: %q", got)
	}
}
