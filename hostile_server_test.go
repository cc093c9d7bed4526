package polite_test

// Hostile servers played against polite.Transport end to end, in memory:
// each test holds one documented promise against a server that would
// break it.

import (
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// rvSend is one request the server received.
type rvSend struct {
	task          string
	sent, arrived time.Time
	status        int
}

// rvServer answers in memory after latency; answer gives the status and
// fields of each request, by the X-Task of the request and the instant it
// arrived.
type rvServer struct {
	mu      sync.Mutex
	latency time.Duration
	answer  func(task string, n int, at time.Time) (int, http.Header)
	sends   []*rvSend
	n       map[string]int
}

func (s *rvServer) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now()
	task := req.Header.Get("X-Task")
	s.mu.Lock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	n := s.n[task]
	s.n[task]++
	rec := &rvSend{task: task, sent: now}
	s.sends = append(s.sends, rec)
	s.mu.Unlock()
	if s.latency > 0 {
		time.Sleep(s.latency)
	}
	status, h := s.answer(task, n, now)
	if h == nil {
		h = http.Header{}
	}
	s.mu.Lock()
	rec.arrived, rec.status = time.Now(), status
	s.mu.Unlock()
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// Policy names (and cost units and quota names) a server states are kept
// as copies of at most 128 bytes, not as slices of the response's header
// line: the server here sends, on each of 8 responses per origin, a new
// policy whose RateLimit-Policy line carries an unknown 1 MiB parameter
// (draft-11: unknown parameters are ignored). Before, each key kept every
// line whole: 8.1 MiB per origin, up to net/http's 10 MiB header limit a
// policy, for up to MaxKeys keys.
func TestHostileHeaderLineNotKept(t *testing.T) {
	pad := strings.Repeat("x", 1<<20) // one MiB
	const origins, responses = 20, 8
	b := &polite.Budget{}
	tr := &polite.Transport{Budget: b, Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		n, _ := strconv.Atoi(req.Header.Get("X-N"))
		h := http.Header{}
		// A fresh string per response, as net/http's reader makes one.
		h.Set("RateLimit-Policy", fmt.Sprintf(`"p%d";q=1000;w=1;c="%s"`, n, pad))
		return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: req}, nil
	})}
	send := func(origin, n int) {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://o%d.test/", origin), nil)
		req.Header.Set("X-N", strconv.Itoa(n))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	send(origins, 0) // the Budget's own structures
	before := heap()
	for o := range origins {
		for n := range responses {
			send(o, n)
		}
	}
	after := heap()
	st, _ := b.Inspect("http://o3.test", time.Now())
	runtime.KeepAlive(tr)
	per := float64(int64(after)-int64(before)) / origins
	t.Logf("policies kept for o3: %d; heap retained per origin: %.0f bytes (%.1f MiB)", len(st.Policies), per, per/(1<<20))
	if per > 64<<10 {
		t.Errorf("%.1f MiB kept per origin after %d responses, want at most 64 KiB: the header lines the policy names were sliced from are kept alive", per/(1<<20), responses)
	}
}

// A server that refuses everything for one second (Retry-After: 1) while
// about 100 requests are in flight is not in an outage, and serves every
// request a second later, well within MaxWait: none fails for the retry
// budget, whose outage counts refused flights, the refusals of requests in
// flight together once. Before, it counted every refusal: past the 40th of
// the one flight, 60 tasks went back to the caller as give-ups for the
// retry budget.
func TestBlipFailsNoTaskForRetryBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		t0 := time.Now()
		srv := &rvServer{latency: 300 * time.Millisecond, answer: func(_ string, _ int, at time.Time) (int, http.Header) {
			if d := at.Sub(t0); d >= 2*time.Second && d < 3*time.Second {
				return 429, http.Header{"Retry-After": {"1"}}
			}
			return 200, http.Header{"Ratelimit-Policy": {`"d";q=100000;w=1`}, "Ratelimit": {`"d";r=90000;t=1`}}
		}}
		var mu sync.Mutex
		gaveUp := map[polite.Reason]int{}
		tr := &polite.Transport{Base: srv, OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventGiveUp {
				mu.Lock()
				gaveUp[e.Reason]++
				mu.Unlock()
			}
		}}
		const tasks = 1500
		statuses := run(t, &http.Client{Transport: tr}, "http://api.test/", tasks, 100)
		refused := 0
		for _, s := range srv.sends {
			if s.status == 429 {
				refused++
			}
		}
		t.Logf("took %v: statuses %v; the server refused %d (all within 2s-3s); give-ups %v", time.Since(t0), statuses, refused, gaveUp)
		if statuses[200] != tasks {
			t.Errorf("%d of %d tasks failed after a one-second blip the server asked to wait out (Retry-After: 1, MaxWait 10m): give-ups %v",
				tasks-statuses[200], tasks, gaveUp)
		}
	})
}

// A transient retry (RetryTransient, a 502 with Retry-After) carries its
// wait into the budget's hold, as a refusal's retry does, MaxWait counted
// from the failure: a pause the key takes meanwhile (another caller's 429,
// Retry-After: 10, 9 s later) that would hold it past MaxWait ends its
// wait with a *WaitError. Before, the wait was slept first, then the next
// attempt counted MaxWait afresh: A waited 19 s between its 502 and its
// retry with MaxWait 10 s, silently.
func TestTransientRetryWithinMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		srv := &rvServer{answer: func(task string, n int, _ time.Time) (int, http.Header) {
			switch {
			case task == "A" && n == 0:
				return 502, http.Header{"Retry-After": {"10"}}
			case task == "B" && n == 0:
				return 429, http.Header{"Retry-After": {"10"}}
			}
			return 200, nil
		}}
		const maxWait = 10 * time.Second
		tr := &polite.Transport{Base: srv, MaxWait: maxWait, RetryTransient: true}
		var errA error
		var failedA time.Time
		get := func(task string) {
			req, _ := http.NewRequest("GET", "http://api.test/", nil)
			req.Header.Set("X-Task", task)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				if task == "A" {
					errA, failedA = err, time.Now()
					return
				}
				t.Errorf("%s: %v", task, err)
				return
			}
			resp.Body.Close()
		}
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() { get("A") })
		wg.Go(func() {
			time.Sleep(9 * time.Second)
			get("B")
		})
		wg.Wait()
		var a []*rvSend
		for _, s := range srv.sends {
			if s.task == "A" {
				a = append(a, s)
			}
		}
		if errA != nil {
			var we *polite.WaitError
			if !errors.As(errA, &we) || failedA.Sub(start) > maxWait {
				t.Errorf("A: %v after %v; want a *WaitError within MaxWait %v", errA, failedA.Sub(start), maxWait)
			}
			return
		}
		if len(a) < 2 {
			t.Fatalf("A sent %d times", len(a))
		}
		gap := a[1].sent.Sub(a[0].arrived)
		t.Logf("A: %d answered at %v, sent again %v later (MaxWait %v)", a[0].status, a[0].arrived.Format("15:04:05.000"), gap, maxWait)
		if gap > maxWait+time.Second {
			t.Errorf("A waited %v between its 502 and its retry, MaxWait %v", gap, maxWait)
		}
	})
}

// A Retry-After HTTP-date on a refusal that carries no Date is measured
// from the server's clock as the key estimates it from its earlier Dates,
// as every other instant is (an epoch X-RateLimit-Reset on the same
// refusal). Before, it was measured from the client's clock: a server an
// hour ahead that asked for 5 seconds had its refusal handed back at once
// and the whole origin paused for an hour.
func TestRetryAfterDateFromKnownSkew(t *testing.T) {
	for _, form := range []string{"x-ratelimit-reset epoch", "retry-after http-date"} {
		t.Run(form, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				const skew = time.Hour // the server's clock is an hour ahead
				n := 0
				tr := &polite.Transport{Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
					n++
					srvNow := time.Now().Add(skew)
					h := http.Header{}
					if n != 4 {
						h.Set("Date", srvNow.UTC().Format(http.TimeFormat))
						h.Set("RateLimit-Policy", `"d";q=100;w=60`)
						h.Set("RateLimit", `"d";r=50;t=30`)
						return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: req}, nil
					}
					// The fourth request is refused for 5 seconds, with no Date.
					if form == "retry-after http-date" {
						h.Set("Retry-After", srvNow.Add(5*time.Second).UTC().Format(http.TimeFormat))
					} else {
						h.Set("X-RateLimit-Limit", "10")
						h.Set("X-RateLimit-Remaining", "0")
						h.Set("X-RateLimit-Reset", strconv.FormatInt(srvNow.Add(5*time.Second).Unix(), 10))
					}
					return &http.Response{StatusCode: 429, Header: h, Body: http.NoBody, Request: req}, nil
				})}
				var last string
				for i := range 5 {
					st := time.Now()
					req, _ := http.NewRequest("GET", "http://api.test/", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						last = err.Error()
					} else {
						last = strconv.Itoa(resp.StatusCode)
						resp.Body.Close()
					}
					t.Logf("request %d: %s after %v", i+1, last, time.Since(st))
					if i >= 3 && (err != nil || resp.StatusCode != 200) {
						t.Errorf("request %d failed (%s), though the server asked for 5 s and MaxWait is 10 m", i+1, last)
					}
				}
			})
		})
	}
}

// An origin that states nothing and refuses nothing: its first request (the
// probe) answers in 20 ms, its second takes 2 minutes to answer (a slow
// page), every other one 20 ms. The ramp opens to one request in flight
// after the probe, and the slow one held that slot until its answer or its
// lease (10 min): with MaxWait 30 s, every other request failed with a
// *WaitError, though the server would have served each at once. A full
// window none of whose requests answered within the probe timeout (3 s
// here) lets one more go, as a probe that does not answer does.
func TestRampSlotNotHeldBySlowRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present()
		var n atomic.Int64
		tr := &polite.Transport{MaxWait: 30 * time.Second, Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			d := 20 * time.Millisecond
			if n.Add(1) == 2 {
				d = 2 * time.Minute // one slow page
			}
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-time.After(d):
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		})}
		get := func() (time.Duration, error) {
			s := time.Now()
			req, _ := http.NewRequest("GET", "http://site.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return time.Since(s), err
		}
		if _, err := get(); err != nil { // the probe
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { get() }) // the slow one
		time.Sleep(10 * time.Millisecond)
		var mu sync.Mutex
		var failed, slow int
		for range 6 {
			wg.Go(func() {
				took, err := get()
				mu.Lock()
				defer mu.Unlock()
				var we *polite.WaitError
				if errors.As(err, &we) {
					failed++
					t.Logf("failed after %v: %v", took, err)
				} else if took > 5*time.Second {
					slow++
					t.Logf("served after %v", took)
				}
			})
		}
		wg.Wait()
		if failed > 0 || slow > 0 {
			t.Errorf("%d of 6 requests failed with a *WaitError and %d waited more than 5 s, behind one slow request to an origin that stated no limit and refused nothing", failed, slow)
		}
	})
}
