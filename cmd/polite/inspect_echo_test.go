package main

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// A server that echoes a credential the request carried (in a policy's
// name, a problem document, a resource) does not get it printed: the
// report is pasted into bug reports and logs, and shows the value elided,
// in text and JSON alike.
func TestInspectElidesEchoedCredential(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		key := r.Header.Get("X-Api-Key")
		w.Header().Set("RateLimit-Policy", `"`+tok+`";q=10;w=60`)
		w.Header().Set("RateLimit", `"`+tok+`";r=0;t=30`)
		w.Header().Set("X-RateLimit-Resource", key)
		w.Header().Set("X-RateLimit-Limit", "10")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"title":"too many for ` + tok + `","detail":"key ` + key + ` is spent"}`))
	}))
	defer srv.Close()

	for _, json := range []bool{false, true} {
		args := []string{"-H", "Authorization: Bearer " + secret, "-H", "X-Api-Key: " + secret + "-2", srv.URL}
		if json {
			args = append([]string{"-json"}, args...)
		}
		var stdout, stderr bytes.Buffer
		runInspect(t.Context(), args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if strings.Contains(out, secret) {
			t.Errorf("json %v: the output shows the credential the server echoed:\n%s", json, out)
		}
		if !strings.Contains(out, "quotas") {
			t.Errorf("json %v: no report:\n%s", json, out)
		}
	}
}

// A value of a field that holds no credential, or one too short to elide
// without blanking words, is printed as the server sent it.
func TestInspectKeepsOtherEchoes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"`+r.Header.Get("X-Tenant")+`";q=10;w=60, "`+r.Header.Get("X-Api-Key")+`";q=5;w=1`)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"-H", "X-Tenant: acme-research", "-H", "X-Api-Key: ab12", srv.URL}
	if err := runInspect(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runInspect = %v; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{`"acme-research"`, `"ab12"`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, stdout.String())
		}
	}
}

// An error that quotes what the server sent (a redirect's Location built
// from the credential) shows it elided too.
func TestInspectErrorElidesEchoedCredential(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/"+r.Header.Get("X-Api-Key"), http.StatusFound)
	}))
	defer srv.Close()
	for _, json := range []bool{false, true} {
		args := []string{"-H", "X-Api-Key: " + secret, srv.URL}
		if json {
			args = append([]string{"-json"}, args...)
		}
		var stdout, stderr bytes.Buffer
		err := runInspect(t.Context(), args, &stdout, &stderr)
		if err == nil {
			t.Fatalf("json %v: runInspect = nil, want the dial's error", json)
		}
		if out := err.Error() + stdout.String() + stderr.String(); strings.Contains(out, secret) {
			t.Errorf("json %v: the error shows the credential the server echoed:\n%s", json, out)
		}
	}
}

// polite get's records elide a credential a server echoed into what they
// quote (an error naming a redirect's Location), as inspect does.
func TestGetRecordElidesEchoedCredential(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b&x"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/"+r.Header.Get("X-Api-Key"), http.StatusFound)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	err := getMain(t.Context(), []string{"-max-attempts", "1", "-H", "X-Api-Key: " + secret, srv.URL}, strings.NewReader(""), &stdout, &stderr)
	if err == nil {
		t.Fatalf("getMain = nil, want a failed URL; stderr:\n%s", stderr.String())
	}
	for _, form := range []string{"sk-live-4f9a1c2e7b", `sk-live-4f9a1c2e7b\u0026x`} {
		if out := err.Error() + stdout.String() + stderr.String(); strings.Contains(out, form) {
			t.Errorf("the record shows the credential the server echoed (%s):\n%s", form, out)
		}
	}
	if !strings.Contains(stderr.String(), `"error"`) {
		t.Errorf("no error recorded:\n%s", stderr.String())
	}
}

// A session cookie's value is what a server echoes ("session … expired"),
// not the "name=value" pair the -H carries: it is elided too.
func TestInspectEchoCookieValue(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("session")
		w.Header().Set("RateLimit-Policy", `"`+c.Value+`";q=10;w=60`)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	runInspect(t.Context(), []string{"-H", "Cookie: session=" + secret, srv.URL}, &stdout, &stderr)
	if out := stdout.String() + stderr.String(); strings.Contains(out, secret) {
		t.Errorf("the session cookie's value the server echoed is shown:\n%s", out)
	}
}

// A credential with a '/' (base64: an AWS secret key) that a server echoes
// percent-encoded into a redirect's path is elided as the URL spells it.
func TestInspectEchoPercentEncodedInURL(t *testing.T) {
	const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	enc := url.PathEscape(secret) // wJalrXUtnFEMI%2FK7MDENG%2F…
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			http.Redirect(w, r, "/keys/"+url.PathEscape(r.Header.Get("X-Api-Key")), http.StatusFound)
		}
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	runInspect(t.Context(), []string{"-H", "X-Api-Key: " + secret, srv.URL}, &stdout, &stderr)
	if out := stdout.String() + stderr.String(); strings.Contains(out, enc) {
		t.Errorf("text: the credential is shown percent-encoded (%s):\n%s", enc, out)
	}

	// The error path, inspect and get alike.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/keys/"+url.PathEscape(r.Header.Get("X-Api-Key")), http.StatusFound)
	}))
	defer srv2.Close()
	stdout.Reset()
	stderr.Reset()
	err := runInspect(t.Context(), []string{"-json", "-H", "X-Api-Key: " + secret, srv2.URL}, &stdout, &stderr)
	if out := err.Error() + stdout.String() + stderr.String(); strings.Contains(out, enc) {
		t.Errorf("inspect error: the credential is shown percent-encoded:\n%s", out)
	}
	stdout.Reset()
	stderr.Reset()
	err = getMain(t.Context(), []string{"-max-attempts", "1", "-H", "X-Api-Key: " + secret, srv2.URL}, strings.NewReader(""), &stdout, &stderr)
	if out := err.Error() + stdout.String() + stderr.String(); strings.Contains(out, enc) {
		t.Errorf("get record: the credential is shown percent-encoded:\n%s", out)
	}
}

// A finding quotes what the server sent with %q, and -json then escapes
// that quotation again: a credential with a '"' or '\' (a quoted cookie
// value, a password) is elided in that spelling too.
func TestInspectEchoJSONFindingDoubleEscaped(t *testing.T) {
	const secret = `pa\ss-4f9a1c2e7b`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusTooManyRequests)
		b, _ := jsonMarshalString("bad password " + r.Header.Get("X-Password"))
		w.Write([]byte(`{"title":` + b + `}`))
	}))
	defer srv.Close()
	for _, json := range []bool{false, true} {
		args := []string{"-H", "X-Password: " + secret, srv.URL}
		if json {
			args = append([]string{"-json"}, args...)
		}
		var stdout, stderr bytes.Buffer
		runInspect(t.Context(), args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if strings.Contains(out, "4f9a1c2e7b") {
			t.Errorf("json %v: the credential the server echoed is shown:\n%s", json, out)
		}
	}
}

func jsonMarshalString(s string) (string, error) {
	var b bytes.Buffer
	err := writeJSON(&b, s)
	return strings.TrimSpace(b.String()), err
}

// An Authorization whose scheme is followed by a tab (RFC 9110 allows
// 1*SP only, but net/http sends it, and servers split on whitespace): the
// token without the scheme is elided.
func TestInspectEchoAuthorizationTab(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := strings.Fields(r.Header.Get("Authorization"))
		w.Header().Set("RateLimit-Policy", `"`+f[len(f)-1]+`";q=10;w=60`)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	runInspect(t.Context(), []string{"-H", "Authorization: Bearer\t" + secret, srv.URL}, &stdout, &stderr)
	if out := stdout.String() + stderr.String(); strings.Contains(out, secret) {
		t.Errorf("the token the server echoed is shown:\n%s", out)
	}
}

// A Basic credential the server decodes and echoes (its password) is
// elided, not only its base64 form.
func TestInspectEchoBasicDecoded(t *testing.T) {
	const password = "hunter2-4f9a1c2e7b"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, p, _ := r.BasicAuth()
		w.Header().Set("RateLimit-Policy", `"`+p+`";q=10;w=60`)
	}))
	defer srv.Close()
	basic := base64.StdEncoding.EncodeToString([]byte("alice:" + password))
	var stdout, stderr bytes.Buffer
	runInspect(t.Context(), []string{"-H", "Authorization: Basic " + basic, srv.URL}, &stdout, &stderr)
	if out := stdout.String() + stderr.String(); strings.Contains(out, password) {
		t.Errorf("the decoded Basic password the server echoed is shown:\n%s", out)
	}
}

// Every credential -H has its value past the first word elided too
// ("X-Authorization: Bearer sk-…" echoed as "sk-…"), not only an
// Authorization's: the token of X-Authorization (ThingsBoard's header),
// X-Auth-Token or Authorization-Token, echoed bare, was shown.
func TestInspectEchoSchemeOfOtherAuthHeaders(t *testing.T) {
	const secret = "sk-live-4f9a1c2e7b"
	for _, name := range []string{"X-Authorization", "X-Auth-Token", "Authorization-Token"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f := strings.Fields(r.Header.Get(name))
			w.Header().Set("RateLimit-Policy", `"`+f[len(f)-1]+`";q=10;w=60`)
		}))
		var stdout, stderr bytes.Buffer
		runInspect(t.Context(), []string{"-H", name + ": Bearer " + secret, srv.URL}, &stdout, &stderr)
		srv.Close()
		if out := stdout.String() + stderr.String(); strings.Contains(out, secret) {
			t.Errorf("-H %q: the token the server echoed is shown:\n%s", name+": Bearer …", out)
		}
	}
}

// The URL in the output is spelled as the server encoded it (Go keeps a
// valid RawPath): a credential percent-encoded by Python's
// urllib.parse.quote (safe="/": '/' raw, '+' and '=' encoded) or with
// lower-case hex is elided too, not only url.PathEscape's spelling.
func TestInspectEchoPercentEncodedOtherwise(t *testing.T) {
	const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY="
	for _, enc := range []struct{ name, path string }{
		{"python quote", "wJalrXUtnFEMI/K7MDENG%2BbPxRfiCYEXAMPLEKEY%3D"},
		{"lower-case hex", "wJalrXUtnFEMI%2fK7MDENG%2bbPxRfiCYEXAMPLEKEY%3d"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				http.Redirect(w, r, "/keys/"+enc.path, http.StatusFound)
			}
		}))
		var stdout, stderr bytes.Buffer
		runInspect(t.Context(), []string{"-H", "X-Api-Key: " + secret, srv.URL}, &stdout, &stderr)
		srv.Close()
		if out := stdout.String() + stderr.String(); strings.Contains(out, enc.path) {
			t.Errorf("%s: the credential is shown percent-encoded (%s):\n%s", enc.name, enc.path, out)
		}
	}
}

// A Cookie's values that are preferences (theme=default,
// region=eu-west-1) are shown: elided, the report lost those words
// wherever they were, in polite's own findings and in the URL inspected.
func TestInspectEchoCookiePreferencesShown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	runInspect(t.Context(), []string{"-H", "Cookie: theme=default; region=eu-west-1", srv.URL + "/eu-west-1/items"}, &stdout, &stderr)
	out := stdout.String()
	for _, want := range []string{"polite's default MaxWait", "/eu-west-1/items"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q, which no credential holds:\n%s", want, out)
		}
	}
}

func TestElideEncoded(t *testing.T) {
	for _, tt := range []struct{ s, x, want string }{
		{"GET /k/a%2Fb%2fc then a/b/c", "a/b/c", "GET /k/… then …"},
		{"a%2 and a%zz/", "a/", "a%2 and a%zz/"},
		{"q=two+words&r=two%20words", "two words", "q=…&r=…"},
		{"%61%62%63", "abc", "…"},
		{"nothing here", "abc", "nothing here"},
		{"ends %6", "ab", "ends %6"},
	} {
		if got := elideEncoded(tt.s, tt.x); got != tt.want {
			t.Errorf("elideEncoded(%q, %q) = %q, want %q", tt.s, tt.x, got, tt.want)
		}
	}
}
