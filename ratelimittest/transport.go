package ratelimittest

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Transport is an [http.RoundTripper] that serves requests with Handler in
// memory, without sockets, so that it works inside testing/synctest
// bubbles, where [NewServer] cannot.
//
// RoundTrip runs Handler in a goroutine of its own, on a copy of the
// request shaped like one a server receives, and returns once the response's
// header is sent, as net/http's server sends it: when Handler returns, or
// when it first flushes (through [http.ResponseController] or
// [http.Flusher]) if that is sooner.
//
// A response sent when Handler returns reads like one from the network:
// HTTP/1.1, header keys in canonical form, ContentLength and Content-Length
// as Handler set Content-Length, or else the length of the body written
// (but for 204 and 304, and an answer to HEAD with no body written, whose
// length is unknown), the whole body ready. A body shorter than the
// Content-Length Handler set ends with io.ErrUnexpectedEOF, as when a
// server closes the connection, and a Write past it fails with
// [http.ErrContentLength]. Either way a Handler
// that sets no Content-Type has one sniffed from the body written before
// the header is sent, and Write fails with [http.ErrBodyNotAllowed] where
// the status allows no body, as with net/http's server. A flushed response is streamed: unless Handler
// set Content-Length, its ContentLength is -1 and its TransferEncoding
// "chunked" (an answer to HEAD is not chunked, and one whose status allows
// no body, 204 or 304, has ContentLength 0; an answer to HEAD, a 204 and
// a 304 have http.NoBody, as net/http's client gives them, whatever
// Handler goes on doing); its body yields what Handler writes as Handler flushes it
// (or once 2 KiB wait, as in a server's response buffer), and ends when
// Handler returns. Reading it fails with the context's error once
// the request's context ends, and closing it before its end ends the
// context of the request Handler serves, as a client that closes its
// connection does; Handler's writes then fail.
//
// Either way a response whose Handler set no Date gets one, and a panic
// of Handler ends the response as net/http's server ends the connection:
// RoundTrip fails, or the streamed body ends with io.ErrUnexpectedEOF
// after what was flushed (http.ErrAbortHandler is the way to abort;
// another value is logged with the request's method and path, and its
// stack).
//
// The request Handler serves has the URL a server parses from the request
// target: the path and the query alone, no scheme, host or userinfo; its
// Host is the request's Host, or else the URL's; and a request to https has
// TLS set. It has the ContentLength, TransferEncoding and
// Content-Length field a server sees: -1 and "chunked" for a body whose
// length the caller left unknown (0), even an empty one of a GET, which
// net/http's client, probing it, sends as none; 0 for no body, with a
// Content-Length of 0 for POST, PUT and PATCH. Either way, Request is set to the caller's
// request, which is never modified, and RoundTrip closes the request body when Handler returns (at
// once if it does not call Handler). Trailers are not passed on. If the request's context is done
// before or while the header is sent, RoundTrip returns the context's error
// and no response, once Handler has returned.
//
// A Transport is safe for concurrent use if Handler is.
type Transport struct {
	// Handler serves the requests. It must not be nil.
	Handler http.Handler
}

// serverURL returns u as a server parses the request target of a request
// to u: its path and query alone.
func serverURL(u *url.URL) *url.URL {
	// The target net/http's client sends: "/" for an empty path, an
	// opaque URL's Opaque as its path.
	if su, err := url.ParseRequestURI(u.RequestURI()); err == nil {
		return su
	}
	return &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery, ForceQuery: u.ForceQuery}
}

// remoteAddr is the client address Handler sees, as in [httptest.NewRequest].
const remoteAddr = "192.0.2.1:1234"

// RoundTrip implements [http.RoundTripper].
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Handler == nil {
		closeBody(req)
		return nil, errors.New("ratelimittest: Transport.Handler is nil")
	}
	if req.URL == nil || req.Header == nil {
		closeBody(req)
		return nil, errors.New("ratelimittest: nil Request.URL or Request.Header") // as net/http's Transport refuses them
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}

	// The server's view of the request has a context of its own, which ends
	// when Handler returns or the client goes away.
	sctx, cancel := context.WithCancel(ctx)
	in := req.Clone(sctx)
	if in.Method == "" {
		in.Method = http.MethodGet // as net/http sends it
	}
	in.Header = canonical(req.Header) // as a server reads them
	// Sent from the request's fields, not its Header (Host, Trailer),
	// or moved out of it by the server (Transfer-Encoding).
	delete(in.Header, "Host")
	delete(in.Header, "Trailer")
	delete(in.Header, "Transfer-Encoding")
	in.Trailer = nil // trailers are not passed on (a chunked body's are declared below)
	in.Proto, in.ProtoMajor, in.ProtoMinor = "HTTP/1.1", 1, 1
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = remoteAddr
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	// A server's URL is its request target's: the path and the query,
	// no scheme, host or userinfo (a credential); the scheme shows as
	// TLS, the host as Host.
	in.URL = serverURL(req.URL)
	if strings.EqualFold(req.URL.Scheme, "https") {
		in.TLS = &tls.ConnectionState{Version: tls.VersionTLS13, HandshakeComplete: true, ServerName: req.URL.Hostname()}
	}
	in.GetBody = nil
	in.Body = http.NoBody
	in.ContentLength, in.TransferEncoding = serverLength(req)
	if len(in.TransferEncoding) > 0 && len(req.Trailer) > 0 {
		// A chunked body declares its trailers: a server knows their
		// names before the body is read, their values after.
		in.Trailer = make(http.Header, len(req.Trailer))
		for k := range req.Trailer {
			in.Trailer[http.CanonicalHeaderKey(k)] = nil
		}
	}
	if in.ContentLength > 0 {
		// A server reads no more than Content-Length, and a body that
		// ends short of it as a connection that broke.
		in.Body = io.NopCloser(&exactReader{r: req.Body, n: in.ContentLength}) // closed when Handler is done
	} else if in.ContentLength != 0 {
		in.Body = io.NopCloser(req.Body) // closed when Handler is done
	}
	in.Header.Del("Content-Length")
	if in.ContentLength > 0 || in.ContentLength == 0 && expectsBody(req.Method) {
		in.Header.Set("Content-Length", strconv.FormatInt(in.ContentLength, 10))
	}
	w := &responseWriter{
		ctx:    ctx,
		header: make(http.Header),
		head:   req.Method == http.MethodHead,
		sent:   make(chan struct{}),
		cancel: cancel,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.finish()
		defer cancel()
		defer closeBody(req)
		defer func() {
			// A panic ends the response, as net/http's server ends
			// the connection: the client gets an error, and the
			// process lives on (a panic in this goroutine would end
			// it). http.ErrAbortHandler is the way a Handler aborts
			// a response; another value is logged with its stack.
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler {
					// The path alone: a query may hold a secret.
					log.Printf("ratelimittest: panic serving %s %s: %v\n%s", in.Method, in.URL.Path, v, debug.Stack())
				}
				w.aborted = true
			}
		}()
		t.Handler.ServeHTTP(w, in)
	}()
	<-w.sent
	if err := ctx.Err(); err != nil {
		cancel()
		<-done
		return nil, err
	}
	if w.body == nil && w.aborted {
		// Set before sent was closed, as body is: a response whose
		// header was flushed is read from its body alone.
		<-done
		return nil, errAborted
	}

	// Trailers declared (a Trailer line, even empty, or a key of
	// http.TrailerPrefix) keep net/http's server from stating a length.
	trailers := false
	for k := range w.sentHeader {
		trailers = trailers || http.CanonicalHeaderKey(k) == "Trailer" || strings.HasPrefix(k, http.TrailerPrefix)
	}
	header := canonical(w.sentHeader)
	for k := range header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			delete(header, k) // a trailer, no header line (this Transport sends none)
		}
	}
	text := http.StatusText(w.code)
	if text == "" {
		text = "status code " + strconv.Itoa(w.code) // as net/http's server writes it
	}
	resp := &http.Response{
		Status:     fmt.Sprintf("%03d %s", w.code, text),
		StatusCode: w.code,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     header,
		Request:    req,
	}
	if w.body == nil {
		body := w.buf.Bytes()
		resp.ContentLength = int64(len(body))
		switch {
		case !bodyAllowed(w.code):
		case w.declared < 0 && trailers:
			// Trailers declared: net/http's server states no length
			// and sends the body chunked, and its client moves the
			// Trailer line out of a chunked response's header
			// (trailers are not passed on here).
			resp.ContentLength = -1
			if !w.head {
				resp.TransferEncoding = []string{"chunked"}
				delete(header, "Trailer")
			}
		case w.declared >= 0:
			// As Handler declared it: an answer to HEAD has the length
			// a GET's body would have, and a body cut short of it ends
			// with io.ErrUnexpectedEOF, as when a server closes the
			// connection.
			resp.ContentLength = w.declared
		case w.head && len(body) == 0:
			resp.ContentLength = -1 // no length known: none is sent
		default:
			header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		if w.head {
			body = nil
		}
		var r io.Reader = bytes.NewReader(body)
		if !w.head && bodyAllowed(w.code) && int64(len(body)) < resp.ContentLength {
			r = io.MultiReader(r, errReader{io.ErrUnexpectedEOF})
		}
		resp.Body = io.NopCloser(r)
		return resp, nil
	}
	resp.ContentLength = -1
	if !bodyAllowed(w.code) {
		resp.ContentLength = 0
	} else if n, err := strconv.ParseInt(header.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		resp.ContentLength = n
	} else if !w.head {
		resp.TransferEncoding = []string{"chunked"}
		delete(header, "Trailer") // as net/http's client moves it out of a chunked response's header
	}
	if w.head || !bodyAllowed(w.code) {
		// No body, as net/http's client hands back an answer to HEAD,
		// a 204 or a 304: it reads EOF at once, whatever Handler goes
		// on doing (its writes are dropped), not when Handler returns
		// (a caller that drained a flushed 204 before closing it waited
		// for Handler's end).
		resp.Body = http.NoBody
		return resp, nil
	}
	w.body.stop = context.AfterFunc(ctx, func() { w.body.abort(ctx.Err()) })
	resp.Body = w.body
	return resp, nil
}

// serverLength returns the ContentLength and TransferEncoding a server
// sees of req, as net/http's client sends it: a body whose length is
// unknown (ContentLength 0) is sent chunked, -1; a request with no body
// has none, 0. (net/http's client probes the body of a GET, HEAD, DELETE
// or OPTIONS for a first byte, for 200 ms, and sends an empty one as
// none; that is not done here: a read with no bound could hold RoundTrip
// past its context, and one with a timer would make a Handler see a body
// or none by the scheduler.)
func serverLength(req *http.Request) (int64, []string) {
	switch {
	case req.Body == nil || req.Body == http.NoBody:
		return 0, nil
	case req.ContentLength > 0:
		return req.ContentLength, nil
	}
	return -1, []string{"chunked"}
}

// expectsBody reports whether a request of method with no body is sent
// with Content-Length: 0, as net/http's client sends it.
func expectsBody(method string) bool {
	return method == "POST" || method == "PUT" || method == "PATCH"
}

// exactReader reads n bytes of r: no more, and io.ErrUnexpectedEOF if r
// ends before.
type exactReader struct {
	r io.Reader
	n int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	k, err := e.r.Read(p)
	e.n -= int64(k)
	switch {
	case e.n <= 0:
		return k, io.EOF
	case err == io.EOF:
		return k, io.ErrUnexpectedEOF
	}
	return k, err
}

// errReader is a reader that fails with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// canonical returns a copy of h as it reads once sent: each key in
// canonical form, the lines of keys that differ only in case together in
// the order net/http writes them (by key), and no key with no line (a
// field with no line is not sent).
func canonical(h http.Header) http.Header {
	c := make(http.Header, len(h))
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if vs := h[k]; len(vs) > 0 {
			ck := http.CanonicalHeaderKey(k)
			c[ck] = append(c[ck], vs...)
		}
	}
	return c
}

// errAborted is what RoundTrip returns when Handler panicked (with
// http.ErrAbortHandler, say) before sending the header, as a client gets
// an error when a server ends the connection.
var errAborted = errors.New("ratelimittest: Handler aborted the response")

// closeBody closes req's body, if it has one.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// responseWriter is the [http.ResponseWriter] of a Transport's Handler. Its
// methods are called by Handler's goroutine only; what RoundTrip reads is
// set before sent is closed.
type responseWriter struct {
	ctx         context.Context // the client's
	header      http.Header
	head        bool // the request is a HEAD: the body is discarded
	wroteHeader bool
	sent        chan struct{}      // closed when the header is sent
	cancel      context.CancelFunc // ends the context of Handler's request

	// Set before sent is closed.
	code       int
	sentHeader http.Header  // header as of WriteHeader
	declared   int64        // the Content-Length of sentHeader; -1 when none
	written    int64        // bytes Handler wrote, those refused past declared too
	kept       int64        // bytes of the body kept: written but those refused
	buf        bytes.Buffer // body written before the header was sent
	body       *pipe        // streamed body; nil if the response is whole
	aborted    bool         // Handler panicked: set before finish

	// pending is what Handler wrote to a streamed body since its last
	// flush, as a server's response buffers it: passed on when Handler
	// flushes or returns, or once streamBuffer bytes wait, and dropped
	// when Handler panics.
	pending []byte
}

// streamBuffer is how many bytes written to a streamed body wait for a
// flush at most, as in the response buffer of net/http's server (what
// has left it is in the connection's buffer, which a panic still sends).
const streamBuffer = 2 << 10

func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader records the status and a snapshot of the header, as
// net/http's server does, with a Date when Handler set none.
// Informational statuses are ignored.
func (w *responseWriter) WriteHeader(code int) {
	if w.wroteHeader || code < 200 {
		return
	}
	w.code, w.wroteHeader = code, true
	w.sentHeader = w.header.Clone()
	w.declared = -1
	if n, err := strconv.ParseInt(w.sentHeader.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		w.declared = n
	}
	if _, ok := w.sentHeader["Date"]; !ok {
		// As net/http's server adds one (RFC 9110 §6.6.1), unless
		// Handler set the key, if only to nil.
		if w.sentHeader == nil {
			w.sentHeader = make(http.Header)
		}
		w.sentHeader.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
}

// Write adds b to the body. Before the header is written, it writes 200,
// as net/http's server does; where the status allows no body (204, 304),
// it fails with [http.ErrBodyNotAllowed], and past the Content-Length
// Handler set, with [http.ErrContentLength], writing none of b.
func (w *responseWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.code) {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(len(b))
	if w.declared >= 0 && w.written > w.declared {
		return 0, http.ErrContentLength
	}
	w.kept += int64(len(b))
	if w.body != nil {
		if w.head {
			return len(b), nil
		}
		if w.body.closed() {
			return 0, errClientGone
		}
		w.pending = append(w.pending, b...)
		if len(w.pending) >= streamBuffer {
			return len(b), w.push()
		}
		return len(b), nil
	}
	return w.buf.Write(b)
}

// push passes on what waits in pending to the streamed body.
func (w *responseWriter) push() error {
	if len(w.pending) == 0 {
		return nil
	}
	_, err := w.body.write(w.pending)
	w.pending = w.pending[:0]
	return err
}

// Flush sends the header, if it is not sent yet, and streams the body from
// then on.
func (w *responseWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.body != nil {
		w.push()
		return
	}
	w.sniff()
	w.body = &pipe{wake: make(chan struct{}, 1), cancel: w.cancel}
	if !w.head {
		w.body.buf = bytes.Clone(w.buf.Bytes())
	}
	w.buf = bytes.Buffer{}
	close(w.sent)
}

// finish ends the response when Handler returns: it sends the whole
// response, or ends the streamed body.
func (w *responseWriter) finish() {
	if w.body != nil {
		// A stream cut short because the client's context ended ends with
		// the context's error, as it would on a connection, and one
		// Handler aborted with io.ErrUnexpectedEOF.
		// What Handler wrote since it last flushed is sent as it returns,
		// or dropped with the connection when it panicked. A body cut
		// short of the Content-Length Handler set ends so too.
		if err := w.ctx.Err(); err != nil {
			w.body.abort(err)
		} else if w.aborted {
			w.body.fail(io.ErrUnexpectedEOF) // after what was flushed
		} else if w.push(); !w.head && bodyAllowed(w.code) && w.declared >= 0 && w.kept < w.declared {
			w.body.fail(io.ErrUnexpectedEOF)
		}
		w.body.closeWrite()
		return
	}
	if w.aborted {
		close(w.sent) // no header: RoundTrip fails
		return
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.sniff()
	close(w.sent)
}

// sniff sets the Content-Type of the header sent, when Handler set none,
// from the body written before the header is sent, as net/http's server
// does: not for an empty body, nor one with a Content-Encoding or a
// Transfer-Encoding.
func (w *responseWriter) sniff() {
	h := w.sentHeader
	if _, ok := h["Content-Type"]; ok || w.buf.Len() == 0 || h.Get("Content-Encoding") != "" ||
		h.Get("Transfer-Encoding") != "" || !bodyAllowed(w.code) {
		return
	}
	h.Set("Content-Type", http.DetectContentType(w.buf.Bytes()))
}

// bodyAllowed reports whether a response of status code may have a body
// (RFC 9110 §6.4.1).
func bodyAllowed(code int) bool {
	return code >= 200 && code != http.StatusNoContent && code != http.StatusNotModified
}

// errClientGone is what a Handler's write returns once its client has
// closed the streamed body or its request's context has ended.
var errClientGone = errors.New("ratelimittest: client closed the response")

// errReadAfterClose is what a read of a closed body returns, as net/http's.
var errReadAfterClose = errors.New("http: read on closed response body")

// pipe is a streamed response body: Handler appends, the client reads.
// Writes never block: what the client has not read yet waits in buf, as it
// would in a connection's buffers.
type pipe struct {
	mu     sync.Mutex
	buf    []byte
	err    error // once buf is read: io.EOF when Handler is done, or why reading ended
	gone   bool  // the client closed the body or its context ended
	wake   chan struct{}
	cancel context.CancelFunc // ends the context of Handler's request
	stop   func() bool        // unregisters the context watch; set before the client reads
}

// signal wakes the reader, if it waits.
func (p *pipe) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// closed reports whether the client closed the body or its context
// ended: a write fails.
func (p *pipe) closed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gone
}

func (p *pipe) write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone {
		return 0, errClientGone
	}
	p.buf = append(p.buf, b...)
	p.signal()
	return len(b), nil
}

// fail ends the body with err after what was written, unless it has
// ended.
func (p *pipe) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
	p.signal()
}

// closeWrite marks the end of the body.
func (p *pipe) closeWrite() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = io.EOF
	}
	p.signal()
}

// abort ends reading with err, unless the body has been read to its end
// or was closed (or aborted) already: its reads fail as they did.
func (p *pipe) abort(err error) {
	p.mu.Lock()
	if p.gone || p.err == io.EOF && len(p.buf) == 0 {
		p.mu.Unlock()
		return
	}
	p.gone, p.buf, p.err = true, nil, err
	p.signal()
	p.mu.Unlock()
	p.cancel()
}

// Read reads what Handler has written, waiting for it if need be.
func (p *pipe) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		p.mu.Lock()
		if len(p.buf) > 0 {
			n := copy(b, p.buf)
			p.buf = p.buf[n:]
			if len(p.buf) == 0 {
				p.buf = nil
			}
			p.mu.Unlock()
			return n, nil
		}
		err := p.err
		p.mu.Unlock()
		if err != nil {
			if err == io.EOF {
				p.stop()
			}
			return 0, err
		}
		<-p.wake
	}
}

// Close ends the body: a read waiting returns, later reads fail, and if
// Handler is still writing, the context of its request ends.
func (p *pipe) Close() error {
	p.stop()
	p.mu.Lock()
	p.gone, p.buf, p.err = true, nil, errReadAfterClose
	p.signal()
	p.mu.Unlock()
	p.cancel()
	return nil
}
