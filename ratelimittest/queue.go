package ratelimittest

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// QueueConfig describes a [QueueHandler]: a server with a fixed number of
// workers and a queue in front of them, whose latency grows with its load
// and which refuses only when its queue overflows. It states no rate
// limit.
type QueueConfig struct {
	// Workers is how many requests are served at once. If zero, 8.
	Workers int

	// ServiceTime is how long a worker takes to serve one request, the
	// latency of a request that does not queue. If zero, 50ms.
	ServiceTime time.Duration

	// QueueLen is how many requests may wait for a worker; a request that
	// finds the queue full is refused. If zero, the queue has no bound
	// and no request is refused. If negative, no request waits: one that
	// finds every worker busy is refused.
	QueueLen int

	// RefuseStatus is the status code of a refusal, 400 to 599. If zero,
	// 503.
	RefuseStatus int

	// Next, if not nil, writes the response of a request once its worker
	// has spent ServiceTime on it. If nil, the response is 200 with a
	// short text body.
	Next http.Handler
}

// QueueHandler is an [http.Handler] that serves requests as a server with
// a fixed number of workers does: a request that finds a worker free is
// served in QueueConfig.ServiceTime; one that finds them all busy waits its
// turn in a queue (first come, first served), and is refused only when
// the queue is full. Its capacity is Workers/ServiceTime requests a
// second; its latency is ServiceTime plus the time spent queueing.
//
// It measures time with the time package, so inside a testing/synctest
// bubble, reached through a [Transport], it runs in virtual time.
//
// Create QueueHandlers with [NewQueueHandler]. A QueueHandler is safe for
// concurrent use by multiple goroutines.
type QueueHandler struct {
	cfg QueueConfig

	mu    sync.Mutex
	busy  int             // workers serving a request
	queue []chan struct{} // requests waiting for a worker, first first
	stats QueueStats
}

// QueueStats counts what a [QueueHandler] has seen since it was created.
type QueueStats struct {
	Requests int // requests received
	Served   int // requests answered by a worker
	Refused  int // requests refused because the queue was full
	// Canceled is the number of requests whose context ended while they
	// queued or were being served; they get no response.
	Canceled int

	PeakQueue int // most requests waiting at once
	PeakBusy  int // most workers busy at once

	// Latencies holds, for every served request in the order they
	// finished, the time from its arrival to its response.
	Latencies []time.Duration

	// First is the arrival of the first request, Last the response to the
	// last served one.
	First, Last time.Time
}

// NewQueueHandler returns a QueueHandler for cfg. It copies cfg, so later
// changes to cfg have no effect. It panics on a RefuseStatus other than 0
// outside 400 to 599.
func NewQueueHandler(cfg QueueConfig) *QueueHandler {
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.ServiceTime <= 0 {
		cfg.ServiceTime = 50 * time.Millisecond
	}
	cfg.RefuseStatus = refuseStatus(cfg.RefuseStatus, http.StatusServiceUnavailable)
	return &QueueHandler{cfg: cfg}
}

// Capacity returns the most requests h can serve in a second:
// Workers/ServiceTime.
func (h *QueueHandler) Capacity() float64 {
	return float64(h.cfg.Workers) / h.cfg.ServiceTime.Seconds()
}

// Stats returns a copy of what h has counted.
func (h *QueueHandler) Stats() QueueStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.Latencies = slices.Clone(s.Latencies)
	return s
}

// Median returns the median of s.Latencies (the lower middle one for an
// even count), or 0 if there are none.
func (s QueueStats) Median() time.Duration {
	if len(s.Latencies) == 0 {
		return 0
	}
	l := slices.Clone(s.Latencies)
	slices.Sort(l)
	return l[(len(l)-1)/2]
}

// Throughput returns the requests served per second from the first
// arrival to the last response, or 0 if none was served.
func (s QueueStats) Throughput() float64 {
	d := s.Last.Sub(s.First)
	if s.Served == 0 || d <= 0 {
		return 0
	}
	return float64(s.Served) / d.Seconds()
}

// ServeHTTP implements [http.Handler].
func (h *QueueHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	arrival := time.Now()
	h.mu.Lock()
	h.stats.Requests++
	if h.stats.First.IsZero() {
		h.stats.First = arrival
	}
	var turn chan struct{}
	switch {
	case h.busy < h.cfg.Workers:
		h.busy++
		h.stats.PeakBusy = max(h.stats.PeakBusy, h.busy)
	case h.cfg.QueueLen < 0 || h.cfg.QueueLen > 0 && len(h.queue) >= h.cfg.QueueLen:
		h.stats.Refused++
		h.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(h.cfg.RefuseStatus)
		io.WriteString(w, "queue full\n")
		return
	default:
		turn = make(chan struct{})
		h.queue = append(h.queue, turn)
		h.stats.PeakQueue = max(h.stats.PeakQueue, len(h.queue))
	}
	h.mu.Unlock()

	if turn != nil {
		select {
		case <-turn: // a worker was handed over
		case <-ctx.Done():
			h.mu.Lock()
			if i := slices.Index(h.queue, turn); i >= 0 {
				h.queue = slices.Delete(h.queue, i, i+1)
				h.stats.Canceled++
				h.mu.Unlock()
				return
			}
			h.stats.Canceled++
			h.release() // handed a worker just as the context ended
			h.mu.Unlock()
			return
		}
	}

	t := time.NewTimer(h.cfg.ServiceTime)
	defer t.Stop()
	select {
	case <-ctx.Done():
		h.mu.Lock()
		h.stats.Canceled++
		h.release()
		h.mu.Unlock()
		return
	case <-t.C:
	}
	if h.cfg.Next != nil {
		served := false
		defer func() {
			if !served {
				// Next panicked (http.ErrAbortHandler aborts a
				// handler so): its worker goes to the next request,
				// and the request counts as not served.
				h.mu.Lock()
				h.release()
				h.mu.Unlock()
			}
		}()
		h.cfg.Next.ServeHTTP(w, r)
		served = true
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "served\n")
	}
	now := time.Now()
	h.mu.Lock()
	h.stats.Served++
	h.stats.Latencies = append(h.stats.Latencies, now.Sub(arrival))
	h.stats.Last = now
	h.release()
	h.mu.Unlock()
}

// release frees a worker: it goes to the first request in the queue, if
// any. h.mu must be held.
func (h *QueueHandler) release() {
	if len(h.queue) > 0 {
		close(h.queue[0])
		h.queue[0] = nil
		h.queue = h.queue[1:]
		return
	}
	h.busy--
}
