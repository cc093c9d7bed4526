package polite_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// The key a Budget keeps for an origin was cut from the request's URL
// (url.Parse slices Host and Scheme out of the raw URL, and origin.Normal
// returns it without allocating), so every kept key kept the whole URL it
// first came with: a path or query of a megabyte, from a link or a
// redirect's Location a server chose, for as long as the origin's state,
// up to MaxKeys of them (272,238 bytes an origin for URLs of 256 KiB).
// The local ceilings' entries, and a Store's local entries, did the same,
// and so did the Transport's memo of an origin, which the origin's entry
// keeps.
func TestKeyKeepsNoURL(t *testing.T) {
	for _, tt := range []struct {
		name string
		tr   func() *polite.Transport
	}{
		{"memory store", func() *polite.Transport { return &polite.Transport{Base: roundTripFunc(draft11)} }},
		{"local ceilings", func() *polite.Transport {
			return &polite.Transport{Base: roundTripFunc(draft11), MaxConcurrency: 4, MaxRate: 1000}
		}},
		{"store", func() *polite.Transport {
			return &polite.Transport{Base: roundTripFunc(draft11), Budget: &polite.Budget{Store: newBytesStore()}}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const origins = 200
			pathLen := 256 << 10
			if raceEnabled {
				// Four times past the bound yet: the race detector makes
				// each byte of a URL costly to build and parse.
				pathLen = 32 << 10
			}
			tr := tt.tr()
			visit(t, tr, 0, 1)
			pad := strings.Repeat("a", pathLen)
			before := heap()
			for i := 1; i <= origins; i++ {
				// Three times: the second miss in a row makes the
				// Transport a memo of the origin, which its entry keeps.
				for range 3 {
					// A fresh string per URL, as a crawler reads links
					// from bodies.
					u := fmt.Sprintf("http://o%d.test/%s", i, pad)
					req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
					if err != nil {
						t.Fatal(err)
					}
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
			}
			pad = ""
			after := heap()
			runtime.KeepAlive(tr)
			per := float64(int64(after)-int64(before)) / origins
			t.Logf("bytes kept per origin: %.0f (URL of %d bytes)", per, pathLen)
			if per > 8192 {
				t.Errorf("bytes kept per idle origin = %.0f, want at most 8192: the key keeps the request's URL", per)
			}
		})
	}
}
