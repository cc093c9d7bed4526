package media

import "testing"

func TestIs(t *testing.T) {
	const want = "application/problem+json"
	for _, tt := range []struct {
		ct string
		ok bool
	}{
		{"application/problem+json", true},
		{"Application/Problem+JSON", true},
		{" application/problem+json\t; charset=utf-8", true},
		{"application/problem+json;;a=1", true},       // an empty parameter
		{"application/problem+json; a=1; A=2", true},  // a name twice
		{"application/problem+json; a=\"x;y\"", true}, // a quoted ;
		{"application/problem+jſon", false},           // ſ folds to s, but is no ASCII letter
		{"application/problem+json extra", false},
		{"application/json", false},
		{"", false},
		{"\u00a0application/problem+json", false}, // no OWS
	} {
		if got := Is(tt.ct, want); got != tt.ok {
			t.Errorf("Is(%q) = %v, want %v", tt.ct, got, tt.ok)
		}
	}
}
