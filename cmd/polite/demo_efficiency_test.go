package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Efficiency is "the time a perfect client would need divided by the wall
// time": no client can beat a perfect one, so it is at most 1 (100%). A
// plain client that gives up after its first refusal finished in
// milliseconds with most tasks failed, and the demo reported it as hundreds
// of times more efficient than a perfect client (e.g. "53400%").
func TestDemoEfficiencyAtMostOne(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-json", "-tasks", "3", "-workers", "3", "-quota", "1", "-window", "1s", "-attempts", "1"}
	if err := runDemo(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runDemo(%q) = %v; stderr:\n%s", args, err, stderr.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var r demoResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q is not JSON: %v", l, err)
		}
		if r.Efficiency > 1 {
			t.Errorf("%s: ok %d of %d, wall %vs, ideal %vs: efficiency %v, want at most 1 (or none, when tasks failed)",
				r.Client, r.OK, r.Tasks, r.WallS, r.IdealS, r.Efficiency)
		}
	}
}
