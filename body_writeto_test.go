package polite

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// writerToBody is a streamed body that, like a bytes.Reader wrapped in
// io.NopCloser, implements io.WriterTo: its WriteTo stops at the first
// write error and leaves the unwritten bytes to be read.
type writerToBody struct{ r *bytes.Reader }

func (b *writerToBody) Read(p []byte) (int, error)         { return b.r.Read(p) }
func (b *writerToBody) WriteTo(w io.Writer) (int64, error) { return b.r.WriteTo(w) }
func (b *writerToBody) Close() error                       { return nil }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("client went away") }

// io.Copy from a streamed body failed on the writer (a proxy's client went
// away, a disk full): the body had not ended, and every byte of it could
// still be read. Through the Base body's WriteTo, the request ended at
// the writer's error, and Budget.MaxConcurrency 1 let a second request go
// while the first body still streamed; through Read, the same error kept
// the slot.
func TestWriteToWriterErrorKeepsSlot(t *testing.T) {
	for _, writerTo := range []bool{false, true} {
		name := "Read path"
		if writerTo {
			name = "WriteTo path"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var sent []time.Time
				base := roundTripper(func(r *http.Request) (*http.Response, error) {
					mu.Lock()
					sent = append(sent, time.Now())
					mu.Unlock()
					var body io.ReadCloser = &writerToBody{r: bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20))}
					if !writerTo {
						body = &plainBody{bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20))}
					}
					return &http.Response{StatusCode: 200, ContentLength: -1, Header: http.Header{}, Body: body, Request: r}, nil
				})
				tr := &Transport{Base: base, Budget: &Budget{MaxConcurrency: 1}, MaxWait: time.Hour}
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(failingWriter{}, resp.Body); err == nil {
					t.Fatal("io.Copy to a failing writer succeeded")
				}
				if st, _ := tr.Budget.Inspect("http://api.test/", time.Now()); st.InFlight != 1 {
					t.Errorf("after a write error, body unread and open: InFlight = %d, want 1", st.InFlight)
				}
				// A second request to the key: it must wait for the first
				// body, which is closed 10s later.
				var wg sync.WaitGroup
				wg.Go(func() {
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				})
				time.Sleep(10 * time.Second)
				rest, err := io.ReadAll(resp.Body) // the body still streams
				resp.Body.Close()
				wg.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(sent) != 2 {
					t.Fatalf("%d requests sent, want 2", len(sent))
				}
				if d := sent[1].Sub(sent[0]); d < 10*time.Second {
					t.Errorf("second request sent %v after the first, while the first body was still open and "+
						"streaming (%d bytes left to read, err %v); Budget.MaxConcurrency 1: want it sent once that body was closed, 10s later",
						d, len(rest), err)
				}
			})
		})
	}
}

// retryingBody's WriteTo writes each chunk fully, writing again after a
// short write (as loops over Write do), and then fails on its own read: a
// connection reset, the body's failure.
type retryingBody struct{ chunks int }

func (b *retryingBody) Read(p []byte) (int, error) { return 0, errors.New("connection reset") }
func (b *retryingBody) Close() error               { return nil }
func (b *retryingBody) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for range b.chunks {
		p := []byte(strings.Repeat("y", 1024))
		for len(p) > 0 {
			n, err := w.Write(p)
			total += int64(n)
			if err != nil {
				return total, err
			}
			p = p[n:]
		}
	}
	return total, errors.New("connection reset")
}

// shortWriter writes at most half of what it is given the first time,
// with no error; all of it afterwards.
type shortWriter struct{ calls int }

func (w *shortWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.calls == 1 {
		return len(p) / 2, nil
	}
	return len(p), nil
}

// A WriteTo that wrote a short write's rest again, then failed reading:
// the body's failure ends the request, though a write was short before.
// (Kept as failed once a write was short, the request stayed in flight
// until its lease ended.)
func TestWriteToBodyErrorAfterShortWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &retryingBody{chunks: 4}, ContentLength: -1, Request: r}, nil
		})
		tr := &Transport{Base: base, Budget: &Budget{MaxConcurrency: 1, Lease: time.Minute}}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resp.Body.(io.WriterTo).WriteTo(&shortWriter{}); err == nil || err.Error() != "connection reset" {
			t.Fatalf("WriteTo: %v", err)
		}
		start := time.Now()
		req2, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test/", nil)
		resp2, err := tr.RoundTrip(req2)
		if err != nil {
			t.Fatal(err)
		}
		resp2.Body.Close()
		if d := time.Since(start); d > 0 {
			t.Errorf("WriteTo failed on the body's own read error (the writer's one short write was written again): the request stayed in flight; the next waited %v, want none", d)
		}
		resp.Body.Close()
	})
}
