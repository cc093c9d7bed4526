package llmcost

import (
	"encoding/json"
	"testing"
)

// A body whose keys use JSON escapes is the same request to the server
// (any JSON decoder reads "max\u005ftokens" as max_tokens). The scanner
// took every key with an escape for an unknown one, and reserved the
// default output instead of the bound set.
func TestEscapedKeyIsKnown(t *testing.T) {
	plain := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":100000}`
	esc := `{"messages":[{"role":"user","content":"hi"}],"max\u005ftokens":100000}`
	var a, b map[string]any
	json.Unmarshal([]byte(plain), &a)
	json.Unmarshal([]byte(esc), &b)
	if a["max_tokens"] != b["max_tokens"] {
		t.Fatal("not the same request")
	}
	ep, _ := String(plain, "/v1/messages", 0)
	ee, _ := String(esc, "/v1/messages", 0)
	if ep.Output != ee.Output {
		t.Errorf("max_tokens 100000: Output %d plain, %d escaped", ep.Output, ee.Output)
	}
}

// Every escape in a key is decoded before the key is looked up; a key
// with a character past ASCII is no known key.
func TestEscapedKeys(t *testing.T) {
	const path = "/v1/chat/completions"
	plain, ok := String(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":7}`, path, 0)
	if !ok {
		t.Fatal("plain body not estimated")
	}
	for _, body := range []string{
		`{"m\u0065ssages":[{"role":"user","content":"hi"}],"max_tokens":7}`,
		`{"messages":[{"r\u006fle":"user","c\u006Fntent":"hi"}],"max\u005Ftokens":7}`,
	} {
		if got, ok := String(body, path, 0); !ok || got != plain {
			t.Errorf("String(%s) = %+v, %v, want %+v as unescaped", body, got, ok, plain)
		}
	}
	got, ok := String(`{"messages":[{"role":"user","content":"hi"}],"max_tokens\u00e9":7,"max\/tokens":8,"max\\_tokens":9}`, path, 0)
	if !ok || got.Output != DefaultMaxTokens {
		t.Errorf("keys that only look like max_tokens: %+v, %v, want the default output", got, ok)
	}
}
