package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for concurrent use, for the output of
// commands that write from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRunDispatch(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     int
		inOutput string // in stdout or stderr
	}{
		{"no args", nil, 2, "Usage:"},
		{"help", []string{"help"}, 0, "polite inspect"},
		{"help command", []string{"help", "get"}, 0, "-max-wait"},
		{"dash h", []string{"serve", "-h"}, 0, "-maintenance-start"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"unknown flag", []string{"demo", "-bogus"}, 2, "flag provided but not defined"},
		{"bad dialect", []string{"demo", "-dialect", "klingon"}, 2, `unknown -dialect "klingon"`},
		{"inspect without URL", []string{"inspect"}, 2, "want exactly one URL"},
		{"bad header", []string{"inspect", "-H", "nocolon", "http://127.0.0.1:1/"}, 2, "not of the form 'Name: value'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(t.Context(), tt.args, &stdout, &stderr)
			if got != tt.want {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, got, tt.want, stderr.String())
			}
			if out := stdout.String() + stderr.String(); !strings.Contains(out, tt.inOutput) {
				t.Errorf("run(%q) output does not contain %q:\n%s", tt.args, tt.inOutput, out)
			}
		})
	}
}

// Flag values that mean nothing are usage errors (exit 2), not silently
// taken or failing later.
func TestBadFlagValues(t *testing.T) {
	for _, args := range [][]string{
		{"get", "-max-wait", "-1s", "http://127.0.0.1:1/"},
		{"get", "-timeout", "-1s", "http://127.0.0.1:1/"},
		{"get", "-max-attempts", "-3", "http://127.0.0.1:1/"},
		{"get", "-max-rate", "-1", "http://127.0.0.1:1/"},
		{"get", "-max-rate", "NaN", "http://127.0.0.1:1/"},
		{"serve", "-refuse-status", "200"},
		{"serve", "-inflate", "-3"},
		{"serve", "-drip", "-1s"},
		{"serve", "-maintenance-start", "-10s", "-maintenance-end", "-5s"}, // before the server started: did nothing
		{"serve", "-hang-requests", "0"},
		{"serve", "-stream-events", "0"},
		{"serve", "-stream", "100ms", "-stream-events", "9223372036854775807"},      // streamed back to back far past -stream
		{"serve", "-stream", "1s", "-body-size", "1048576", "-stream-events", "65"}, // 64 MiB and more in all
		{"serve", "-drip-bytes", "0"},
		{"serve", "-drip-bytes", "67108865"}, // above 64 MiB
		{"serve", "-retry-after-zero", "-no-retry-after"},
		{"serve", "-retry-after", "2s", "-no-retry-after"},
		{"demo", "-burst", "-1"},
		{"serve", "-burst", "9223372036854775"}, // above ratelimittest.MaxBurst
		{"inspect", "-timeout", "-1s", "http://127.0.0.1:1/"},
		{"demo", "-latency", "-1s"}, // as serve rejects it
	} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), args, &stdout, &stderr); code != 2 {
			t.Errorf("polite %s: exit %d, want 2 (usage); stderr %q", strings.Join(args, " "), code, stderr.String())
		}
	}
}

// "polite help -h" and "polite help help" print the usage, as "polite
// help" does. "help help" called help an unknown command, and exited 2.
func TestHelpHelp(t *testing.T) {
	for _, arg := range []string{"-h", "help"} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), []string{"help", arg}, &stdout, &stderr); code != 0 || stdout.Len() == 0 || stderr.Len() != 0 {
			t.Errorf("polite help %s: exit %d, stdout %q, stderr %q; want the usage", arg, code, stdout.String(), stderr.String())
		}
	}
}

// SECURITY.md ("No secret printed"): an Authorization value or another
// request header never appears verbatim in what polite writes. A -H whose
// form is wrong (a typo: '=' or a space for ':') was echoed whole on
// stderr, twice, by headerFlag.Set's error and the flag package.
func TestMalformedHeaderFlagNotShown(t *testing.T) {
	for _, cmd := range []string{"get", "inspect"} {
		var out, errb bytes.Buffer
		code := run(t.Context(), []string{cmd, "-H", "Authorization Bearer sk-SECRET", "http://127.0.0.1:1/"}, &out, &errb)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2", cmd, code)
		}
		if s := out.String() + errb.String(); strings.Contains(s, "sk-SECRET") {
			t.Errorf("polite %s printed the -H value: %q", cmd, strings.SplitN(s, "\n", 2)[0])
		}
	}
}

// SECURITY.md: an Authorization value never appears in what polite writes.
// A value left unquoted (polite get -H Authorization: Bearer $TOKEN URL)
// passed check, "Authorization:" being a well-formed header, and left
// "Bearer" and the token as arguments: get took them for URLs and logged
// the token whole in its JSON line (shownURL showed a string that was no
// URL as it was), and serve's "unexpected arguments" did too. An -H with
// no value beside an argument without a scheme is a usage error, and an
// argument without a scheme is shown as "…".
func TestUnquotedHeaderValueNotShown(t *testing.T) {
	const token = "sk-live-TOKENSECRET"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, args := range [][]string{
		{"get", "-H", "Authorization:", "Bearer", token, srv.URL + "/"},
		{"inspect", "-H", "Authorization:", token},
		{"serve", "Bearer", token},
		{"demo", token},
	} {
		if out, code := commandOutput(t, args...); code != 2 || strings.Contains(out, token) {
			t.Errorf("polite %q: exit %d, %q; want 2 and the token not shown", args, code, out)
		}
	}
	// Without -H: a word that is no URL is logged as "…".
	var stdout, stderr bytes.Buffer
	getMain(t.Context(), []string{token, srv.URL + "/"}, strings.NewReader(""), &stdout, &stderr)
	if s := stdout.String() + stderr.String(); strings.Contains(s, token) || !strings.Contains(s, `"url":"…"`) {
		t.Errorf("polite get %s URL printed:\n%s", token, s)
	}
	// An -H with no value beside URLs is still sent.
	if out, code := commandOutput(t, "get", "-H", "X-Empty:", srv.URL+"/"); code != 0 {
		t.Errorf("polite get -H 'X-Empty:' URL: exit %d\n%s", code, out)
	}
}

// SECURITY.md: polite "never shows a value given with -H (a malformed one
// included)". check let through a name that is no HTTP token
// ("X-Token=SECRET"), and net/http's error then quoted it.
func TestHeaderNameNotTokenNotShown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	err := runInspect(t.Context(), []string{"-H", "X-Token=SECRET: x", srv.URL + "/"}, &stdout, &stderr)
	all := stdout.String() + stderr.String()
	if err != nil {
		all += err.Error()
	}
	if strings.Contains(all, "SECRET") {
		t.Errorf("a malformed -H shows: %q", all)
	}
}

// SECURITY.md: "The polite command shows URLs without their user
// information, query or fragment". A URL given where none is wanted (to
// serve or demo, with the command forgotten, or as the value of a flag:
// "get -c URL") was echoed whole in the usage error, the flag package's
// included.
func TestStrayArgumentsNotShown(t *testing.T) {
	const u = "https://alice:hunter2@api.example/?api_key=SECRETKEY"
	for _, args := range [][]string{
		{"serve", u},
		{"demo", u},
		{u},
		{"help", u},
		{"get", "-c", u},
		{"inspect", "-cost", u, "http://127.0.0.1:1/"},
		{"serve", "-public=" + u},
		{"get", "-" + u},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != 2 || strings.Contains(out, "hunter2") || strings.Contains(out, "SECRETKEY") {
			t.Errorf("polite %q: exit %d, %q; want 2 and the URL shown without its password and query", args, code, strings.SplitN(out, "\n", 2)[0])
		}
	}
}

// commandOutput runs polite with args and returns everything it wrote,
// the text of the error main would print included, and its exit status.
func commandOutput(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	return stdout.String() + stderr.String(), code
}

// extraGoroutines runs f and returns the most goroutines seen running
// while it ran, less those running before.
func extraGoroutines(f func()) int {
	before := runtime.NumGoroutine()
	peak := before
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, runtime.NumGoroutine())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return peak - before - 1 // the sampler
}

// Help asked for ("polite help get", "polite get -h") goes to stdout, as
// "polite help" does, and exits 0; it went to stderr. The usage printed
// for a mistake stays on stderr.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"help", "get"}, {"get", "-h"}, {"serve", "-help"}, {"help", "version"}, {"help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), args, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Usage:") || stderr.Len() != 0 {
			t.Errorf("polite %q: exit %d, stdout %q, stderr %q; want 0 and the usage on stdout alone", args, code, stdout.String(), stderr.String())
		}
	}
	for _, args := range [][]string{{"get", "-bogus"}, {"frobnicate"}, nil} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "Usage:") || stdout.Len() != 0 {
			t.Errorf("polite %q: exit %d, stdout %q, stderr %q; want 2 and the usage on stderr alone", args, code, stdout.String(), stderr.String())
		}
	}
}

// "polite demo -h" names only flags demo has: its -burst, whose help it
// shares with serve, named serve's -inflate.
func TestDemoHelpNamesOnlyItsFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"demo", "-h"}, &out, &errOut); code != 0 {
		t.Fatalf("demo -h: exit %d", code)
	}
	help := out.String()
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(help, -1) {
		defined[m[1]] = true
	}
	_, flags, _ := strings.Cut(help, "\nFlags:\n")
	for _, m := range regexp.MustCompile(`\s-([a-z][a-z-]+)`).FindAllStringSubmatch(flags, -1) {
		if !defined[m[1]] {
			t.Errorf("demo -h mentions -%s, which demo does not define", m[1])
		}
	}
}
