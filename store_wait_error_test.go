package polite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// wrappingStore is a bytesStore whose Wait, once its context ends, returns
// an error that names the key and wraps ctx.Err(), as a driver's might,
// rather than ctx.Err() itself as Store asks.
type wrappingStore struct{ *bytesStore }

func (s wrappingStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	if err := s.bytesStore.Wait(ctx, key, gen, until); err != nil {
		return fmt.Errorf("wait on %s: %w", key, err)
	}
	return nil
}

// A Store's Wait error, returned as it was once the request's context
// ended, reached the caller with the custom key in its text.
func TestStoreWaitErrorAfterContextHidesKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const secret = "key-of-sk-SECRET"
		release := make(chan struct{})
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-release // the probe awaits its answer: the next request waits
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		})
		tr := &polite.Transport{
			Base:   base,
			Key:    func(*http.Request) string { return secret },
			Budget: &polite.Budget{Store: wrappingStore{newBytesStore()}},
		}
		go func() {
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			t.Fatal("sent while the probe awaited its answer")
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("error %q shows the key", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want context.DeadlineExceeded", err)
		}
		close(release)
	})
}
