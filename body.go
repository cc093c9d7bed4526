package polite

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
)

// A request is in flight until its response body ends, not only until its
// headers arrive: a server that streams an answer (server-sent events, a
// download) is still serving it, and counts it against its concurrency and
// its quotas. The body handed to the caller is wrapped so that the request
// ends when the body is read to its end or fails, when it is closed, or when
// the request's context ends, whichever comes first. A caller that never
// closes a body and whose context never ends is covered by the lease of the
// request in the budget (see [Budget.Lease]).

// bodyEnd says how a response body ended.
type bodyEnd uint8

const (
	bodyEOF     bodyEnd = iota + 1 // read to its end
	bodyError                      // a read failed
	bodyClosed                     // closed by the caller before its end
	bodyContext                    // the request's context ended first
)

// smallBody is the largest Content-Length taken as arriving with the
// headers: http.Transport reads 4 KiB ahead by default, so such a body is
// almost always buffered already, and the server done with it.
const smallBody = 4 << 10

// endsWithHeaders reports whether resp is complete when its headers arrive,
// so that its request ends at once: no body, an empty or small one, a
// response to HEAD, a 1xx (a 101 hands over the connection), 204 or 304.
func endsWithHeaders(req *http.Request, resp *http.Response) bool {
	switch {
	case resp.Body == nil || resp.Body == http.NoBody,
		req.Method == http.MethodHead,
		resp.StatusCode < 200,
		resp.StatusCode == http.StatusNoContent,
		resp.StatusCode == http.StatusNotModified:
		return true
	}
	return resp.ContentLength >= 0 && resp.ContentLength <= smallBody
}

// trackedBody calls end once, when the body it wraps ends.
type trackedBody struct {
	rc    io.ReadCloser
	ended atomic.Bool
	end   func(bodyEnd)
	stop  func() bool // stops the context's AfterFunc; nil when none
}

// trackBody returns rc wrapped so that end is called exactly once, when rc
// is read to its end or a read fails, when it is closed, or when ctx ends,
// whichever comes first. The wrapper keeps rc's io.WriterTo, and never
// starts a goroutine unless ctx ends first (context.AfterFunc).
func trackBody(ctx context.Context, rc io.ReadCloser, end func(bodyEnd)) io.ReadCloser {
	b := &trackedBody{rc: rc, end: end}
	if ctx.Done() != nil {
		b.stop = context.AfterFunc(ctx, func() { b.finish(bodyContext) })
	}
	if _, ok := rc.(io.WriterTo); ok {
		return &trackedWriterTo{b}
	}
	return b
}

func (b *trackedBody) finish(how bodyEnd) {
	if !b.ended.CompareAndSwap(false, true) {
		return
	}
	if how != bodyContext && b.stop != nil {
		b.stop()
	}
	b.end(how)
}

// Read reads from the wrapped body; reading after Close returns what the
// wrapped body returns then.
func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish(ended(err))
	}
	return n, err
}

// Close closes the wrapped body; it may be called more than once.
func (b *trackedBody) Close() error {
	err := b.rc.Close()
	b.finish(bodyClosed)
	return err
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

func (b *trackedWriterTo) WriteTo(w io.Writer) (int64, error) {
	n, err := b.rc.(io.WriterTo).WriteTo(w)
	if err != nil {
		b.finish(bodyError)
	} else {
		b.finish(bodyEOF)
	}
	return n, err
}
