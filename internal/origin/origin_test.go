package origin

import (
	"net/url"
	"testing"
)

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

// A host normalised is normal: normalised again, it is the same. The name
// of a key, which otelpolite normalises again to name its origin, was
// another for "api.test.." (one trailing dot trimmed at a time).
func TestNormalOnce(t *testing.T) {
	for _, hp := range []string{"api.test..", "API.test..:8080", "api.test.。", "api.test。.", "...", "api.test:080", "[::FFFF:192.0.2.1]", "bücher.example.",
		"a.:1:80", "a:01:80", "A.。:7:443", ":00:", "::80", "[::1]:"} {
		n := Normal("http", hp)
		if again := Normal("http", n); again != n {
			t.Errorf("Normal(%q) = %q, normalised again %q", hp, n, again)
		}
	}
}

// FuzzNormal checks that Normal never panics and that a host it
// normalised is normal, for every host[:port] a URL may have.
func FuzzNormal(f *testing.F) {
	for _, hp := range []string{"api.test..", "API.test:0443", "[2001:DB8::1]:80", "bücher.example。", "a.b%25c"} {
		f.Add("http", hp)
	}
	f.Fuzz(func(t *testing.T, scheme, hp string) {
		n := Normal(scheme, hp)
		if u, err := url.Parse("http://" + hp + "/"); err != nil || u.Host != hp {
			return // no URL's host: Normal need only not panic
		}
		if again := Normal(scheme, n); again != n {
			t.Errorf("Normal(%q, %q) = %q, normalised again %q", scheme, hp, n, again)
		}
	})
}
