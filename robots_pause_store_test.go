package polite_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// stuckStore is a Store that never answers: every call blocks until
// its context ends.
type stuckStore struct{}

func (stuckStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	<-ctx.Done()
	return ctx.Err()
}

func (stuckStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	<-ctx.Done()
	return ctx.Err()
}

// Whether the origin is paused is read from what this process holds, never
// asked of the Store: a Store that stops answering does not hold the
// first request to an origin (which fetches robots.txt) past its 1 s
// deadline. (A first form asked the Store, under a detached 10 s bound.)
func TestRobotsPauseCheckNeverAsksStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			body := ""
			if r.URL.Path == "/robots.txt" {
				body = "User-agent: *\nDisallow: /private\n"
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Budget: &polite.Budget{Store: stuckStore{}}, Robots: &polite.Robots{UserAgent: "mybot"}}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/page", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("RoundTrip with a 1 s deadline and a Store that never answers returned after %v (%v); want about 1 s", took, err)
		}
	})
}
