package polite_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// slowDoc is a refusal body whose first len(head) bytes arrive together
// after delay, the rest one byte every 100ms, forever; Close interrupts a
// read at once, as net/http's bodies do.
type slowDoc struct {
	head    []byte
	delay   time.Duration
	started bool
	once    sync.Once
	done    chan struct{}
	closes  atomic.Int32
	closeAt time.Time
	mu      sync.Mutex
}

func newSlowDoc(head string, delay time.Duration) *slowDoc {
	return &slowDoc{head: []byte(head), delay: delay, done: make(chan struct{})}
}

func (b *slowDoc) sleep(d time.Duration) bool {
	select {
	case <-b.done:
		return false
	case <-time.After(d):
		return true
	}
}

func (b *slowDoc) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		if !b.sleep(b.delay) {
			return 0, io.ErrClosedPipe
		}
	}
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	if !b.sleep(100 * time.Millisecond) {
		return 0, io.ErrClosedPipe
	}
	p[0] = ' '
	return 1, nil
}

func (b *slowDoc) Close() error {
	b.closes.Add(1)
	b.once.Do(func() {
		b.mu.Lock()
		b.closeAt = time.Now()
		b.mu.Unlock()
		close(b.done)
	})
	return nil
}

// A refusal's body is read before a retry for at most drainTime (one
// second) in all: "drainTime bounds the time spent reading a refused
// response's body ... one that trickles in ... is cut by closing it once
// drainTime has passed" (transport.go), "the wait before a retry runs on
// meanwhile". A problem document was read for up to a second by
// readProblem, and then the rest for up to another second by discard: the
// body was read for 1.9s, and the retry that Retry-After: 1 allowed after
// a second went after two.
func TestRefusalDrainTimeBoundedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A problem document (not of a type polite acts on), its first
		// 4 KiB, the prefix readProblem reads, arriving after 900ms.
		head := `{"type":"about:blank","title":"Too Many Requests","detail":"` + strings.Repeat("x", 4096)
		body := newSlowDoc(head, 900*time.Millisecond)
		var sends atomic.Int32
		var retried time.Time
		tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if sends.Add(1) == 1 {
				h := http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}
				return &http.Response{StatusCode: http.StatusServiceUnavailable, ContentLength: -1, Header: h, Body: body, Request: r}, nil
			}
			retried = time.Now()
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		body.mu.Lock()
		read := body.closeAt.Sub(start)
		body.mu.Unlock()
		if read > time.Second {
			t.Errorf("refusal's body read for %v before it was closed, want at most drainTime (1s)", read)
		}
		if d := retried.Sub(start); d > 1100*time.Millisecond {
			t.Errorf("retry sent %v after a refusal with Retry-After: 1, want about 1s", d)
		}
	})
}
