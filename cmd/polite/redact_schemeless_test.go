package main

import (
	"bytes"
	"strings"
	"testing"
)

// shownURL's branch for what does not parse as a URL with a host took the
// first "//" for the end of a scheme even with user information before
// it: a curl-style "user:password@host" whose password holds "//" (a
// base64 password), or whose path holds "//" beside an '@' in the query,
// was shown with its user information (inspect's "has no scheme" notice,
// an unknown command).
func TestSchemelessUserinfoNotShown(t *testing.T) {
	for _, tt := range []struct {
		target string
		secret []string // none may be printed
	}{
		// A base64 password with "//" in it: "alice:c2VjcmV0" was shown.
		{"alice:c2VjcmV0//cGFzcw@127.0.0.1:1/x", []string{"c2VjcmV0", "cGFzcw"}},
		// A "//" in the path and an '@' in the query: the whole user
		// information was shown.
		{"alice:hunter2@127.0.0.1:1//v1?email=a@b", []string{"hunter2"}},
	} {
		for _, args := range [][]string{
			{"inspect", tt.target},
			{"inspect", "-json", tt.target},
			{tt.target}, // unknown command: shown as shownURL shows it
		} {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), args, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			for _, s := range tt.secret {
				if strings.Contains(out, s) {
					t.Errorf("polite %q (exit %d) printed the password part %q:\n%s", args, code, s, out)
				}
			}
		}
	}
}

// An -H value left unquoted whose first word begins with '-' (a base64url
// key: polite get -H X-Api-Key: $KEY URL) is split by the shell and read
// by the flag package as a flag: its "flag provided but not defined"
// error printed the key whole.
func TestUnquotedHeaderWordAsFlagNotShown(t *testing.T) {
	const key = "-Zk3SECRETapikey"
	for _, cmd := range []string{"get", "inspect"} {
		args := []string{cmd, "-H", "X-Api-Key:", key, "http://127.0.0.1:1/"}
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != 2 || strings.Contains(out, "SECRETapikey") {
			t.Errorf("polite %q: exit %d, want 2 and the -H word not shown; first line: %q",
				args, code, strings.SplitN(out, "\n", 2)[0])
		}
	}
}

// The same with the scheme of an Authorization joined to its name
// (polite get -H Authorization:Bearer $TOKEN URL): the -H has a value, the
// scheme alone, and the token that followed it was printed whole.
func TestUnquotedAuthorizationTokenAsFlagNotShown(t *testing.T) {
	const token = "-tokSECRET123"
	for _, h := range []string{"Authorization:Bearer", "authorization: Basic", "Proxy-Authorization:Bearer"} {
		args := []string{"get", "-H", h, token, "http://127.0.0.1:1/"}
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != 2 || strings.Contains(out, "SECRET123") {
			t.Errorf("polite %q: exit %d, want 2 and the token not shown; first line: %q",
				args, code, strings.SplitN(out, "\n", 2)[0])
		}
	}
}
