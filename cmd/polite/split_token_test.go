package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// -H Authorization:Bearer $TOKEN with the URL left off: the shell splits
// the value, and the token is the command's one argument. It is a usage
// error that shows neither, as a header with no value is: the token is
// not taken for a host, printed, looked up or sent.
func TestSplitAuthorizationTokenNotShown(t *testing.T) {
	const token = "sk-live-4f9a8b7c6d5e"
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no request leaves the machine
	for _, cmd := range []string{"inspect", "get"} {
		for _, h := range []string{"Authorization:Bearer", "Proxy-Authorization: Basic", "X-Api-Key:"} {
			var stdout, stderr bytes.Buffer
			code := run(ctx, []string{cmd, "-H", h, token}, &stdout, &stderr)
			if out := stdout.String() + stderr.String(); strings.Contains(out, token) || code != 2 {
				t.Errorf("%s -H %q %s: exit %d, want 2 (usage), the token not shown:\n%s", cmd, h, token, code, out)
			}
		}
	}
}
