package polite_test

import (
	"net/http"
	"sync"
	"time"
)

// ctxServer answers in latency, as rvServer does, but honours the
// request's context as net/http's Transport does: a request whose
// context ends before the answer gets the context's error, no response.
type ctxServer struct {
	latency time.Duration
	mu      sync.Mutex
	n       map[string]int
	answer  func(task string, n int, at time.Time) (int, http.Header)
}

func (s *ctxServer) RoundTrip(req *http.Request) (*http.Response, error) {
	task := req.Header.Get("X-Task")
	s.mu.Lock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	n := s.n[task]
	s.n[task]++
	s.mu.Unlock()
	tm := time.NewTimer(s.latency)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	status, h := s.answer(task, n, time.Now())
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}
