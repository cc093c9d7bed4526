package llmcost

import (
	"strings"
	"testing"
)

// A lone half of a surrogate pair is no character, and a JSON decoder
// (the server's) reads it as U+FFFD. The scanner counted a second half
// as nothing whether or not a first half came just before it: a prompt
// of lone second halves cost only the fixed overhead of its message.
func TestLoneSurrogateCounts(t *testing.T) {
	const path = "/v1/chat/completions"
	body := func(text string) string {
		return `{"messages":[{"role":"user","content":"` + text + `"}],"max_tokens":1}`
	}
	est := func(text string) int64 {
		t.Helper()
		e, ok := String(body(text), path, 0)
		if !ok {
			t.Fatalf("%.40s: not estimated", body(text))
		}
		return e.Input
	}
	const n = 1000
	replacement := est(strings.Repeat(`\uFFFD`, n))
	pair := est(strings.Repeat(`\uD83D\uDE00`, n))
	for _, c := range []struct{ name, text string }{
		{"lone second halves", strings.Repeat(`\uDC00`, n)},
		{"lone first halves", strings.Repeat(`\uD800`, n)},
		{"second halves after a letter", strings.Repeat(`\uD800x\uDC00`, n/2)},
		{"second halves after an escape", strings.Repeat(`\uD800\n\uDC00`, n/2)},
	} {
		if got := est(c.text); got < replacement {
			t.Errorf("%s: Input %d, want at least %d (as many U+FFFD)", c.name, got, replacement)
		}
	}
	// A pair is one character: counted once, as a 4-byte one.
	if emoji := est(strings.Repeat("😀", n)); pair != emoji {
		t.Errorf("%d escaped pairs: Input %d, want %d as the characters unescaped", n, pair, emoji)
	}
	// A second half that opens the next string is lone too.
	split := `{"messages":[{"role":"user","content":"\uD800"},{"role":"user","content":"` +
		strings.Repeat(`\uDC00`, n) + `"}],"max_tokens":1}`
	e, _ := String(split, path, 0)
	if e.Input < replacement {
		t.Errorf("second halves opening the next string: Input %d, want at least %d", e.Input, replacement)
	}
}
