package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// A password holding a '#': url.Parse drops the fragment before it parses,
// so the *url.Error's URL is "http://alice:hunter2", with no '@' left to
// show user information, and it was printed as it was.
func TestPasswordWithHashNotShown(t *testing.T) {
	printsNo(t, "http://alice:hunter2#x@127.0.0.1:1/", "hunter2")
	for raw, want := range map[string]string{
		"http://alice:hunter2":         "http://…",
		"http://alice:hunter2/x":       "http://…",
		"http://[::1]:80%zz/":          "http://…", // no port either
		"http://127.0.0.1:8080/%zz":    "http://127.0.0.1:8080/%zz",
		"http://127.0.0.1:/%zz":        "http://127.0.0.1:/%zz",
		"http://a:b@127.0.0.1:x/%zz":   "http://…",
		"http://a:b@127.0.0.1:80/%zz?": "http://127.0.0.1:80/%zz?…",
	} {
		if got := shownURL(raw); got != want {
			t.Errorf("shownURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// polite serve -body-size made each body whole for each request: a size
// past memory killed the server at its first answer. It is bounded.
func TestServeBodySizeBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"serve", "-addr", "127.0.0.1:0", "-body-size", "35184372088832"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "-body-size") {
		t.Errorf("serve -body-size 32 TiB: exit %d, stderr %q; want a usage error (2)", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if code := run(ctx, []string{"serve", "-addr", "127.0.0.1:0", "-body-size", "67108864"}, &stdout, &stderr); code != 0 {
		t.Errorf("serve -body-size 64 MiB: exit %d, stderr %q; want it served", code, stderr.String())
	}
}

// The ']' an IP literal holds was taken as one anywhere: a password with
// a ']' in it, cut at its '#', printed whole. And a password with a ':'
// before digits, cut so, parses as a host with a port, and printed too.
func TestPasswordWithBracketOrPortShapeNotShown(t *testing.T) {
	for _, target := range []string{
		"http://alice:hun]ter2#x@127.0.0.1:1/",
		"http://alice:]hunter2#x@127.0.0.1:1/",
		"http://alice:[hunter2]#x@127.0.0.1:1/",
		"http://alice:hunter2:80#x@127.0.0.1:1/",
	} {
		printsNo(t, target, "hunter2")
	}
	for raw, want := range map[string]string{
		"http://[::1]:8080/":   "http://[::1]:8080/",
		"http://[::1]/x?k=v":   "http://[::1]/x?…",
		"http://[::1]:x%zz/":   "http://…",
		"http://127.0.0.1:80/": "http://127.0.0.1:80/",
	} {
		if got := shownURL(raw); got != want {
			t.Errorf("shownURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// SECURITY.md: a URL "in which an @ could end user information as well as
// belong to what follows it is shown as its scheme alone". A password
// holding an '@' and then a '/', '?' or '#' parses with its part before
// the '@' as the password and the rest as host and path, and that rest was
// shown: the ambiguity was checked only for a URL with no user information.
func TestPasswordWithAtNotShown(t *testing.T) {
	for raw, secret := range map[string]string{
		"http://alice:p@ssw0rd/tail@api.example/x": "ssw0rd/tail",
		"http://alice:p@ssw0rd#tail@api.example/x": "ssw0rd",
		"http://alice:p@ssw0rd?tail@api.example/x": "ssw0rd",
	} {
		if got := shownURL(raw); strings.Contains(got, secret) {
			t.Errorf("shownURL(%q) = %q: shows %q of the password", raw, got, secret)
		}
	}
	for raw, want := range map[string]string{
		"http://alice:pw@api.example/x?k=v": "http://api.example/x?…",
		"http://alice:pw@api.example/@bob":  "http://…", // cannot be told from the above
	} {
		if got := shownURL(raw); got != want {
			t.Errorf("shownURL(%q) = %q, want %q", raw, got, want)
		}
	}
	// Through the commands, password "hunter2@127.0.0.1:1/s3cret".
	printsNo(t, "http://alice:hunter2@127.0.0.1:1/s3cret@127.0.0.1:1/x", "s3cret")
}

// User information of one token (no ':') holding a '#', and before it a
// byte no host has: url.Parse's error quotes the part before the '#' as
// the URL ("https://s3cr{et"), with no '@' and no port, and it was shown.
// A URL that does not parse is shown as its scheme alone when its
// authority does not parse either, and without its fragment.
func TestUserTokenWithHashNotShown(t *testing.T) {
	printsNo(t, "https://s3cr{et#tail@127.0.0.1:1/x", "s3cr{et")
	printsNo(t, "http://127.0.0.1:1/%zz#SECRETF", "SECRETF")
	for raw, want := range map[string]string{
		"https://s3cr{et":              "https://…",
		"http://[::1":                  "http://…",
		"http://127.0.0.1:1/%zz#frag":  "http://127.0.0.1:1/%zz#…",
		"http://127.0.0.1:1/%zz?q#f":   "http://127.0.0.1:1/%zz?…#…",
		"http://127.0.0.1:1/%zz?q#f@x": "http://…", // the '?' may be a password's
	} {
		if got := shownURL(raw); got != want {
			t.Errorf("shownURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// A URL that did not parse (a bad escape) whose fragment held an '@' (an
// e-mail address before a token, as in an OAuth callback) was shown with
// the rest of its fragment: shownURL cut at the last '@' as if it ended
// user information, and kept what followed. A '#' before the last '@' is
// taken as a '?' there is: all past the scheme is elided.
func TestShownURLFragmentAfterAt(t *testing.T) {
	const raw = "http://127.0.0.1:1/%zz#email=alice@b.example&access_token=SECRETF"
	if got := shownURL(raw); got != "http://…" {
		t.Errorf("shownURL(%q) = %q, want %q", raw, got, "http://…")
	}
	for _, args := range [][]string{
		{"get", raw},
		{"inspect", raw},
		{"inspect", "-json", raw},
	} {
		if out, code := commandOutput(t, args...); strings.Contains(out, "SECRETF") {
			t.Errorf("polite %s (exit %d) printed the fragment:\n%s", args[0], code, out)
		}
	}
}

// printsNo runs polite get, inspect and inspect -json on target, and fails
// t if any of them prints secret.
func printsNo(t *testing.T, target, secret string) {
	t.Helper()
	for _, args := range [][]string{{"get", target}, {"inspect", target}, {"inspect", "-json", target}} {
		var stdout, stderr bytes.Buffer
		run(context.Background(), args, &stdout, &stderr)
		if out := stdout.String() + stderr.String(); strings.Contains(out, secret) {
			t.Errorf("polite %v printed the password:\n%s", args, out)
		}
	}
}

// In "http://alice:Hunter2:80#x@127.0.0.1/" the part before the '@' may
// be user information (password "Hunter2:80#x"); url.Parse reads it as
// the host "alice:Hunter2", port 80. get shows the URL as "http://…", and
// urlErrText elided that authority from an error as the URL spells it;
// polite's own errors (a RobotsError's origin, a WaitError's key) name
// the origin normalised, in lower case and with what is not ASCII raw
// where the URL percent-encodes it, and the password reached the log.
func TestErrorHidesNormalisedAmbiguousUserinfo(t *testing.T) {
	for _, c := range []struct{ raw, origin, secret string }{
		{"http://alice:Hunter2:80#x@127.0.0.1/", "http://alice:hunter2:80", "hunter2"},
		{"http://alice:p%C3%A4ssw%C3%B6rd:80#x@127.0.0.1/", "http://alice:pässwörd:80", "pässwörd"},
		{"http://Alice:1234#Secret@127.0.0.1/", "http://alice:1234", "alice"},
	} {
		for _, err := range []error{
			&polite.RobotsError{Origin: c.origin, Unreachable: true, Err: errors.New("no such host")},
			&polite.WaitError{Key: c.origin, Delay: time.Hour, Reason: polite.ReasonPace, Limit: time.Minute},
		} {
			got := urlErrText(&url.Error{Op: "Get", URL: c.raw, Err: err})
			if strings.Contains(strings.ToLower(got), c.secret) {
				t.Errorf("%s, error %T naming %s: shown as %q, which holds %q", c.raw, err, c.origin, got, c.secret)
			}
		}
	}
}

// "http://u@wait:80/x@y/" is shown as "http://…" (the password may be
// "wait:80/x"). A WaitError keyed by its origin spells it "http://wait";
// the bare host ("wait", from u.Hostname() and from
// origin.Normal, which drops :80) was elided everywhere in the text, and
// the words of the message went too ("pace … of", "after the …"), as they
// did in TestErrorElidesLookupNameOnly ("dial …p", "no such …"). The
// origin is elided as an origin.
func TestErrorElidesOriginNotHostWord(t *testing.T) {
	raw := "http://u@wait:80/x@y/"
	if shownURL(raw) != "http://…" {
		t.Fatalf("shownURL(%q) = %q; the test wants it elided", raw, shownURL(raw))
	}
	err := &polite.WaitError{Key: "http://wait", Delay: time.Hour, Reason: polite.ReasonPace, Limit: time.Minute}
	got := urlErrText(&url.Error{Op: "Get", URL: raw, Err: err})
	want := strings.ReplaceAll(err.Error(), "http://wait", "http://…")
	if got != want {
		t.Errorf("urlErrText = %q\nwant           %q", got, want)
	}
}

// The parts of an ambiguous authority taken from the raw URL (the part
// past its '@', the part before its last ':') are bare words when the
// authority has no port or no '@', and each was elided wherever it
// occurred in the error's text, inside other words too ("dial …p" for
// "tc"). A bare name is elided as a whole word: it may be a piece of the
// password ("tpass" of "alice:s3cr@tpass/more@host", in the other
// reading), which an error names bare ("not tpass", a TLS hostname
// error), so a word of the message that is the same name goes too.
func TestErrorElidesBareWordsWhole(t *testing.T) {
	dns := func(name string) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}}
	}
	cert := &x509.Certificate{DNSNames: []string{"example.com"}}
	tlsErr := func(host string) error {
		return &tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: cert, Host: host}}
	}
	wait := &polite.WaitError{Key: "http://pace", Delay: time.Hour, Reason: polite.ReasonPace, Limit: time.Minute}
	for _, c := range []struct {
		raw, secret string
		err         error
		keep        string // a word holding the secret, which stays
	}{
		{"http://u@such/x@y/", "such", dns("such"), "dial tcp: lookup …"},
		{"http://tc:1234#x@h/", "tc", dns("tc"), "dial tcp"},
		{"http://u@pace/x@y/", "pace", wait, "http://…"},
		{"https://alice:s3cr@tpass/more@host/", "tpass", tlsErr("tpass"), "example.com"},
		{"https://alice:1234#secret@h/", "alice", tlsErr("alice"), "example.com"},
	} {
		if !strings.HasSuffix(shownURL(c.raw), "//…") {
			t.Fatalf("shownURL(%q) = %q; the test wants it elided", c.raw, shownURL(c.raw))
		}
		got := urlErrText(&url.Error{Op: "Get", URL: c.raw, Err: c.err})
		if replaceWord(got, c.secret, "") != got || !strings.Contains(got, c.keep) {
			t.Errorf("%s: urlErrText = %q; want %q gone as a word, %q kept", c.raw, got, c.secret, c.keep)
		}
	}
}

// replaceWord replaces whole words only, and finds one that begins inside
// a match that is not one: it skipped past a rejected occurrence's whole
// length, and missed a whole word overlapping it (a name with '.' in it).
func TestReplaceWord(t *testing.T) {
	for _, c := range [][3]string{
		{"xs3.s3.s3", "s3.s3", "xs3.…"},
		{"xs3.s3", "s3", "xs3.…"},
		{"xaaa", "aa", "xaaa"},
		{"aa aa", "aa", "… …"},
		{"not tpass.", "tpass", "not …."},
		{"dial tcp", "tc", "dial tcp"},
		{"s3", "s3", "…"},
	} {
		if got := replaceWord(c[0], c[1], "…"); got != c[2] {
			t.Errorf("replaceWord(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// The host piece of a password read as a host, not ASCII, is named by a
// TLS hostname error as net/http dials it (IDNA ToASCII of the host), in
// Punycode, which no part of the URL (raw, percent-encoded) matched; that
// name is elided, and so is one whose lower case is ASCII (U+212A KELVIN
// SIGN: "kpass"), which a check of the case alone let through.
func TestErrorElidesPunycodeHostPiece(t *testing.T) {
	cert := &x509.Certificate{DNSNames: []string{"example.com"}}
	for _, c := range []struct{ raw, dialed string }{
		{"https://alice:s3cr@t%C3%A4ss/more@host/", "xn--tss-qla"},
		{"https://alice:s3cr@T%C3%84SS/more@host/", "xn--tss-qla"},
		{"https://alice:s3cr@xn--tss-qla/more@host/", "xn--tss-qla"},
		{"https://alice:s3cr@XN--TSS-QLA/more@host/", "XN--TSS-QLA"},
		{"https://alice:s3cr@%E2%84%AApass/more@host/", "kpass"},
	} {
		err := &tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: cert, Host: c.dialed}}
		got := urlErrText(&url.Error{Op: "Get", URL: c.raw, Err: err})
		if replaceWord(got, c.dialed, "") != got {
			t.Errorf("%s: urlErrText = %q; the password's piece %q is shown", c.raw, got, c.dialed)
		}
	}
}

// An ASCII host piece differing from its normal form only in case was
// elided lower-cased as a bare word: "dial tcp" lost "tcp", which the URL
// never held. Its Punycode form is added only for a host not in ASCII.
func TestErrorCaseOnlyHostPieceNotElidedLowerCased(t *testing.T) {
	raw := "https://alice:s3cr@TCP/more@host/"
	err := errors.New("dial tcp 192.0.2.1:443: connect: connection refused")
	got := urlErrText(&url.Error{Op: "Get", URL: raw, Err: err})
	if !strings.Contains(got, "dial tcp") {
		t.Errorf("urlErrText = %q; want \"dial tcp\" kept", got)
	}
}
