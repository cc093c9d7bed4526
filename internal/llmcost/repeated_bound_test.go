package llmcost

import "testing"

// A member given twice is read as its last value by the server's decoder
// (Go's and Python's both). The scanner kept the first whole number when
// a later value was none: null, a fraction or an exponent, which set no
// bound of the client's, so the server's default applied.
func TestRepeatedBoundReadsLast(t *testing.T) {
	const chat = `{"messages":[{"role":"user","content":"hi"}],`
	for _, c := range []struct {
		path, body string
		want       int64 // Output
	}{
		{"/v1/messages", chat + `"max_tokens":100,"max_tokens":null}`, 4096},
		{"/v1/messages", chat + `"max_tokens":100,"max_tokens":"x"}`, 4096},
		{"/v1/messages", chat + `"max_tokens":100,"max_tokens":{}}`, 4096},
		{"/v1/messages", chat + `"max_tokens":100,"max_tokens":2e3}`, 4096},
		{"/v1/messages", chat + `"max_tokens":100,"max_tokens":300}`, 300},
		{"/v1/messages", chat + `"max_tokens":null,"max_tokens":300}`, 300},
		{"/v1/chat/completions", chat + `"n":3,"n":null,"max_tokens":10}`, 10},
	} {
		e, ok := String(c.body, c.path, 0)
		if !ok {
			t.Errorf("%s: not estimated", c.body)
			continue
		}
		if e.Output != c.want {
			t.Errorf("%s: Output %d, want %d", c.body, e.Output, c.want)
		}
	}
}
