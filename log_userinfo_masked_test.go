package polite_test

import (
	"net/http"
	"strings"
	"testing"
)

// maskedURL returns r's URL as url.URL.Redacted writes it
// ("user:xxxxx@host"), or with "***" for the password, as *url.Error does.
func maskedURL(r *http.Request, form string) string {
	u := r.URL.Redacted()
	if form == "stripped" {
		u = strings.Replace(u, "xxxxx", "***", 1)
	}
	return u
}

// doc.go ("Observing") promises that a log record's error shows Base's
// text without the request's user information, should Base's error quote
// its URL. A Base quoting it with its password masked had the user name
// logged: it was removed only as part of "user:password@". A token sent as
// the user name with a dummy password (GitHub's "TOKEN:x-oauth-basic@"),
// which net/http sends as Basic credentials, was logged whole. Then, with
// the password hidden everywhere first, a dummy password that occurs in
// the user name (a token with an "x" in it, password "x") was replaced
// inside the name, "name:" was no longer there, and the token was logged,
// one character aside.
func TestLogErrorHidesUserBeforeMaskedPassword(t *testing.T) {
	for _, form := range []string{"redacted", "stripped"} {
		for _, tc := range []struct{ url, user string }{
			{"https://ghp_t0kenvalue:x-oauth-basic@api.test/x", "ghp_t0kenvalue"},
			{"https://ghp_T0kenPARTxONE:x@api.test/x", "T0kenPART"},
		} {
			t.Run(form+"/"+tc.user, func(t *testing.T) {
				s := logOfFailure(t, tc.url, false, func(r *http.Request) string { return maskedURL(r, form) })
				if strings.Contains(s, tc.user) || strings.Contains(s, "ONE:") {
					t.Errorf("log shows the URL's user name (a credential):\n%s", s)
				}
			})
		}
	}
}

// The user name before a masked password was then hidden wherever "name:"
// occurred in the text: a user name that is also the host's (a service
// "svc" reached as http://svc:s3cret@svc:8080, as in docker-compose) was
// cut out of the error's host, "lookup svc: no such host" logged as
// "lookup ...: no such host". Only a name before a masked password and
// "@" is hidden now.
func TestLogErrorKeepsHostNamedAsUser(t *testing.T) {
	s := logOfFailure(t, "http://svc:s3cret@svc:8080/items", false, func(*http.Request) string { return "dial tcp: lookup svc: no such host" })
	if !strings.Contains(s, "lookup svc: no such host") {
		t.Errorf("the host's name was cut from the error text (it is the user name, but no password follows it here):\n%s", s)
	}
}
