package ratelimittest

import "net/http/httptest"

// Server is a rate-limited HTTP server listening on a loopback address,
// like [httptest.Server], which it embeds: use its URL, Client and Close.
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
