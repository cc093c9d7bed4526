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
		for _, h := range []string{"Authorization:Bearer", "Proxy-Authorization: Basic", "X-Api-Key:", "Authorization:Splunk", "Authorization:Zoho-oauthtoken", "Authorization:AWS4-HMAC-SHA256"} {
			var stdout, stderr bytes.Buffer
			code := run(ctx, []string{cmd, "-H", h, token}, &stdout, &stderr)
			if out := stdout.String() + stderr.String(); strings.Contains(out, token) || code != 2 {
				t.Errorf("%s -H %q %s: exit %d, want 2 (usage), the token not shown:\n%s", cmd, h, token, code, out)
			}
		}
	}
}

// An Authorization that is a bare token, quoted whole, as some APIs take
// (Linear's "lin_api_…"), is no value cut short: beside a URL with no
// scheme (which inspect takes as curl does), it runs.
func TestBareTokenAuthorizationRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no request leaves the machine
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"inspect", "-H", "Authorization: lin_api_4f9a8b7c6d5e", "127.0.0.1:1/x"}, &stdout, &stderr)
	if code == 2 {
		t.Errorf("inspect -H 'Authorization: <token>' 127.0.0.1:1/x: exit 2 (usage), the header quoted whole:\n%s%s", stdout.String(), stderr.String())
	}
}
