package ratelimittest

import (
	"context"
	"net/http"
	"net/http/httptest"
)

// Server is a rate-limited HTTP server listening on a loopback address,
// like [httptest.Server], which it embeds: use its URL and Client, and its
// Close.
//
// It runs in real time. Inside testing/synctest bubbles, use a [Handler]
// through a [Transport] instead.
type Server struct {
	*httptest.Server

	// Handler serves the requests; use it for Stats and Reset.
	Handler *Handler

	closing *closing
}

// NewServer starts and returns a Server for cfg, listening on 127.0.0.1
// (or ::1). The caller should call Close when finished, to shut it down.
// It panics if cfg is invalid, as [NewHandler] does.
func NewServer(cfg Config) *Server {
	h := NewHandler(cfg)
	c := newClosing()
	return &Server{Server: httptest.NewServer(c.wrap(h)), Handler: h, closing: c}
}

// Close shuts the server down, as [httptest.Server.Close] does, but first
// closes every connection, idle or not: the requests it is serving end
// (their contexts are done), a dripping body or a held request among them,
// and Close returns once their handlers have, not when a drip or a
// client's wait would have ended.
func (s *Server) Close() { closeServer(s.Server, s.closing) }

// closeServer is Close for an httptest.Server whose handler c wraps (nil:
// none): it stops accepting, closes the connections, ends the requests'
// contexts, then waits for the handlers.
func closeServer(s *httptest.Server, c *closing) {
	s.Listener.Close() // no connection comes between the next two calls
	s.CloseClientConnections()
	if c != nil {
		c.cancel()
	}
	s.Close()
}

// closing ends the contexts of the requests a server serves when it
// closes. net/http ends a request's context when its connection closes
// only once the request's body has been read to its end, which a Handler
// does not do: a held POST kept Close waiting until its client gave up.
type closing struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newClosing() *closing {
	ctx, cancel := context.WithCancel(context.Background())
	return &closing{ctx, cancel}
}

// wrap returns h serving each request with a context that also ends when
// c does.
func (c *closing) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(c.ctx, cancel)()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
