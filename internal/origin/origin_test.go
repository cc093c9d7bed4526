package origin

import "testing"

func TestPunycode(t *testing.T) {
	// RFC 3492 §7.1 samples, lower-cased.
	tests := []struct{ in, want string }{
		{"ليهمابتكلموشعربي؟", "egbpdaj6bu4bxfgehfvwxn"},
		{"他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"},
		{"почемужеонинеговорятпорусски", "b1abfaaepdrnnbgefbadotcwatmq2g4l"},
		{"porquénopuedensimplementehablarenespañol", "porqunopuedensimplementehablarenespaol-fmd56a"},
		{"3年b組金八先生", "3b-ww4c5e180e575a65lsy2b"},
		{"bücher", "bcher-kva"},
	}
	for _, tt := range tests {
		if got, ok := Punycode(tt.in); !ok || got != tt.want {
			t.Errorf("Punycode(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}
