package polite

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// streamOrQuick answers after 100ms, whatever its load (the origin never
// queues); from streamFrom on, its answers stream a body for streamFor
// after their headers. It counts the bodies streaming and their peak.
type streamOrQuick struct {
	streamFrom time.Time
	streamFor  time.Duration
	streams    peakCounter
}

// sleepyBody ends after d, as a stream the server sends slowly does.
type sleepyBody struct {
	once sync.Once
	d    time.Duration
	p    *peakCounter
}

func (b *sleepyBody) Read([]byte) (int, error) {
	time.Sleep(b.d)
	b.once.Do(b.p.Leave)
	return 0, io.EOF
}

func (b *sleepyBody) Close() error { b.once.Do(b.p.Leave); return nil }

func (s *streamOrQuick) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := time.Now()
	time.Sleep(100 * time.Millisecond)
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, ContentLength: 0, Request: req}
	if !sent.Before(s.streamFrom) {
		s.streams.Enter()
		resp.Body, resp.ContentLength = &sleepyBody{d: s.streamFor, p: &s.streams}, -1
	}
	return resp, nil
}

// Restraint.Adaptive's doc: every 5 minutes "for at most 17 round trips,
// the limit is halved". The drain ended only when a latency sample arrived past its end
// (expire was called for a cache's answer only), and a request held by the
// halved limit waited for a slot to free or a lease to end, never for the
// drain's end. When the slots the drain left were taken by answers whose
// bodies stream (headers in 100 ms, bodies for minutes), no sample could
// come: the limit stayed halved, and the requests held waited, for as long
// as the streams lasted.
func TestAdaptiveDrainEndsWithoutSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Quick answers until just after the re-measurement's drain began
		// (the first measurement ends about 1.6 s in, the drain about 5
		// minutes after, its measurement 1.7 s long); streams of 5
		// minutes after.
		switchAt := time.Now().Add(5*time.Minute + 2500*time.Millisecond)
		base := &streamOrQuick{streamFrom: switchAt, streamFor: 5 * time.Minute}
		tr := &Transport{Base: base, Restraint: &Restraint{Adaptive: true}} // limit 4
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		time.Sleep(time.Until(switchAt))
		if g := gradientOf(tr, "a.test"); g.last.IsZero() || !g.mDrain || !switchAt.After(g.mFrom) || !switchAt.Before(g.mEnd) {
			t.Fatalf("setup: at the switch, the drain should be measuring (drain %v, from %v, end %v)", g.mDrain, g.mFrom.Sub(switchAt), g.mEnd.Sub(switchAt))
		}
		// Well past 17 round trips of 100 ms after the drain began.
		time.Sleep(10 * time.Second)
		base.streams.Peak.Store(base.streams.In.Load())
		time.Sleep(3 * time.Minute)
		peak := base.streams.Peak.Load()
		cancel()
		wg.Wait()
		if g := gradientOf(tr, "a.test"); peak < 4 {
			t.Logf("the gradient 3 min after the switch: drain %v, its end %v before", g.mDrain, switchAt.Add(3*time.Minute+10*time.Second).Sub(g.mEnd))
			t.Errorf("peak of streams in flight from 10 s to 3 min after the drain began %d, want 4: the limit stayed halved, minutes past the drain's 17 round trips, while no sample came to end it", peak)
		}
	})
}

// gradientOf returns a copy of the adaptive limit tr keeps for the
// origin http://host.
func gradientOf(tr *Transport, host string) gradient {
	k := originKey("http", host).m
	sh := tr.ceil.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.m[k]; e != nil && e.grad != nil {
		return *e.grad
	}
	return gradient{}
}

// firstQuick answers its first request in 10 ms (a redirect, say) and
// every other in 100 ms, whatever its load: the origin never queues. It
// counts the requests in flight after the first.
type firstQuick struct {
	mu    sync.Mutex
	first bool
	in    peakCounter
}

func (f *firstQuick) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	first := !f.first
	f.first = true
	f.mu.Unlock()
	if first {
		time.Sleep(10 * time.Millisecond)
	} else {
		f.in.Enter()
		time.Sleep(100 * time.Millisecond)
		f.in.Leave()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// Restraint.Adaptive's doc: "the origin's baseline is the mean latency of
// its first 64 responses". The first measurement ended at the first sample
// more than 10 minutes (gradMaxRTT) after the first one, whatever the
// count: a crawler that fetched one page, then came back 11 minutes later,
// had a baseline of 2 answers, one of them 11 minutes old. One quick first
// answer (10 ms) made the baseline 55 ms against an origin answering every
// later request in 100 ms, never queueing, and the limit fell from 4 to 1
// for the 5 minutes until the next measurement.
func TestAdaptiveFirstBaselineRestartsAfterIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &firstQuick{}
		tr := &Transport{Base: base, Restraint: &Restraint{Adaptive: true}} // limit 4
		req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(11 * time.Minute)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		wait := getUntil(ctx, tr, 8, "http://a.test/page")
		time.Sleep(30 * time.Second)
		base.in.Peak.Store(base.in.In.Load())
		wait()
		if p := base.in.Peak.Load(); p < 4 {
			g := gradientOf(tr, "a.test")
			t.Logf("baseline %v, limit %d", g.base, g.limit())
			t.Errorf("peak in flight over the last 30 s %d, want 4: the baseline was taken from 2 answers, not the first 64, and one quick answer made an origin that never queues look queued", p)
		}
	})
}
