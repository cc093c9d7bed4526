package main

import (
	"bytes"
	"strings"
	"testing"
)

// A header given before the subcommand, as curl users and global-flag
// habits place it, in a form that keeps the value in the same argument
// (-H=…, -H'…', --header=…), was taken as the command's name, and
// "unknown command" printed it whole: the credential went to stderr (a CI
// log). Within a subcommand, curl's -H'…' was named whole by the flag
// package's "flag provided but not defined". Only the flag is named now,
// and a flag before the command is told to go after it.
func TestFlagBeforeCommandHidesHeaderValue(t *testing.T) {
	const secret = "sk-unknown-command-secret"
	for _, tt := range []struct {
		args []string
		flag string // named in the output
	}{
		{[]string{"-H=Authorization: Bearer " + secret, "get", "http://127.0.0.1:1/"}, `"-H"`},
		{[]string{"-HAuthorization: Bearer " + secret, "get", "http://127.0.0.1:1/"}, `"-H…"`},
		{[]string{"--header=X-Api-Key: " + secret, "get", "http://127.0.0.1:1/"}, `"--header"`},
		{[]string{"get", "-HAuthorization: Bearer " + secret, "http://127.0.0.1:1/"}, "-H…"},
		{[]string{"inspect", "-HX-Api-Key:" + secret, "http://127.0.0.1:1/"}, "-H…"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), tt.args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != 2 || !strings.Contains(out, tt.flag) {
			t.Errorf("run(%q) = %d, want 2 and %s named; first line: %q", tt.args, code, tt.flag, strings.SplitN(out, "\n", 2)[0])
		}
		if strings.Contains(out, secret) {
			t.Errorf("run(%q) printed the header's value:\n%s", tt.args, out)
		}
		if tt.args[0] != "get" && tt.args[0] != "inspect" && !strings.Contains(out, "flags go after the command") {
			t.Errorf("run(%q) does not say where flags go:\n%s", tt.args, out)
		}
	}
}
