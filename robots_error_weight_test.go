package polite

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// MaxOrigins bounds the robots.txt cache to about 5 KiB an origin counted,
// whatever the servers send. An unreachable origin's entry keeps its
// fetch's error, up to maxRobotsErr whole (net/http quotes a status line
// it cannot read in its error), yet counted one whatever its length: a
// server answering robots.txt with a status line of 8 KB made every origin
// counted hold more than 8 KiB.
func TestRobotsKeptErrorCounted(t *testing.T) {
	const maxOrigins = 100
	msg := strings.Repeat("9", maxRobotsErr-200)
	base := robotsRT(func(*http.Request) (*http.Response, error) { return nil, errors.New(msg) })
	r := &Robots{UserAgent: "mybot", MaxOrigins: maxOrigins}
	for i := range 3 * maxOrigins {
		_, err := r.check(t.Context(), base, robotsReq(t, t.Context(), fmt.Sprintf("http://o%d.example/page", i)))
		var re *RobotsError
		if !errors.As(err, &re) || !re.Unreachable || len(re.Err.Error()) < len(msg) {
			t.Fatalf("origin %d: %v, want unreachable with the whole error", i, err)
		}
	}
	c := r.robotsCache()
	kept, entries := 0, 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for _, e := range sh.m {
			entries++
			kept += len(e.key)
			if e.err != nil {
				kept += len(e.err.Error())
			}
		}
		sh.mu.Unlock()
	}
	if per := kept / maxOrigins; per > 5<<10 {
		t.Errorf("%d entries keep %d bytes of errors and keys: %d an origin counted, want at most 5 KiB", entries, kept, per)
	}
	if n := c.count.Load(); n > maxOrigins {
		t.Errorf("count %d, over MaxOrigins %d", n, maxOrigins)
	}
}
