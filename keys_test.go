package polite

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestOriginKey(t *testing.T) {
	tests := []struct {
		scheme, host string
		want         string
	}{
		{"http", "api.example", "http://api.example"},
		{"http", "API.Example", "http://api.example"},
		{"HTTP", "api.example", "http://api.example"},
		{"http", "api.example:80", "http://api.example"},
		{"http", "api.example.", "http://api.example"},
		{"http", "api.example.:80", "http://api.example"},
		{"http", "api.example\u3002", "http://api.example"},
		{"http", "API.EXAMPLE..", "http://api.example"}, // every trailing dot off, whatever the case: a key normalised again is the same
		{"http", "api.example..", "http://api.example"},
		{"http", "api.example\uff0e:80", "http://api.example"},
		{"http", "api.example:", "http://api.example"},
		{"https", "api.example:443", "https://api.example"},
		{"https", "api.example:80", "https://api.example:80"},
		{"http", "api.example:443", "http://api.example:443"},
		{"http", "api.example:8080", "http://api.example:8080"},
		{"http", "API.example.:8080", "http://api.example:8080"},
		{"http", "[::1]:80", "http://[::1]"},
		{"http", "[::1]:8080", "http://[::1]:8080"},
		{"http", "[FE80::1]", "http://[fe80::1]"},
		{"http", "127.0.0.1:80", "http://127.0.0.1"},
		{"https", "bücher.example", "https://xn--bcher-kva.example"},
		{"https", "BÜCHER.example:443", "https://xn--bcher-kva.example"},
		{"https", "xn--bcher-kva.example", "https://xn--bcher-kva.example"},
		{"https", "XN--BCHER-KVA.example", "https://xn--bcher-kva.example"},
		{"https", "例え.テスト", "https://xn--r8jz45g.xn--zckzah"},
		{"https", "例え。テスト", "https://xn--r8jz45g.xn--zckzah"},
		{"https", "İbm.example", "https://xn--ibm-8dc.example"}, // not ibm.example
		{"http", "\u212aey.example", "http://key.example"},      // the Kelvin sign is K
		{"http", "", "http://"},
		// A port with leading zeros is the port net/http dials: one
		// origin, one budget.
		{"https", "api.example:0443", "https://api.example"},
		{"http", "api.example:080", "http://api.example"},
		{"http", "api.example:08080", "http://api.example:8080"},
		{"http", "api.example:00", "http://api.example:0"},
	}
	for _, tt := range tests {
		if got := originKey(tt.scheme, tt.host).m.String(); got != tt.want {
			t.Errorf("originKey(%q, %q) = %q, want %q", tt.scheme, tt.host, got, tt.want)
		}
	}
}

// A host beyond ASCII is keyed as the host net/http dials for it. Before,
// "İbm.example" was keyed as "ibm.example", another host, and a refusal
// from one paused the other.
func TestOriginKeyAsDialed(t *testing.T) {
	for _, host := range []string{"İbm.example", "\u212aey.example", "BÜCHER.example", "例え。テスト", "ıbm.example"} {
		var dialed string
		tr := &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
			dialed = addr
			return nil, errors.New("no network here")
		}}
		req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/", nil)
		tr.RoundTrip(req)
		want := "http://" + strings.TrimSuffix(dialed, ":80")
		if got := originKey("http", host).m.String(); got != want {
			t.Errorf("originKey(http, %q) = %q; net/http dials %q", host, got, dialed)
		}
	}
}

func TestOriginKeyAllocations(t *testing.T) {
	for _, host := range []string{"api.example", "api.example:80", "api.example.", "api.example:8080"} {
		if n := testing.AllocsPerRun(100, func() { originKey("http", host) }); n != 0 {
			t.Errorf("originKey(http, %q) allocates %v times, want 0 for a host already normal", host, n)
		}
	}
}

func TestLookupKey(t *testing.T) {
	tests := []struct {
		key      string
		want     string
		isOrigin bool
	}{
		{"http://API.example:80/items?id=1", "http://api.example", true},
		{"https://api.example", "https://api.example", true},
		{"acct-1", "acct-1", false},
		{"api.example:8080", "api.example:8080", false},
		{"", "", false},
	}
	for _, tt := range tests {
		origin, raw, isOrigin := lookupKey(tt.key)
		got := raw.String()
		if isOrigin {
			got = origin.String()
		}
		if got != tt.want || isOrigin != tt.isOrigin {
			t.Errorf("lookupKey(%q) = %q (origin %v), want %q (origin %v)", tt.key, got, isOrigin, tt.want, tt.isOrigin)
		}
	}
}

func TestFingerprint(t *testing.T) {
	a, b := fingerprint([]byte("s1"), "Bearer sk-live-1"), fingerprint([]byte("s2"), "Bearer sk-live-1")
	if a != fingerprint([]byte("s1"), "Bearer sk-live-1") || a == b || len(a) != len("key-")+8 {
		t.Errorf("fingerprints %q and %q: want stable under one secret, different under another, key- and 8 hex digits", a, b)
	}
}
