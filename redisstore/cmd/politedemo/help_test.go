package main

import (
	"bytes"
	"io"
	"testing"
)

// "politedemo -h" printed its usage, then "politedemo: flag: help
// requested" and exited 1, as for a wrong flag; polite's own -h (and
// polite help) exits 0. Asking for help is not an error.
func TestHelpIsNotAnError(t *testing.T) {
	var stderr bytes.Buffer
	if err := run([]string{"-h"}, io.Discard, &stderr); err != nil {
		t.Errorf("run(-h) = %v, want nil (usage printed: %q)", err, stderr.String()[:40])
	}
}
