package polite

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// A request is in flight until its response body ends, not only until its
// headers arrive: a server that streams an answer (server-sent events, a
// download) is still serving it, and counts it against its concurrency and
// its quotas. The body handed to the caller is wrapped so that the request
// ends when the body is read to its end or fails, when it is closed, when
// the request's context ends, or when its lease expires, whichever comes
// first (see stream.go).

// bodyEnd says how a response body ended.
type bodyEnd uint8

const (
	bodyEOF     bodyEnd = iota + 1 // read to its end
	bodyError                      // a read failed
	bodyClosed                     // closed by the caller before its end
	bodyContext                    // the request's context ended first
	bodyExpired                    // the request's lease expired first
)

// smallBody is the largest Content-Length taken as arriving with the
// headers: http.Transport reads 4 KiB ahead by default, so such a body is
// almost always buffered already, and the server done with it.
const smallBody = 4 << 10

// endsWithHeaders reports whether resp is complete when its headers arrive,
// so that its request ends at once: no body, an empty or small one, a
// response to HEAD, a 1xx (a 101 hands over the connection), 204 or 304,
// or a 2xx to CONNECT, which hands over the connection as a 101 does
// (RFC 9110 §9.3.6: a tunnel, no content).
func endsWithHeaders(req *http.Request, resp *http.Response) bool {
	// The cheapest tests first: comparing with http.NoBody costs a call.
	switch {
	case resp.ContentLength >= 0 && resp.ContentLength <= smallBody,
		resp.Body == nil,
		req.Method == http.MethodHead,
		resp.StatusCode < 200,
		resp.StatusCode == http.StatusNoContent,
		resp.StatusCode == http.StatusNotModified,
		resp.StatusCode < 300 && req.Method == http.MethodConnect:
		return true
	}
	return resp.Body == http.NoBody
}

// contentBytes returns the content bytes of resp, the answer to req, as a
// server counts them for a content-bytes quota: none for an answer that
// has no content, whatever its Content-Length says (the length a GET
// would have had, for a HEAD: RFC 9110 §8.6, and net/http reports it as
// ContentLength; a 2xx to CONNECT, a tunnel, whose Content-Length a client
// ignores: §9.3.6), else its ContentLength, -1 when unknown.
func contentBytes(req *http.Request, resp *http.Response) int64 {
	switch {
	case resp.ContentLength == 0,
		req.Method == http.MethodHead,
		resp.StatusCode < 200,
		resp.StatusCode == http.StatusNoContent,
		resp.StatusCode == http.StatusNotModified,
		resp.StatusCode < 300 && req.Method == http.MethodConnect:
		return 0
	}
	return resp.ContentLength
}

// bodyEnder is told once how a tracked body ended.
type bodyEnder interface {
	bodyEnded(how bodyEnd)
}

// trackedBody tells its ender once, when the body it wraps ends. Read,
// WriteTo and Close may come from the caller's goroutine; the end of the
// context and the expiry from goroutines of their own.
type trackedBody struct {
	rc    io.ReadCloser
	end   bodyEnder
	ended atomic.Bool
	read  atomic.Bool // Read or WriteTo was called

	mu     sync.Mutex
	stop   func() bool // stops the context's AfterFunc; nil when none
	expiry *time.Timer // nil when none

	// dst is the writer WriteTo writes to, while it runs, and dstFailed
	// reports that a write to it failed (see sink).
	dst       io.Writer
	dstFailed bool
}

// trackBody returns rc wrapped so that end is told exactly once, when rc
// is read to its end or a read fails, when it is closed, or when ctx ends,
// whichever comes first.
func trackBody(ctx context.Context, rc io.ReadCloser, end bodyEnder) io.ReadCloser {
	return new(trackedBody).track(ctx, rc, end, 0)
}

// track makes b wrap rc, tell end, and, if expire is positive, end with
// bodyExpired after expire. It returns b, with the io.WriterTo of rc if it
// has one, so that io.Copy from it is as fast as from the bare body. No
// goroutine starts unless ctx ends or expire passes first
// (context.AfterFunc, time.AfterFunc).
func (b *trackedBody) track(ctx context.Context, rc io.ReadCloser, end bodyEnder, expire time.Duration) io.ReadCloser {
	b.rc, b.end = rc, end
	b.mu.Lock() // finish may run as soon as the AfterFuncs are set
	if expire > 0 {
		b.expiry = time.AfterFunc(expire, b.expired)
	}
	if ctx.Done() != nil {
		b.stop = context.AfterFunc(ctx, b.cancelled)
	}
	b.mu.Unlock()
	if _, ok := rc.(io.WriterTo); ok {
		return &trackedWriterTo{b}
	}
	return b
}

func (b *trackedBody) cancelled() { b.finish(bodyContext) }
func (b *trackedBody) expired()   { b.finish(bodyExpired) }

// finish tells the ender how the body ended, the first time only.
func (b *trackedBody) finish(how bodyEnd) {
	if !b.ended.CompareAndSwap(false, true) {
		return
	}
	b.mu.Lock()
	stop, expiry := b.stop, b.expiry
	b.mu.Unlock()
	if how != bodyContext && stop != nil {
		stop()
	}
	if how != bodyExpired && expiry != nil {
		expiry.Stop()
	}
	b.end.bodyEnded(how)
}

// Read reads from the wrapped body; reading after Close returns what the
// wrapped body returns then.
func (b *trackedBody) Read(p []byte) (int, error) {
	if !b.read.Load() {
		b.read.Store(true)
	}
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish(ended(err))
	}
	return n, err
}

// Close closes the wrapped body; it may be called more than once. The
// body ends even when the wrapped Close panics: a streamed answer kept its
// budget's lease and its MaxConcurrency slot until the lease expired, 10
// minutes by default.
func (b *trackedBody) Close() error {
	defer b.finish(bodyClosed)
	return b.rc.Close()
}

// ended tells the end of a body from the error of its last read.
func ended(err error) bodyEnd {
	if err == io.EOF {
		return bodyEOF
	}
	return bodyError
}

// trackedWriterTo keeps the io.WriterTo of the body it wraps, so that
// io.Copy from it is as fast as from the bare body.
type trackedWriterTo struct{ *trackedBody }

// WriteTo writes the wrapped body to w through its own WriteTo. The body
// ends when that returns, but for a write that failed: the writer's
// failure (a proxy's client gone, a disk full) is not the body's, which
// may still be read, and stays in flight until it ends otherwise (ended
// then, a second request went beside it past MaxConcurrency).
func (b *trackedWriterTo) WriteTo(w io.Writer) (int64, error) {
	if !b.read.Load() {
		b.read.Store(true)
	}
	b.dst, b.dstFailed = w, false
	n, err := b.rc.(io.WriterTo).WriteTo((*sink)(b.trackedBody))
	b.dst = nil
	switch {
	case err == nil:
		b.finish(bodyEOF)
	case !b.dstFailed:
		b.finish(bodyError)
	}
	return n, err
}

// sink is a trackedBody as the writer its WriteTo writes through: it
// writes to dst, and records whether the last write failed (a WriteTo
// that writes again after a short write, then fails reading, failed on
// the body).
type sink trackedBody

func (s *sink) Write(p []byte) (int, error) {
	n, err := s.dst.Write(p)
	s.dstFailed = err != nil || n < len(p)
	return n, err
}
