package polite_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/politehttp/polite"
)

// A *RobotsError's Rule was a substring of all the rules its origin's
// robots.txt left in the cache (decide: shorten(rule.pattern, ...) returns
// the pattern itself when short). So an error the caller kept, as a
// crawler that records why each URL was skipped does, held every rule of
// that robots.txt (here about 431 KB each; up to 1.5 MiB) long after
// MaxOrigins made the cache forget the origin: the bound the Robots doc
// gives ("about 5 KiB an origin counted ... whatever the servers send") no
// longer held. The Agent beside it was cloned; the Rule is now too.
func TestRobotsErrorRuleHoldsNoRules(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /private\n")
	for i := 0; b.Len() < 500<<10; i++ {
		fmt.Fprintf(&b, "Disallow: /%d%s\n", i, strings.Repeat("x", 60))
	}
	body := b.String()
	tr := &polite.Transport{
		Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
		}),
		// Room for about one such origin at a time.
		Robots: &polite.Robots{UserAgent: "mybot", MaxOrigins: 200},
	}
	check := func(i int) error {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://o%d.example/private", i), nil)
		_, err := tr.RoundTrip(req)
		var re *polite.RobotsError
		if !errors.As(err, &re) || re.Rule != "/private" {
			t.Fatalf("origin %d: %v, want a refusal by /private", i, err)
		}
		return err
	}
	check(-1)
	const origins = 40
	kept := make([]error, 0, origins)
	before := heap()
	for i := range origins {
		kept = append(kept, check(i))
	}
	after := heap()
	runtime.KeepAlive(tr)
	runtime.KeepAlive(kept)
	per := (int64(after) - int64(before)) / origins
	if per > 8<<10 {
		t.Errorf("each *RobotsError kept holds %d bytes (robots.txt of %d bytes), want a few hundred: its Rule pins its origin's rules after the cache dropped them", per, len(body))
	}
}
