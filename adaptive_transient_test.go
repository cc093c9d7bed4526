package polite_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// gatewayThenOrigin answers 502 at once while bad is set (a gateway's
// quick failure), and 200 after 100ms otherwise (the origin), counting the
// origin's requests in flight and their peak since the last reset.
type gatewayThenOrigin struct {
	bad            atomic.Bool
	inflight, peak atomic.Int64
	served         atomic.Int64
}

func (g *gatewayThenOrigin) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	if g.bad.Load() {
		time.Sleep(time.Millisecond)
		return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, Body: http.NoBody, ContentLength: 0, Request: req}, nil
	}
	in := g.inflight.Add(1)
	for p := g.peak.Load(); in > p && !g.peak.CompareAndSwap(p, in); p = g.peak.Load() {
	}
	time.Sleep(100 * time.Millisecond)
	g.inflight.Add(-1)
	g.served.Add(1)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, ContentLength: 0, Request: req}, nil
}

// Restraint.Adaptive promises that "refusals and errors are not counted,
// nor, with Transport.RetryTransient, the 502s and 504s it reads as
// transient". A 502 that RetryTransient reads as transient but cannot
// resend (a POST, or the last attempt) goes back to the caller as an
// EventGiveUp with ReasonTransient; its latency was sampled all the same:
// a gateway's quick failures became the origin's baseline, and the limit
// collapsed against an origin that never queues (from 4 to 1).
func TestAdaptiveSkipsTransientGiveUps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &gatewayThenOrigin{}
		var transientGiveUps atomic.Int64
		tr := &polite.Transport{
			Base:           base,
			RetryTransient: true,
			Restraint:      &polite.Restraint{Adaptive: true}, // limit 4
			OnEvent: func(e polite.Event) {
				if e.Kind == polite.EventGiveUp && e.Reason == polite.ReasonTransient {
					transientGiveUps.Add(1)
				}
			},
		}
		// A gateway fails quickly: 64 POSTs, each a 502 read as transient.
		base.bad.Store(true)
		for range 64 {
			req, _ := http.NewRequest(http.MethodPost, "http://a.test/", strings.NewReader("x"))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if n := transientGiveUps.Load(); n != 64 {
			t.Fatalf("%d give-ups for a transient failure, want 64", n)
		}
		// The origin is back, answering in 100ms whatever its load (it
		// never queues): 8 workers for 20s.
		base.bad.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		wait := polite.GetUntil(ctx, tr, 8, "http://a.test/")
		time.Sleep(10 * time.Second)
		base.peak.Store(base.inflight.Load())
		before := base.served.Load()
		wait()
		// Latency never rose above the origin's own: the limit should
		// stay at 4 (about 40 answers a second).
		if p, n := base.peak.Load(), base.served.Load()-before; p < 4 || n < 300 {
			t.Errorf("over the last 10s: peak in flight %d, %d answered; want 4 and about 400: the 502s read as transient were sampled as the baseline", p, n)
		}
	})
}
