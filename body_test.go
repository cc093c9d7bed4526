package polite

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// ends records how often, and how, a tracked body ended.
type ends struct {
	mu  sync.Mutex
	got []bodyEnd
}

func (e *ends) bodyEnded(how bodyEnd) {
	e.mu.Lock()
	e.got = append(e.got, how)
	e.mu.Unlock()
}

func (e *ends) list() []bodyEnd {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]bodyEnd(nil), e.got...)
}

// plainBody hides the io.WriterTo of its reader.
type plainBody struct{ r io.Reader }

func (b *plainBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *plainBody) Close() error               { return nil }

// failingBody fails its second read.
type failingBody struct{ n int }

var errBroken = errors.New("broken stream")

func (b *failingBody) Read(p []byte) (int, error) {
	if b.n++; b.n > 1 {
		return 0, errBroken
	}
	return copy(p, "data: x\n\n"), nil
}
func (b *failingBody) Close() error { return nil }

func TestTrackBodyEnds(t *testing.T) {
	tests := []struct {
		name string
		body func() io.ReadCloser
		use  func(io.ReadCloser)
		want []bodyEnd
	}{
		{"read to EOF", func() io.ReadCloser { return &plainBody{strings.NewReader("abc")} },
			func(rc io.ReadCloser) { io.ReadAll(rc) }, []bodyEnd{bodyEOF}},
		{"read to EOF then closed", func() io.ReadCloser { return &plainBody{strings.NewReader("abc")} },
			func(rc io.ReadCloser) { io.ReadAll(rc); rc.Close() }, []bodyEnd{bodyEOF}},
		{"closed early", func() io.ReadCloser { return &plainBody{strings.NewReader("abc")} },
			func(rc io.ReadCloser) { rc.Read(make([]byte, 1)); rc.Close() }, []bodyEnd{bodyClosed}},
		{"closed twice", func() io.ReadCloser { return &plainBody{strings.NewReader("abc")} },
			func(rc io.ReadCloser) { rc.Close(); rc.Close() }, []bodyEnd{bodyClosed}},
		{"read after close", func() io.ReadCloser { return &plainBody{strings.NewReader("abc")} },
			func(rc io.ReadCloser) { rc.Close(); rc.Read(make([]byte, 8)) }, []bodyEnd{bodyClosed}},
		{"stream fails", func() io.ReadCloser { return &failingBody{} },
			func(rc io.ReadCloser) { io.ReadAll(rc); rc.Close() }, []bodyEnd{bodyError}},
		{"WriteTo to the end", func() io.ReadCloser { return io.NopCloser(strings.NewReader("abc")) },
			func(rc io.ReadCloser) { io.Copy(io.Discard, rc) }, []bodyEnd{bodyEOF}},
		{"untouched", func() io.ReadCloser { return &plainBody{strings.NewReader("abc")} },
			func(io.ReadCloser) {}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e ends
			rc := trackBody(context.Background(), tt.body(), &e)
			tt.use(rc)
			if got := e.list(); !equalEnds(got, tt.want) {
				t.Errorf("ends = %v, want %v", got, tt.want)
			}
		})
	}
}

func equalEnds(a, b []bodyEnd) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTrackBodyKeepsWriterTo(t *testing.T) {
	var e ends
	rc := trackBody(context.Background(), io.NopCloser(strings.NewReader("abc")), &e)
	if _, ok := rc.(io.WriterTo); !ok {
		t.Errorf("%T lost io.WriterTo", rc)
	}
	rc = trackBody(context.Background(), &plainBody{strings.NewReader("abc")}, &e)
	if _, ok := rc.(io.WriterTo); ok {
		t.Errorf("%T has io.WriterTo its body lacked", rc)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, rc); err != nil || buf.String() != "abc" {
		t.Errorf("copy = %q, %v", buf.String(), err)
	}
}

// A body the caller drops without closing ends when the request's context
// ends, and only once.
func TestTrackBodyContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var e ends
		rc := trackBody(ctx, &plainBody{strings.NewReader("abc")}, &e)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if got := e.list(); len(got) != 0 {
			t.Fatalf("ended before the deadline: %v", got)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		rc.Close()
		if got := e.list(); !equalEnds(got, []bodyEnd{bodyContext}) {
			t.Errorf("ends = %v, want [context]", got)
		}
	})
}

// A body read to its end stops watching the context: cancelling it later
// reports nothing more.
func TestTrackBodyStopsWatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var e ends
		rc := trackBody(ctx, &plainBody{strings.NewReader("abc")}, &e)
		io.ReadAll(rc)
		cancel()
		synctest.Wait()
		if got := e.list(); !equalEnds(got, []bodyEnd{bodyEOF}) {
			t.Errorf("ends = %v, want [eof]", got)
		}
	})
}

// Close from another goroutine while a read is under way ends the body once.
func TestTrackBodyConcurrentClose(t *testing.T) {
	pr, pw := io.Pipe()
	var e ends
	rc := trackBody(context.Background(), pr, &e)
	done := make(chan struct{})
	go func() {
		rc.Read(make([]byte, 8))
		close(done)
	}()
	pw.CloseWithError(errBroken)
	rc.Close()
	<-done
	if got := e.list(); len(got) != 1 {
		t.Errorf("ends = %v, want one", got)
	}
}

func TestEndsWithHeaders(t *testing.T) {
	get, _ := http.NewRequest(http.MethodGet, "http://h.example/", nil)
	head, _ := http.NewRequest(http.MethodHead, "http://h.example/", nil)
	connect, _ := http.NewRequest(http.MethodConnect, "http://h.example/", nil)
	body := io.NopCloser(strings.NewReader("x"))
	tests := []struct {
		req    *http.Request
		status int
		body   io.ReadCloser
		length int64
		want   bool
	}{
		{get, 200, http.NoBody, 0, true},
		{get, 200, nil, 0, true},
		{head, 200, body, 100000, true},
		{get, 204, body, -1, true},
		{get, 304, body, -1, true},
		{get, 101, body, -1, true},
		{get, 200, body, 100, true},
		{get, 200, body, smallBody, true},
		{get, 200, body, smallBody + 1, false},
		{get, 200, body, -1, false}, // chunked: a stream
		{get, 429, body, -1, false},
		{connect, 200, body, -1, true}, // a tunnel
		{connect, 200, body, 100000, true},
		{connect, 407, body, -1, false},
	}
	for _, tt := range tests {
		resp := &http.Response{StatusCode: tt.status, Body: tt.body, ContentLength: tt.length}
		if got := endsWithHeaders(tt.req, resp); got != tt.want {
			t.Errorf("%s %d length %d: endsWithHeaders = %v, want %v", tt.req.Method, tt.status, tt.length, got, tt.want)
		}
	}
}

// An answer with no content counts no content bytes, whatever its
// Content-Length says: a HEAD's, a 1xx, 204 or 304, and a 2xx to CONNECT,
// a tunnel (RFC 9110 §9.3.6).
func TestContentBytesOfNoContent(t *testing.T) {
	tests := []struct {
		method string
		status int
		want   int64
	}{
		{http.MethodGet, 200, 500},
		{http.MethodHead, 200, 0},
		{http.MethodGet, 204, 0},
		{http.MethodGet, 304, 0},
		{http.MethodConnect, 200, 0},
		{http.MethodConnect, 407, 500},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, "http://h.example/", nil)
		resp := &http.Response{StatusCode: tt.status, Body: http.NoBody, ContentLength: 500}
		if got := contentBytes(req, resp); got != tt.want {
			t.Errorf("%s %d: contentBytes = %d, want %d", tt.method, tt.status, got, tt.want)
		}
	}
}
