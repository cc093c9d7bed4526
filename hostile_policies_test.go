package polite_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// rhRec is one request the hostile server received.
type rhRec struct {
	i          int
	sent, done time.Time
	status     int
	hdr        http.Header
}

// rhServer answers in memory after latency; answer decides each response by
// its index (from 0) and the instant it arrived.
type rhServer struct {
	mu      sync.Mutex
	latency time.Duration
	answer  func(i int, at time.Time) (int, http.Header)
	body    func(i int) io.ReadCloser
	recs    []*rhRec
}

func (s *rhServer) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now()
	s.mu.Lock()
	rec := &rhRec{i: len(s.recs), sent: now}
	s.recs = append(s.recs, rec)
	s.mu.Unlock()
	if s.latency > 0 {
		select {
		case <-time.After(s.latency):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	status, h := s.answer(rec.i, now)
	if h == nil {
		h = http.Header{}
	}
	s.mu.Lock()
	rec.done, rec.status, rec.hdr = time.Now(), status, h
	s.mu.Unlock()
	var body io.ReadCloser = http.NoBody
	if s.body != nil {
		body = s.body(rec.i)
	}
	return &http.Response{StatusCode: status, Header: h, Body: body, Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// snapshot copies what the server received.
func (s *rhServer) snapshot() []rhRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]rhRec, len(s.recs))
	for i, r := range s.recs {
		out[i] = *r
	}
	return out
}

type rhTask struct {
	start, end time.Time
	status     int
	err        error
}

// rhRun runs workers looping on tr for dur of virtual time, each task under
// a context of timeout.
func rhRun(tr http.RoundTripper, workers int, dur, timeout time.Duration) []rhTask {
	var mu sync.Mutex
	var tasks []rhTask
	stop := time.Now().Add(dur)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for time.Now().Before(stop) {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.test/x", nil)
				st := time.Now()
				resp, err := tr.RoundTrip(req)
				task := rhTask{start: st, end: time.Now(), err: err}
				if err == nil {
					task.status = resp.StatusCode
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				cancel()
				mu.Lock()
				tasks = append(tasks, task)
				mu.Unlock()
				if err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	return tasks
}

// A server states nine policies on every answer, in one RateLimit-Policy
// field: eight loose ones (a million per 2 s to 9 s) and, last, the one
// that binds, "a";q=10;w=1. doc.go: "Several policies apply at once and
// the tightest wins"; DESIGN.md §2: "no more than q starts in any span of
// w". The key keeps 8 policies, and ignored the ninth whatever it said
// (DESIGN.md §3), so the binding quota was never applied: the client
// started 800 requests a second against a stated 10. A ninth replaces a
// kept policy it makes redundant now.
func TestNinthPolicyBindingKept(t *testing.T) {
	for _, last := range []bool{false, true} {
		t.Run(fmt.Sprintf("binding-last=%v", last), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				var loose []string
				for k := range 8 {
					loose = append(loose, fmt.Sprintf(`"p%d";q=1000000;w=%d`, k, k+2))
				}
				field := strings.Join(append([]string{`"a";q=10;w=1`}, loose...), ", ")
				if last {
					field = strings.Join(append(loose, `"a";q=10;w=1`), ", ")
				}
				srv := &rhServer{latency: 20 * time.Millisecond, answer: func(int, time.Time) (int, http.Header) {
					return 200, http.Header{"Ratelimit-Policy": {field}}
				}}
				tr := &polite.Transport{Base: srv}
				rhRun(tr, 16, 10*time.Second, time.Minute)
				var at []time.Time
				for _, r := range srv.snapshot() {
					at = append(at, r.sent)
				}
				sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
				if got := maxInSpan(at, time.Second); got > 10 {
					t.Errorf("%d requests started within one second (%d in 10 s) against a stated \"a\";q=10;w=1 (the ninth of nine policies: %v); want at most 10",
						got, len(at), last)
				}
			})
		})
	}
}
