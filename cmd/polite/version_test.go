package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	mainModule := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{
			GoVersion: "go1.25.0",
			Path:      "github.com/politehttp/polite/cmd/polite",
			Main:      debug.Module{Path: "github.com/politehttp/polite", Version: version},
			Settings:  settings,
		}
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{
			name: "go install at a tag",
			bi:   mainModule("v0.1.0"),
			ok:   true,
			want: "polite v0.1.0\ngo version: go1.25.0 linux/amd64\n",
		},
		{
			name: "checkout with local changes",
			bi: mainModule("v0.1.1-0.20261130130000-0123456789ab+dirty",
				debug.BuildSetting{Key: "vcs", Value: "git"},
				debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
				debug.BuildSetting{Key: "vcs.time", Value: "2026-11-30T13:00:00Z"},
				debug.BuildSetting{Key: "vcs.modified", Value: "true"}),
			ok: true,
			want: "polite v0.1.1-0.20261130130000-0123456789ab+dirty\ngo version: go1.25.0 linux/amd64\n" +
				"revision: 0123456789abcdef0123456789abcdef01234567 (2026-11-30T13:00:00Z, modified)\n",
		},
		{
			name: "revision without time, clean",
			bi: mainModule("(devel)",
				debug.BuildSetting{Key: "vcs.revision", Value: "abc"},
				debug.BuildSetting{Key: "vcs.modified", Value: "false"}),
			ok:   true,
			want: "polite (devel)\ngo version: go1.25.0 linux/amd64\nrevision: abc\n",
		},
		{
			name: "no build information",
			bi:   nil,
			ok:   false,
			want: "polite (unknown)\ngo version: " + runtime.Version() + " linux/amd64\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionText(tt.bi, tt.ok, "linux/amd64"); got != tt.want {
				t.Errorf("versionText() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRunVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run(version) = %d, want 0; stderr:\n%s", code, stderr.String())
	}
	// A test binary's build information names no module version; what
	// it must print is the Go version it runs on and the platform.
	out := stdout.String()
	if want := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH; !strings.HasPrefix(out, "polite ") || !strings.Contains(out, want) {
		t.Errorf("run(version) printed %q, want a line starting \"polite \" and %q", out, want)
	}

	stdout.Reset()
	stderr.Reset()
	if code := run(t.Context(), []string{"version", "extra"}, &stdout, &stderr); code != 2 {
		t.Errorf("run(version extra) = %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "takes no arguments") {
		t.Errorf("run(version extra) stderr = %q, want it to say the command takes no arguments", stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := run(t.Context(), []string{"help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "polite version") {
		t.Errorf("run(help) = %d with %q, want 0 and a line for polite version", code, stdout.String())
	}
}
