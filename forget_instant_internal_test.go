package polite

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A key forgotten and used again at the same instant (a frozen clock, as
// in a synctest bubble, or a coarse one), a stream granted before Forget
// still in flight. A state was known by the instant of its first use
// alone, so the old stream's end freed the slot of the new state's
// stream, and a third request went with that one still in flight, over
// Budget.MaxConcurrency 1; then Forget dropped the old stream's lease,
// and the next request went beside it. The old stream counts until it
// ends, and its end frees its own slot alone.
func TestForgetAtSameInstantKeepsOldEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{MaxConcurrency: 1}
		tr := &Transport{Budget: b, Base: roundTripper(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), ContentLength: -1, Request: r}, nil
		})}
		get := func(ctx context.Context) (*http.Response, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/", nil)
			return tr.RoundTrip(req)
		}
		old, err := get(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		b.Forget("http://a.test")
		var cur *http.Response
		done := make(chan error)
		go func() {
			var err error
			cur, err = get(t.Context())
			done <- err
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("a request went beside the forgotten state's stream: over MaxConcurrency 1")
		default:
		}
		old.Body.Close() // the forgotten state's stream ends
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		defer cur.Body.Close()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if third, err := get(ctx); err == nil {
			third.Body.Close()
			t.Errorf("a third request went while the second stream was in flight: over MaxConcurrency 1")
		}
	})
}
