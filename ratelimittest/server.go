package ratelimittest

import "net/http/httptest"

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
}

// NewServer starts and returns a Server for cfg, listening on 127.0.0.1
// (or ::1). The caller should call Close when finished, to shut it down.
// It panics if cfg is invalid, as [NewHandler] does.
func NewServer(cfg Config) *Server {
	h := NewHandler(cfg)
	return &Server{Server: httptest.NewServer(h), Handler: h}
}

// Close shuts the server down, as [httptest.Server.Close] does, but first
// closes every connection, idle or not: the requests it is serving end
// (their contexts are done), a dripping body or a held request among them,
// and Close returns once their handlers have, not when a drip or a
// client's wait would have ended.
func (s *Server) Close() { closeServer(s.Server) }

// closeServer is Close for an httptest.Server: it stops accepting, closes
// the connections, then waits for the handlers.
func closeServer(s *httptest.Server) {
	s.Listener.Close() // no connection comes between the next two calls
	s.CloseClientConnections()
	s.Close()
}
