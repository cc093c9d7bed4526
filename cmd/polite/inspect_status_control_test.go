package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// inspectStatus runs inspect against a loopback server that answers every
// request with a 429 whose reason phrase is reason, and returns what it
// printed.
func inspectStatus(t *testing.T, reason string) string {
	t.Helper()
	return inspectRaw(t, nil, "429 "+reason, "Retry-After: 5\r\n")
}

// inspectRaw runs inspect with args against rawServer's URL, and returns
// what it printed.
func inspectRaw(t *testing.T, args []string, status, lines string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), append(args, rawServer(t, status, lines)), &stdout, &stderr); err != nil {
		t.Fatalf("inspect: %v; stderr:\n%s", err, stderr.String())
	}
	return stdout.String()
}

// rawServer answers every request on loopback with the status line's
// code and reason and the header lines given (each ending in CRLF), and
// no body, as a server may that net/http's would not let write them; it
// returns its URL.
func rawServer(t *testing.T, status, lines string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				c.Write([]byte("HTTP/1.1 " + status + "\r\n" + lines + "Content-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// inspect printed the status line's reason phrase as the server sent it.
// net/http rejects control bytes in header fields but not in the reason
// phrase, so a hostile server's "429 \x1b]0;…\x07\x1b[2J" reaches the
// terminal: it retitles the window, clears the screen, or (OSC 52) writes
// the clipboard. Every other server-controlled text in the report is
// quoted with %q, parsed, or escaped (the findings); the status was not.
func TestInspectStatusControlBytesNotPrinted(t *testing.T) {
	if out := inspectStatus(t, "Slow down\x1b]0;owned\x07\x1b[2J"); strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("inspect printed the server's control bytes to the terminal:\n%q", out)
	}
}

// printable quoted a status line only when one of its runes was not
// printable, ranging over the string: a byte that is no UTF-8 (such as
// 0x9b, the 8-bit form of CSI, or 0x9d, OSC) decodes as U+FFFD, which
// strconv.IsPrint accepts, so the raw byte was printed as the server sent
// it. A terminal in an 8-bit (Latin-1) locale, or one honouring 8-bit C1
// controls, reads "\x9b2J" as ESC [ 2 J: the escape the fix keeps out.
// strconv.Quote itself would have escaped the byte (\x9b).
func TestInspectStatusInvalidUTF8Quoted(t *testing.T) {
	out := inspectStatus(t, "Slow down\x9b2J\x9d0;owned\x9c")
	if strings.IndexByte(out, 0x9b) >= 0 || strings.IndexByte(out, 0x9d) >= 0 {
		t.Errorf("inspect printed the server's raw C1 bytes (not UTF-8) to the terminal:\n%q", out)
	}
}

// The findings quote what the server sent (an Age, an
// Access-Control-Allow-Origin), and net/http lets bytes from 0x80
// through: a C1 control, raw (0x9b) or in UTF-8 (U+009B), reached the
// terminal as the status line's did.
func TestInspectFindingsC1BytesNotPrinted(t *testing.T) {
	const policy = "RateLimit-Policy: \"p\";q=10;w=60\r\n"
	for _, c := range []struct{ name, lines string }{
		{"cors", "Access-Control-Allow-Origin: \x9b2J\x9d0;owned\x9c\r\n"},
		{"age", "Age: 5, \x9b2J\x9d0;owned\x9c\r\n"},
		{"cors, C1 in UTF-8", "Access-Control-Allow-Origin: \u009b2J\u009d0;owned\u009c\r\n"},
	} {
		out := inspectRaw(t, nil, "200 OK", c.lines+policy)
		if strings.IndexByte(out, 0x9b) >= 0 || strings.IndexByte(out, 0x9d) >= 0 {
			t.Errorf("%s: inspect printed the server's C1 bytes to the terminal:\n%q", c.name, out)
		} else if !strings.Contains(out, "2J") {
			t.Errorf("%s: no finding quotes the field:\n%s", c.name, out)
		}
	}
}

// inspect -json wrote a policy's name as the server sent it (GitHub's
// X-RateLimit-Resource, Discord's X-RateLimit-Bucket): encoding/json
// escapes no C1 control (U+009B, CSI) nor a bidi override (U+202E). It
// writes them as JSON escapes, which read back as the server's name; the
// text report quotes the name once (escaped first, it was quoted again,
// and read as a name with a backslash in it).
func TestInspectJSONPolicyControlRunesNotPrinted(t *testing.T) {
	for _, name := range []string{"\u009b2J\u009d0;owned\u009c", "res\u202ecruoser"} {
		lines := "X-RateLimit-Limit: 60\r\nX-RateLimit-Remaining: 59\r\nX-RateLimit-Reset: 1999999999\r\nX-RateLimit-Resource: " + name + "\r\n"
		out := inspectRaw(t, []string{"-json"}, "200 OK", lines)
		var rep inspectReport
		if strings.ContainsAny(out, "\u009b\u009d\u202e") {
			t.Errorf("inspect -json printed the server's control runes:\n%q", out)
		} else if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Quotas) != 1 || rep.Quotas[0].Policy != name {
			t.Errorf("inspect -json: %v, quotas %+v; want the policy %q:\n%s", err, rep.Quotas, name, out)
		}
		text := inspectRaw(t, nil, "200 OK", lines)
		if strings.ContainsAny(text, "\u009b\u009d\u202e") || !strings.Contains(text, strconv.Quote(name)) {
			t.Errorf("inspect: want the policy shown as %s:\n%s", strconv.Quote(name), text)
		}
	}
}

// A redirect to a host holding a C1 control or a bidi override fails the
// request with net's error, which names the host unquoted ("lookup
// \u009b2J.invalid: no such host"): inspect's error (printed on stderr),
// inspect -json's error object and get's log line carried it raw.
func TestRedirectHostControlRunesNotPrinted(t *testing.T) {
	const bad = "\u009b\u202e"
	for _, loc := range []string{"http://\u009b2J.invalid/", "http://a\u202eb.invalid/"} {
		target := rawServer(t, "302 Found", "Location: "+loc+"\r\n")
		var stdout, stderr bytes.Buffer
		if err := runInspect(t.Context(), []string{target}, &stdout, &stderr); err == nil || strings.ContainsAny(err.Error(), bad) {
			t.Errorf("inspect, redirect to %q: error %v; want one, the rune escaped", loc, err)
		}
		stdout.Reset()
		runInspect(t.Context(), []string{"-json", target}, &stdout, &stderr)
		if strings.ContainsAny(stdout.String(), bad) {
			t.Errorf("inspect -json, redirect to %q: printed the rune: %q", loc, stdout.String())
		}
		stderr.Reset()
		getMain(t.Context(), []string{target}, strings.NewReader(""), &stdout, &stderr)
		if strings.ContainsAny(stderr.String(), bad) {
			t.Errorf("get, redirect to %q: its log line holds the rune: %q", loc, stderr.String())
		}
	}
}

// A URL whose user information holds a '/' reads its first part as the
// host ("http://s3cr\u009bt/more@127.0.0.1:1/"), which the error names as
// the resolver got it, raw or in Punycode, where the URL it holds
// percent-encodes it: the elision of the authority missed it, and the
// errors of inspect and get showed it.
func TestErrorHidesNonASCIIUserinfo(t *testing.T) {
	target := "http://s3cr\u009bt/more@127.0.0.1:1/"
	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{target}, &stdout, &stderr); err == nil || strings.Contains(err.Error(), "s3cr") {
		t.Errorf("inspect: error %v; want one, without the user information", err)
	}
	runInspect(t.Context(), []string{"-json", target}, &stdout, &stderr)
	getMain(t.Context(), []string{"-max-attempts", "1", target}, strings.NewReader(""), &stdout, &stderr)
	if out := stdout.String() + stderr.String(); strings.Contains(out, "s3cr") {
		t.Errorf("inspect -json and get show the user information:\n%s", out)
	}
}

// The name looked up is elided where the error names it ("lookup NAME")
// only: replaced everywhere, a name that is a word of the rest of the
// message, or two letters of one, elided those too. The URLs are ones
// whose authority shownURL elides ("http://u@host:80/x@y/": the password
// may be "host:80/x"); the errors are built, no lookup is made.
func TestErrorElidesLookupNameOnly(t *testing.T) {
	for _, c := range []struct{ url, name, want string }{
		{"http://u@host:80/x@y/", "host", "dial tcp: lookup …: no such host"},
		{"http://u@tc:80/x@y/", "tc", "dial tcp: lookup …: no such host"},
		{"http://u@such:80/x@y/", "such", "dial tcp: lookup …: no such host"},
	} {
		if shownURL(c.url) != "http://…" {
			t.Fatalf("shownURL(%q) = %q; the test wants it elided", c.url, shownURL(c.url))
		}
		ue := &url.Error{Op: "Get", URL: c.url, Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: c.name, IsNotFound: true}}}
		if got := urlErrText(ue); got != c.want {
			t.Errorf("name %q: urlErrText = %q; want %q", c.name, got, c.want)
		}
	}
}

// The JSON outputs write a rune that does not print as a JSON escape,
// which reads back as the server's text: get's log line was escaped as Go
// text first, then as JSON, and read back as a backslash, 'u', "009b",
// not what inspect -json gives for the same failure.
func TestGetLogErrorReadsBackAsServerText(t *testing.T) {
	const host = "\u009b2J.invalid" // a C1 control: Go's resolver refuses it, no query sent
	target := rawServer(t, "302 Found", "Location: http://"+host+"/\r\n")

	var stdout, stderr bytes.Buffer
	runInspect(t.Context(), []string{"-json", target}, &stdout, &stderr)
	var ie inspectError
	if err := json.Unmarshal(stdout.Bytes(), &ie); err != nil || !strings.Contains(ie.Error, host) {
		t.Fatalf("inspect -json: %v, error %q; want the host %q read back", err, ie.Error, host)
	}

	stdout.Reset()
	stderr.Reset()
	getMain(t.Context(), []string{"-max-attempts", "1", target}, strings.NewReader(""), &stdout, &stderr)
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		var rec getRecord
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.URL == "" {
			continue
		}
		if !strings.Contains(rec.Error, host) {
			t.Errorf("get's log line reads back as error %q; want the server's host %q in it, as inspect -json's %q has",
				rec.Error, host, ie.Error)
		}
		return
	}
	t.Fatalf("get printed no log line:\n%s", stderr.String())
}
