package ratelimittest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
)

// Transport is an [http.RoundTripper] that serves requests with Handler in
// memory, without sockets, so that it works inside testing/synctest
// bubbles, where [NewServer] cannot.
//
// RoundTrip runs Handler in the calling goroutine, on a copy of the request
// shaped like one a server receives, and records what it writes. The
// response it returns reads like one from the network: HTTP/1.1, header keys
// in canonical form, ContentLength and Content-Length set, and Request set
// to the caller's request, which is never modified. RoundTrip closes the
// request body on every path. If the request's context is done before or
// while Handler runs, RoundTrip returns the context's error and no response.
//
// A Transport is safe for concurrent use if Handler is.
type Transport struct {
	// Handler serves the requests. It must not be nil.
	Handler http.Handler
}

// remoteAddr is the client address Handler sees, as in [httptest.NewRequest].
const remoteAddr = "192.0.2.1:1234"

// RoundTrip implements [http.RoundTripper].
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if t.Handler == nil {
		return nil, errors.New("ratelimittest: Transport.Handler is nil")
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	in := req.Clone(ctx)
	in.Proto, in.ProtoMajor, in.ProtoMinor = "HTTP/1.1", 1, 1
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = remoteAddr
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	in.GetBody = nil
	in.Body = http.NoBody
	if req.Body != nil && req.Body != http.NoBody {
		in.Body = io.NopCloser(req.Body) // closed above, when Handler is done
	}
	rec := httptest.NewRecorder()
	t.Handler.ServeHTTP(rec, in)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	resp := rec.Result()
	header := make(http.Header, len(resp.Header))
	for k, vs := range resp.Header {
		k = http.CanonicalHeaderKey(k)
		header[k] = append(header[k], vs...)
	}
	resp.Header = header
	body := rec.Body.Bytes()
	resp.ContentLength = int64(len(body))
	if header.Get("Content-Length") == "" {
		header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if req.Method == http.MethodHead {
		body = nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.Request = req
	return resp, nil
}
