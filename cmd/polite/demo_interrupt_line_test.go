//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// demo draws its progress on stderr when stderr is a terminal: a status
// line redrawn in place, with no newline until the run ends (finish).
// Stopped by Ctrl-C mid-run, runBatch returned before finish, so the
// status line was left unterminated and main's "polite demo: context
// canceled" was written onto it: the terminal showed
// "plain   3/60 done, … 0.1spolite demo: context canceled". get, in the
// same case, finishes its line first. (openPTY is in
// progress_devnull_test.go.)
func TestDemoInterruptEndsStatusLine(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	defer slave.Close()
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		time.Sleep(150 * time.Millisecond) // the plain client's run is under way
		cancel()
	}()
	var stdout bytes.Buffer
	code := run(ctx, []string{"demo", "-tasks", "60", "-workers", "2", "-quota", "2"}, &stdout, slave)
	if code == 0 {
		t.Fatalf("demo ended before its interrupt; stdout:\n%s", stdout.String())
	}
	var seen bytes.Buffer
	master.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	io.Copy(&seen, master)
	out := seen.String()
	i := strings.Index(out, "polite demo:")
	if i < 0 {
		t.Fatalf("no error on the terminal: %q", out)
	}
	if before := out[:i]; before != "" && !strings.HasSuffix(before, "\n") {
		t.Errorf("the error is written onto the unterminated status line: %q", out[max(0, i-80):])
	}
}
