package polite

import "testing"

// A key looked up names its origin when it is a URL or an origin (an IPv6
// zone unescaped, as State.Key shows it, included), with user information
// before a zoned host too; a bracketed '%' elsewhere makes no origin.
func TestLookupKeyZone(t *testing.T) {
	want, _, ok := lookupKey("http://[fe80::1%en0]:8080")
	if !ok {
		t.Fatalf("%q is no origin", "http://[fe80::1%en0]:8080")
	}
	if _, _, ok := lookupKey("http://user@api.test/x"); !ok {
		t.Fatal("a URL with userinfo is no origin")
	}
	for _, k := range []string{"http://[fe80::1%en0]:8080/x", "http://user@[fe80::1%en0]:8080/x", "http://user:pw@[fe80::1%en0]:8080"} {
		got, raw, ok := lookupKey(k)
		if !ok || got != want {
			t.Errorf("lookupKey(%q) = %q (origin %v, raw %q), want the origin %q", k, got, ok, raw, want)
		}
	}
	if _, _, ok := lookupKey("https://api.example/files/[50%]"); ok {
		t.Error("a bracketed % in a path named an origin")
	}
}
