// Command polite shows what rate-limit headers do, and fetches URLs without
// hitting a server's limits.
//
// Usage:
//
//	polite demo [flags]              race a plain client against polite on a local server
//	polite inspect [flags] URL       what one response says about rate limits
//	polite get [flags] [URL...]      fetch URLs (or stdin, one per line) politely
//	polite serve [flags]             run a rate-limited test server
//	polite version                   print the module version and how it was built
//	polite help [command]            print help
//
// Run "polite help <command>" for a command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// command is one subcommand of polite.
type command struct {
	name    string
	args    string // synopsis of the arguments after the flags
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order help shows them.
func commands() []command {
	return []command{
		{"demo", "[flags]", "race a plain client against polite on a local rate-limited server", runDemo},
		{"inspect", "[flags] URL", "send one GET and explain what the response says about rate limits", runInspect},
		{"get", "[flags] [URL...]", "fetch URLs (or stdin, one per line) through one polite Transport", runGet},
		{"serve", "[flags]", "run a rate-limited test server and log each decision", runServe},
		{"version", "", "print polite's module version, the Go version and the VCS revision", runVersion},
	}
}

// usageError reports a mistake in the command line; main exits with status 2.
type usageError struct{ msg string }

// Error returns the message.
func (e *usageError) Error() string { return e.msg }

// usagef returns a *usageError with a formatted message.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// main runs the command named by the arguments, stopping it on SIGINT or
// SIGTERM, and exits with its status.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args to a subcommand and returns the exit status: 0 on
// success or help, 2 for a usage error, 1 for any other failure.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") || rest[0] == "help" {
			printUsage(stdout) // "help -h" and "help help" too
			return 0
		}
		name, rest = rest[0], []string{"-h"}
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, rest, stdout, stderr)
		var uerr *usageError
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &uerr):
			fmt.Fprintf(stderr, "polite %s: %v\nRun 'polite help %s' for usage.\n", name, err, name)
			return 2
		case errors.Is(err, errFlagParse):
			return 2 // the FlagSet has already explained
		default:
			fmt.Fprintf(stderr, "polite %s: %v\n", name, err)
			return 1
		}
	}
	if strings.HasPrefix(name, "-") {
		// A flag before the command, as curl's -H or a global flag goes:
		// its value, kept in the same argument (-H='Authorization: …'),
		// may be a credential.
		fmt.Fprintf(stderr, "polite: unknown command %q: flags go after the command, as in polite get -H 'Name: value' URL\n", shownFlag(name))
	} else {
		fmt.Fprintf(stderr, "polite: unknown command %q\n", shownURL(name)) // a URL, the command forgotten
	}
	printUsage(stderr)
	return 2
}

// printUsage writes the list of subcommands to w.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "polite paces HTTP requests by the rate-limit headers servers send.\n\nUsage:\n\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "\tpolite %-8s %-17s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprint(w, "\tpolite help     [command]         print help\n\nRun 'polite help <command>' for a command's flags.\n")
}

// errFlagParse is returned by parseFlags when the FlagSet rejected the
// arguments; the FlagSet has already printed why, with the usage.
var errFlagParse = errors.New("invalid flags")

// newFlagSet returns a FlagSet for a subcommand whose usage message shows the
// synopsis and about, then the flags.
func newFlagSet(name, synopsis, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("polite "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: polite %s %s\n\n%s\n\nFlags:\n", name, synopsis, strings.TrimSpace(about))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs. For -h it prints the usage on stdout,
// as help asked for, and returns flag.ErrHelp. It returns errFlagParse for
// any other parse error, which it has reported on fs's output, with the
// usage. The report shows what it quotes of the arguments as shownURL
// shows a URL: the flag package quotes a value whole, and a URL given
// where a flag wants a value ("get -c URL") may hold a credential.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		fs.SetOutput(out)
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(out)
		return err
	}
	fs.SetOutput(out)
	fmt.Fprintln(out, shownFlagError(err, fs))
	fs.Usage()
	return errFlagParse
}

// shownFlagError returns the text of err, an error of the flag package
// parsing fs, each quotation in it shown as shownURL shows a URL, and the
// argument it names unquoted as shownURL shows a URL with a scheme, or
// else as shownFlag shows a flag; the argument named is shown as
// "…" when an -H parsed before it has no value, or an Authorization its
// scheme alone: it is then likely a word of that value left unquoted and
// split by the shell, one that begins with a '-' (a base64url key) read as
// a flag.
func shownFlagError(err error, fs *flag.FlagSet) string {
	s := err.Error()
	for _, prefix := range []string{"bad flag syntax: ", "flag provided but not defined: -"} {
		if arg, ok := strings.CutPrefix(s, prefix); ok {
			if f := fs.Lookup("H"); f != nil {
				if h, ok := f.Value.(*headerFlag); ok && h.split() {
					return prefix + "…"
				}
			}
			if hasScheme(arg) {
				return prefix + shownURL(arg)
			}
			return prefix + shownFlag(arg)
		}
	}
	return shownQuotations(s)
}

// shownFlag returns arg, a flag as given, with or without its dashes, as
// polite prints it: its dashes and its name, which ends at an '=' as the
// flag package reads it, without the value after it. A name that runs
// into anything but a letter, a digit, '-' or '_' is curl's value
// given in the same argument as a one-letter flag (-H'Authorization: …'),
// shown as the dashes and that letter, then "…". The value may be a
// credential.
func shownFlag(arg string) string {
	name := strings.TrimLeft(arg, "-")
	dashes := arg[:len(arg)-len(name)]
	i := strings.IndexFunc(name, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_')
	})
	switch {
	case i < 0:
		return arg
	case i > 0 && name[i] == '=':
		return dashes + name[:i]
	case i > 0:
		return dashes + name[:1] + "…"
	}
	return dashes + "…"
}

// headerFlag collects repeated -H 'Name: value' flags.
type headerFlag []string

// String returns the headers collected so far, for the flag package.
func (h *headerFlag) String() string { return strings.Join(*h, ", ") }

// Set collects s; check reports one not of the form 'Name: value'. Set
// returns no error, since the flag package would print the value with it,
// and a value mistyped may hold a credential ("Authorization Bearer …").
func (h *headerFlag) Set(s string) error {
	*h = append(*h, s)
	return nil
}

// check returns a usage error, which shows no value, when a header
// collected is not of the form 'Name: value', or is one with a value that
// net/http does not send (see framing), or when one has no value, or is
// an Authorization holding its scheme alone (see cut), and one of args,
// the command's arguments, has no scheme: a value left unquoted
// (-H Authorization: Bearer $TOKEN, -H Authorization:Bearer $TOKEN), split
// by the shell into arguments, the URL perhaps left off.
func (h headerFlag) check(args []string) error {
	for i, s := range h {
		name, value, ok := strings.Cut(s, ":")
		if name = strings.TrimSpace(name); !ok || !token(name) {
			return usagef("-H number %d of %d is not of the form 'Name: value' (not shown: it may hold a credential)", i+1, len(h))
		}
		if framing(name) && strings.TrimSpace(value) != "" {
			return usagef("-H %s is not sent as given: net/http writes it from the request itself (the value not shown)", http.CanonicalHeaderKey(name))
		}
		if cut(name, value, true) && slices.ContainsFunc(args, func(a string) bool { return !hasScheme(a) }) {
			return usagef("-H number %d of %d has no value, or an Authorization that may be its scheme alone, and an argument is no URL with a scheme: quote the header whole, as -H 'Name: value', and give the URL with its scheme (neither shown: they may hold a credential)", i+1, len(h))
		}
	}
	return nil
}

// framing reports whether name is a field net/http writes from the
// request itself, not as a header map gives it: Content-Length,
// Transfer-Encoding and Trailer (HTTP/1.1 drops all three from the map;
// HTTP/2 drops the first, fails a request on a Transfer-Encoding other
// than chunked, and sends a Trailer, which declares trailers a request of
// this command never has). Given with no value, as curl's -H 'Name:' asks
// that a field not be sent, it is not sent, and that is no error.
func framing(name string) bool {
	return strings.EqualFold(name, "Content-Length") || strings.EqualFold(name, "Transfer-Encoding") || strings.EqualFold(name, "Trailer")
}

// split reports whether a header collected has no value, or an
// Authorization (or Proxy-Authorization) holds its scheme alone: a value
// left unquoted (-H X-Api-Key: $KEY, -H Authorization:Bearer $TOKEN),
// split by the shell into the arguments that follow.
func (h headerFlag) split() bool {
	return slices.ContainsFunc(h, func(s string) bool {
		name, value, _ := strings.Cut(s, ":")
		return cut(name, value, false)
	})
}

// cut reports whether a header of name and value, as -H gives them, looks
// cut short by the shell: it has no value, or it is an Authorization (or
// Proxy-Authorization) holding a single word: with scheme, one that may be
// a scheme alone (see schemeLike), else any (a bare token, as some APIs
// take, reads the same, and is hidden alike).
func cut(name, value string, scheme bool) bool {
	value = strings.TrimSpace(value)
	if value == "" {
		return true
	}
	name = strings.TrimSpace(name)
	if !strings.EqualFold(name, "Authorization") && !strings.EqualFold(name, "Proxy-Authorization") || strings.ContainsAny(value, " \t") {
		return false
	}
	return !scheme || schemeLike(value)
}

// schemeLike reports whether v may be the scheme of an Authorization alone
// (Bearer, Basic, Splunk, Zoho-oauthtoken, AWS4-HMAC-SHA256): at most 32
// letters, digits and hyphens. A bare token APIs take whole (Linear's
// lin_api_…) has an underscore or is longer; one that reads as a scheme is
// refused beside a URL with no scheme, safely: taken for the host, a token
// would be shown and looked up.
func schemeLike(v string) bool {
	if len(v) > 32 {
		return false
	}
	for i := range len(v) {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// token reports whether s is a field name: a token of RFC 9110 §5.6.2. A
// name that is not one fails the request with an error that shows it, and
// a mistyped -H may hold a credential in it ("X-Api-Key=…: x").
func token(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// apply sets the collected headers in dst: the first -H of a name
// replaces what dst had under it (a default User-Agent, say), and the next
// ones of that name add values. A Host header sets host instead, as
// net/http ignores Host in the header map.
func (h headerFlag) apply(dst http.Header, host *string) {
	for i, s := range h {
		name, value, _ := strings.Cut(s, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if strings.EqualFold(name, "Host") {
			*host = value
			continue
		}
		if h[:i].has(name) {
			dst.Add(name, value)
		} else {
			dst.Set(name, value)
		}
	}
}

// value returns the value of the first -H named name, ignoring case.
func (h headerFlag) value(name string) (string, bool) {
	if vs := h.values(name); len(vs) > 0 {
		return vs[0], true
	}
	return "", false
}

// values returns the values of every -H named name, ignoring case, in
// their order, empty ones included.
func (h headerFlag) values(name string) []string {
	var vs []string
	for _, s := range h {
		if n, v, _ := strings.Cut(s, ":"); strings.EqualFold(strings.TrimSpace(n), name) {
			vs = append(vs, strings.TrimSpace(v))
		}
	}
	return vs
}

// checkRedirect is the CheckRedirect of a client whose requests carry the
// headers h. Once a redirect has left the first origin (its scheme, host
// and port: another port is another server, and http:// sends them in
// the clear), it drops them, User-Agent aside, as net/http drops
// Authorization and Cookie (and does not restore them when a later
// redirect comes back): one may be a credential (X-Api-Key, api-key) meant
// for the first origin alone. The only Referer it sends is one -H gives,
// kept as the other headers are, as curl sends none unless asked: the one
// net/http sets holds the last URL's query (an api_key=...), which another
// port of the same host may not be meant to see either. As net/http's
// default, it stops after 10 redirects.
func (h headerFlag) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	// net/http set its own Referer, or kept the first -H Referer only
	// when it had a value: the -H Referer values with a value are what
	// goes (-H 'Referer:' asked for none).
	req.Header.Del("Referer")
	for _, v := range h.values("Referer") {
		if v != "" {
			req.Header.Add("Referer", v)
		}
	}
	first := via[0].URL
	left := !sameOrigin(req.URL, first)
	for _, v := range via[1:] {
		left = left || !sameOrigin(v.URL, first)
	}
	if !left {
		return nil
	}
	for _, s := range h {
		name, _, _ := strings.Cut(s, ":")
		if name = strings.TrimSpace(name); !strings.EqualFold(name, "User-Agent") {
			req.Header.Del(name)
		}
	}
	return nil
}

// sameOrigin reports whether a and b have one origin (RFC 6454 §4): the
// same scheme, host and port, a port left out being the scheme's default.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// has reports whether h holds a header named name, ignoring case.
func (h headerFlag) has(name string) bool {
	for _, s := range h {
		if n, _, _ := strings.Cut(s, ":"); strings.EqualFold(strings.TrimSpace(n), name) {
			return true
		}
	}
	return false
}

// isTerminal reports whether w is a terminal, which the live progress
// displays need.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	// The null device is a character device too, and no terminal: output
	// sent there (bodies not wanted) shares no screen with the progress.
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
