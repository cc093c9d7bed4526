package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

const versionAbout = `
Version prints the version of the module github.com/politehttp/polite this
command was built from, as the Go build information records it: a tag such as
v0.1.0 after "go install github.com/politehttp/polite/cmd/polite@v0.1.0", a
pseudo-version or "(devel)" when built from a checkout. It then prints the Go
version and platform, and the VCS revision when the build recorded one.`

// runVersion implements "polite version".
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "", versionAbout, stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version takes no arguments")
	}
	bi, ok := debug.ReadBuildInfo()
	_, err := io.WriteString(stdout, versionText(bi, ok, runtime.GOOS+"/"+runtime.GOARCH))
	return err
}

// versionText formats what "polite version" prints from the build
// information bi (valid only if ok) of a binary built for platform:
//
//	polite v0.1.0
//	go version: go1.26.8 linux/amd64
//	revision: 4d5c…e1 (2026-11-30T13:00:00Z, modified)
//
// The revision line is printed only when the build recorded one.
func versionText(bi *debug.BuildInfo, ok bool, platform string) string {
	version, goVersion := "(unknown)", runtime.Version()
	var revision, at string
	var modified bool
	if ok && bi != nil {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "polite %s\ngo version: %s %s\n", version, goVersion, platform)
	if revision != "" {
		var notes []string
		if at != "" {
			notes = append(notes, at)
		}
		if modified {
			notes = append(notes, "modified")
		}
		fmt.Fprintf(&b, "revision: %s", revision)
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
