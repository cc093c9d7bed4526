package polite_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// slowReleaseStore is a MemoryStore behind a Store whose next Update, once
// armed, takes 1.1s (a remote store under load; releaseTimeout is 10s).
type slowReleaseStore struct {
	*polite.MemoryStore
	armed atomic.Bool
}

func (s *slowReleaseStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.armed.CompareAndSwap(true, false) {
		time.Sleep(1100 * time.Millisecond)
	}
	return s.MemoryStore.Update(ctx, key, fn)
}

// drainBody is a refused body that arrived in full with its headers.
type drainBody struct {
	r      *strings.Reader
	eof    atomic.Bool
	closed atomic.Bool
}

func (b *drainBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, io.ErrClosedPipe
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}
func (b *drainBody) Close() error { b.closed.Store(true); return nil }

// drainTime "bounds the time spent reading a refused response's body":
// "a refusal's body normally arrives with its headers, and one that
// trickles in ... is cut" (transport.go). With one deadline set before
// the problem document was read, the time spent after it not reading (the
// Store's release, OnEvent, Logger) counted too: a body that had arrived
// in full was closed unread, losing the connection. Only reading counts.
func TestRefusalBodyDrainedAfterSlowRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &slowReleaseStore{MemoryStore: &polite.MemoryStore{}}
		doc := `{"type":"about:blank","title":"Too Many Requests","detail":"` + strings.Repeat("x", 8<<10) + `"}`
		body := &drainBody{r: strings.NewReader(doc)}
		var sends atomic.Int32
		tr := &polite.Transport{Budget: &polite.Budget{Store: st}, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if sends.Add(1) == 1 {
				st.armed.Store(true) // the refusal's release is slow
				h := http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}
				return &http.Response{StatusCode: http.StatusTooManyRequests, ContentLength: -1, Header: h, Body: body, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if sends.Load() != 2 {
			t.Fatalf("sends = %d, want 2 (a retry)", sends.Load())
		}
		if !body.eof.Load() {
			t.Errorf("refused body of %d bytes, all arrived with its headers, closed before it was read to EOF (read %d): the connection is lost", len(doc), len(doc)-body.r.Len())
		}
	})
}
