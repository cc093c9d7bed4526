package polite

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

var gradT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// gradStep observes one response at gradT0+at and checks the limit after it.
type gradStep struct {
	at       time.Duration
	rtt      time.Duration
	inflight int
	want     int
}

// measured returns a gradient whose baseline was measured at base, as of
// gradT0.
func measured(initial, maxLim int, base time.Duration) gradient {
	g := newGradient(initial, maxLim)
	g.srtt, g.base, g.last = base, base, gradT0
	return g
}

func TestGradientSteps(t *testing.T) {
	tests := []struct {
		name    string
		initial int
		maxLim  int
		steps   []gradStep
	}{
		{
			name: "grows by one a round trip while latency is at its baseline", initial: 4, maxLim: 64,
			steps: []gradStep{
				{0, ms(50), 4, 5},          // the first round trip
				{ms(10), ms(50), 5, 5},     // within the same round trip: no decision
				{ms(50), ms(50), 5, 6},     // the next one
				{ms(100), ms(50), 6, 7},    //
				{ms(150), ms(50), 7, 8},    //
				{ms(160), ms(50), 8, 8},    //
				{ms(200), ms(50), 8, 9},    //
				{ms(250), ms(50), 100, 10}, // by one, however many are in flight
			},
		},
		{
			name: "does not grow while the client sends less than half of it", initial: 10, maxLim: 64,
			steps: []gradStep{
				{0, ms(50), 4, 10},
				{ms(50), ms(50), 4, 10},
				{ms(100), ms(50), 5, 11},
			},
		},
		{
			name: "stops at maxLim", initial: 3, maxLim: 4,
			steps: []gradStep{
				{0, ms(50), 3, 4},
				{ms(50), ms(50), 4, 4},
			},
		},
		{
			name: "holds between 1.25 and 1.5 times the baseline", initial: 10, maxLim: 64,
			steps: []gradStep{
				{0, ms(50), 10, 11},
				// srtt = 50 + (170-50)/8 = 65ms: 1.3 times the baseline.
				{ms(50), ms(170), 11, 11},
				// srtt = 65 + (81-65)/8 = 67ms: 1.34.
				{ms(120), ms(81), 11, 11},
			},
		},
		{
			name: "comes down a quarter of the way to what the origin serves without queueing, plus half", initial: 20, maxLim: 64,
			steps: []gradStep{
				{0, ms(50), 20, 21},
				// srtt = 50 + (2450-50)/8 = 350ms: 7 times the baseline.
				// The origin serves 20/7 of the 20 at once: 20/7·1.5 = 4;
				// 21 - (21-4)/4 = 17.
				{ms(50), ms(2450), 20, 17},
				// Within the same round trip (350ms): no decision.
				{ms(100), ms(350), 20, 17},
				// 17·1.5/7 = 3; 17 - (17-3)/4 = 14.
				{ms(400), ms(350), 17, 14},
			},
		},
		{
			name: "comes down by one at least", initial: 20, maxLim: 64,
			steps: []gradStep{
				{0, ms(50), 20, 21},
				// srtt = 50 + (450-50)/8 = 100ms: twice the baseline.
				// 20·1.5/2 = 15; (21-15)/4 = 1.
				{ms(50), ms(450), 20, 20},
				// 20·1.5/2 = 15; (20-15)/4 = 1.
				{ms(150), ms(100), 20, 19},
			},
		},
		{
			name: "never below one", initial: 1, maxLim: 64,
			steps: []gradStep{
				{0, ms(50), 1, 2},
				{ms(50), ms(5000), 1, 1},
				{ms(1000), ms(5000), 1, 1},
			},
		},
		{
			name: "zero and absurd latencies", initial: 4, maxLim: 8,
			steps: []gradStep{
				{0, 0, 4, 5},                     // read as 1ns
				{time.Second, -time.Hour, 5, 6},  // likewise
				{2 * time.Second, 1 << 62, 6, 5}, // read as 10 minutes
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := measured(tt.initial, tt.maxLim, ms(50))
			for i, s := range tt.steps {
				g.observe(gradT0.Add(s.at), s.rtt, s.inflight)
				if got := g.limit(); got != s.want {
					t.Fatalf("step %d: observe(t0+%v, %v, %d): limit() = %d, want %d (srtt %v)", i, s.at, s.rtt, s.inflight, got, s.want, g.srtt)
				}
			}
		})
	}
}

func TestGradientFirstMeasurement(t *testing.T) {
	g := newGradient(4, 64)
	now := gradT0
	for i := range gradMeasureN {
		now = now.Add(ms(20))
		g.observe(now, ms(40+float64(i%2)*20), 4) // 40, 60, 40, ...: mean 50
		if g.base == 0 {
			t.Fatalf("after %d responses: no baseline yet, want the mean so far", i+1)
		}
		if i < gradMeasureN-1 && g.limit() != 4 {
			t.Fatalf("after %d responses: limit() = %d, want the initial 4 until the baseline is measured", i+1, g.limit())
		}
	}
	if g.base != ms(50) || !g.mEnd.IsZero() {
		t.Errorf("baseline after %d responses = %v (measuring %v), want their mean 50ms, measured", gradMeasureN, g.base, !g.mEnd.IsZero())
	}
	if got := g.limit(); got != 5 {
		t.Errorf("limit() = %d after the first measurement, want 5", got)
	}
}

// Every measurement after the first drains, even with the latency near
// the baseline: measured at the limit reached, it would take whatever
// queueing that limit makes for the baseline.
func TestGradientMeasurementDrains(t *testing.T) {
	g := measured(8, 64, ms(50))
	now := gradT0
	drained := false
	for now.Sub(gradT0) < gradProbeEvery+time.Second {
		now = now.Add(ms(10))
		g.observe(now, ms(48), 3) // a light load, near the baseline
		if g.mDrain {
			drained = true
			if got := g.limit(); got != 4 {
				t.Fatalf("at t0+%v: limit() = %d during the drain, want 8/2", now.Sub(gradT0), got)
			}
		}
	}
	if !drained || g.base != ms(48) || g.last.Before(gradT0.Add(gradProbeEvery)) {
		t.Errorf("drained %v, baseline %v measured at t0+%v; want 48ms measured in a drain after 5 minutes", drained, g.base, g.last.Sub(gradT0))
	}
	if got := g.limit(); got != 8 {
		t.Errorf("limit() = %d after the measurement, want 8 again", got)
	}
}

func TestGradientDrain(t *testing.T) {
	g := measured(11, 64, ms(50))
	now := gradT0
	step := func(rtt time.Duration) {
		now = now.Add(ms(10))
		g.observe(now, rtt, g.limit())
	}
	// At 1.3 times the baseline, the limit settles and holds.
	for now.Sub(gradT0) < time.Minute {
		step(ms(65))
	}
	lim := g.limit()
	for !g.mDrain && now.Sub(gradT0) < 10*time.Minute {
		step(ms(65))
		if !g.mDrain && g.limit() != lim {
			t.Fatalf("at t0+%v: limit() = %d, want it to hold at %d", now.Sub(gradT0), g.limit(), lim)
		}
	}
	// Five minutes after the baseline was measured, a drain halves the
	// limit, to gradLight at most.
	if d := now.Sub(gradT0); d < gradProbeEvery || d > gradProbeEvery+time.Second {
		t.Fatalf("drain at t0+%v, want 5 minutes after the baseline was measured", d)
	}
	if got, want := g.limit(), min(lim/2, gradLight); got != want {
		t.Fatalf("during the drain: limit() = %d, want %d (half of %d, at most %d)", got, want, lim, gradLight)
	}
	// With less load, the origin answers in 45ms: that is the new
	// baseline, and the limit is back.
	start := now
	for g.mDrain && now.Sub(start) < time.Minute {
		step(ms(45))
	}
	if got := now.Sub(start); got > 2*time.Second {
		t.Errorf("drain lasted %v, want it over after %d responses", got, gradMeasureN)
	}
	if g.base != ms(45) {
		t.Errorf("baseline after the drain = %v, want 45ms", g.base)
	}
	if got := g.limit(); got < lim {
		t.Errorf("after the drain: limit() = %d, want at least %d", got, lim)
	}
}

// A drain that gets fewer than gradMeasureMin answers (a client sending
// in small bursts: here 4 a drain, one at a time) keeps them for the next:
// ended with its own only, every drain of such a client measured nothing,
// and a baseline taken before the origin slowed for good held the limit
// at 1 for as long as the client ran.
func TestGradientShortDrainsAddUp(t *testing.T) {
	g := measured(4, 4, ms(50))
	shortDrain(&g, gradProbeEvery+time.Second, 4, ms(200))
	if g.base != ms(50) || g.cN != 4 || g.mDrain {
		t.Fatalf("after one drain of 4 answers: baseline %v, %d answers kept, draining %v; want 50ms still, 4 kept, ended", g.base, g.cN, g.mDrain)
	}
	shortDrain(&g, 2*gradProbeEvery+2*time.Minute, 4, ms(200))
	if g.base != ms(200) || g.cN != 0 {
		t.Errorf("after a second drain of 4 answers: baseline %v, %d answers kept; want 200ms, measured from the 8", g.base, g.cN)
	}
}

// shortDrain has g drain once with n answers of rtt, one at a time: the
// drain starts at gradT0+from, at least gradProbeEvery after g's last
// measurement, and ends by its time. It returns the drain's end.
func shortDrain(g *gradient, from time.Duration, n int, rtt time.Duration) time.Time {
	at := gradT0.Add(from)
	g.observe(at, rtt, 1) // starts the drain
	for range n {
		at = at.Add(rtt)
		g.observe(at, rtt, 1)
	}
	at = at.Add(time.Minute)
	g.expire(at)
	return at
}

// steady has the client send g.limit() requests a round trip of rtt,
// from *at until end.
func steady(g *gradient, at *time.Time, end time.Time, rtt time.Duration) {
	for at.Before(end) {
		*at = at.Add(rtt)
		n := g.limit()
		for range n {
			g.observe(*at, rtt, n)
		}
		g.expire(*at)
	}
}

// The answers kept from short drains make up a drain's shortfall only: a
// drain with enough of its own is measured by them alone. Mixed in, 7
// answers at 50ms kept from before an origin slowed for good to 500ms
// (never queueing) made the next drain's 17 at 500ms a baseline of 369ms:
// the ratio held at 1.36, and the limit at 1, where the old baseline had
// cut it.
func TestGradientShortDrainFreshMeasurementAlone(t *testing.T) {
	g := measured(8, 8, ms(50))
	at := shortDrain(&g, gradProbeEvery+time.Second, 7, ms(50))
	steady(&g, &at, at.Add(gradProbeEvery+time.Minute), ms(500)) // slower for good, through the next drain
	if g.base != ms(500) || g.cN != 0 {
		t.Errorf("after a drain of 500ms answers: baseline %v, %d kept; want 500ms, none", g.base, g.cN)
	}
	steady(&g, &at, at.Add(4*time.Minute), ms(500))
	if got := g.limit(); got < 4 {
		t.Errorf("limit() = %d 4 minutes later, against an origin that never queues; want it grown", got)
	}
}

// The answers kept from short drains are dropped once no drain added to
// them for gradCarryFor: kept, 7 answers at 500ms, three hours old, made
// a baseline of 99ms with 57 fresh at 50ms, and queueing at twice the
// origin's latency looked calm.
func TestGradientShortDrainAnswersExpire(t *testing.T) {
	g := measured(8, 8, ms(500))
	at := shortDrain(&g, gradProbeEvery+time.Second, 7, ms(500))
	last := g.last
	shortDrain(&g, at.Add(3*time.Hour).Sub(gradT0), 4, ms(50))
	if g.last == last || g.base != ms(500) || g.cN != 4 {
		t.Errorf("after a short drain 3 hours later: baseline %v, %d kept; want 500ms still, the 4 fresh only", g.base, g.cN)
	}
}

// A drain counts the answers to requests sent from its start with no more
// in flight than its limit, however long the smoothed latency: started
// one smoothed round trip later, a drain that began as answers stalled
// for minutes came back (the smoothed latency at 34s) kept the limit
// halved for 37s, some 700 of the origin's round trips.
func TestGradientDrainAfterStall(t *testing.T) {
	g := measured(4, 4, ms(50))
	at := gradT0.Add(gradProbeEvery + time.Second)
	g.observe(at, 270*time.Second, 4) // stalled since t0+30s
	if !g.mDrain || g.srtt < 30*time.Second {
		t.Fatalf("after a stalled answer: draining %v, srtt %v; want a drain, srtt above 30s", g.mDrain, g.srtt)
	}
	start := at
	for range 3 { // the other stalled answers, sent before the drain
		g.observe(at, 270*time.Second, 4)
	}
	g.observe(at.Add(ms(50)), ms(50), 3) // more in flight than the drain's 2
	if g.cN != 0 {
		t.Fatalf("%d answers counted; want none of requests sent before the drain or above its limit", g.cN)
	}
	for g.mDrain && at.Sub(start) < time.Minute {
		at = at.Add(ms(25))
		g.observe(at, ms(50), 2)
	}
	if d := at.Sub(start); d > 2*time.Second || g.base != ms(50) {
		t.Errorf("drain lasted %v, baseline %v; want over after %d answers (1.6s), at 50ms", d, g.base, gradMeasureN)
	}
	if got := g.limit(); got != 4 {
		t.Errorf("after the drain: limit() = %d, want 4 again", got)
	}
}

func TestGradientSlowerForGoodSteps(t *testing.T) {
	g := measured(12, 64, ms(50))
	now := gradT0
	for now.Sub(gradT0) < time.Minute {
		now = now.Add(ms(10))
		g.observe(now, ms(100), g.limit())
	}
	if got := g.limit(); got != 1 {
		t.Fatalf("after a minute at twice the baseline: limit() = %d, want 1", got)
	}
	for now.Sub(gradT0) < 6*time.Minute {
		now = now.Add(ms(10))
		g.observe(now, ms(100), g.limit())
	}
	if g.base != ms(100) {
		t.Errorf("after 6 minutes at 100ms: baseline %v, want 100ms", g.base)
	}
	if got := g.limit(); got < 4 {
		t.Errorf("after 6 minutes at 100ms: limit() = %d, want it growing again", got)
	}
}

func TestGradientNoAllocs(t *testing.T) {
	g := newGradient(4, 64)
	now := gradT0
	allocs := testing.AllocsPerRun(1000, func() {
		now = now.Add(ms(7))
		g.observe(now, ms(50)+time.Duration(now.UnixNano()%int64(ms(30))), 8)
		_ = g.limit()
	})
	if allocs != 0 {
		t.Errorf("observe allocates %v times, want 0", allocs)
	}
}

func BenchmarkGradientObserve(b *testing.B) {
	g := newGradient(4, 64)
	now := gradT0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now = now.Add(time.Millisecond)
		g.observe(now, ms(50)+time.Duration(i%20)*time.Millisecond, 8)
	}
}

// simResult is what one simulated run measured.
type simResult struct {
	served     int
	median     time.Duration
	throughput float64 // requests served a second
	peakLimit  int
}

// simulate runs clients that always have a request to send against a
// server with workers workers serving in arrival order, each request
// taking service(); a request is sent only while fewer than limit() are
// in flight. Responses observed by observe. It measures the requests that
// finish between from and to after the start.
func simulate(clients, workers int, service func(now time.Time) time.Duration, limit func() int, observe func(now time.Time, rtt time.Duration, inflight int), from, to time.Duration) simResult {
	type req struct {
		sent, done time.Time
		inflight   int
	}
	free := make([]time.Time, workers) // when each worker is next free
	var flight []req
	now := gradT0
	idle := clients
	var lat []time.Duration
	res := simResult{}
	send := func() {
		for idle > 0 && len(flight) < limit() {
			w := 0
			for i := range free {
				if free[i].Before(free[w]) {
					w = i
				}
			}
			start := now
			if free[w].After(start) {
				start = free[w]
			}
			free[w] = start.Add(service(now))
			flight = append(flight, req{sent: now, done: free[w], inflight: len(flight) + 1})
			idle--
		}
		res.peakLimit = max(res.peakLimit, limit())
	}
	send()
	for now.Sub(gradT0) < to && len(flight) > 0 {
		next := 0
		for i := range flight {
			if flight[i].done.Before(flight[next].done) {
				next = i
			}
		}
		r := flight[next]
		flight = slices.Delete(flight, next, next+1)
		now = r.done
		idle++
		if observe != nil {
			observe(now, r.done.Sub(r.sent), r.inflight)
		}
		if d := now.Sub(gradT0); d >= from && d < to {
			lat = append(lat, r.done.Sub(r.sent))
		}
		send()
	}
	slices.Sort(lat)
	res.served = len(lat)
	if len(lat) > 0 {
		res.median = lat[(len(lat)-1)/2]
	}
	res.throughput = float64(res.served) / (to - from).Seconds()
	return res
}

// TestGradientSimulation drives the gradient against a simulated server of
// 8 workers of 50ms each (160 requests a second), with 64 clients that
// always have a request to send, and compares it with no limit.
func TestGradientSimulation(t *testing.T) {
	t.Parallel() // a simulation on its own clock: only the CPU is shared
	const (
		clients  = 64
		workers  = 8
		capacity = workers / 0.050 // requests a second
	)
	baseline := ms(50)
	fixed := func(time.Time) time.Duration { return baseline }
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := func(time.Time) time.Duration { return ms(25 + 50*rng.Float64()) } // mean 50ms
	expo := func(time.Time) time.Duration { return time.Duration(rng.ExpFloat64() * float64(baseline)) }
	tests := []struct {
		name     string
		service  func(time.Time) time.Duration
		from, to time.Duration
	}{
		{"fixed service time, 10s", fixed, time.Second, 10 * time.Second},
		{"service time 25-75ms, 10s", noisy, time.Second, 10 * time.Second},
		{"fixed service time, last 10 of 30 minutes", fixed, 20 * time.Minute, 30 * time.Minute},
		{"service time 25-75ms, last 10 of 30 minutes", noisy, 20 * time.Minute, 30 * time.Minute},
		{"service time exponential, mean 50ms, last 10 of 30 minutes", expo, 20 * time.Minute, 30 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGradient(4, clients)
			with := simulate(clients, workers, tt.service, g.limit, g.observe, tt.from, tt.to)
			without := simulate(clients, workers, tt.service, func() int { return clients }, nil, tt.from, tt.to)
			t.Logf("with the gradient:    median %v (%.2f× baseline), %.1f req/s (%.2f of capacity), limit at most %d, final %d",
				with.median, float64(with.median)/float64(baseline), with.throughput, with.throughput/capacity, with.peakLimit, g.limit())
			t.Logf("without (64 in flight): median %v (%.2f× baseline), %.1f req/s (%.2f of capacity)",
				without.median, float64(without.median)/float64(baseline), without.throughput, without.throughput/capacity)
			if with.median > 2*baseline {
				t.Errorf("with the gradient: median latency %v, want at most 2× the baseline %v", with.median, baseline)
			}
			if with.throughput < 0.8*capacity {
				t.Errorf("with the gradient: %.1f req/s, want at least 0.8 of the capacity %.0f", with.throughput, capacity)
			}
			if without.median < 4*baseline {
				t.Errorf("without the gradient: median latency %v, want it to grow with the queue (at least 4× %v)", without.median, baseline)
			}
		})
	}
}

// TestGradientSlowerForGood checks that an origin whose service time
// doubles for good gets its throughput back once the old baseline ages
// out, rather than a limit stuck at the bottom.
func TestGradientSlowerForGood(t *testing.T) {
	const clients, workers = 64, 8
	service := func(now time.Time) time.Duration {
		if now.Sub(gradT0) < 10*time.Minute {
			return ms(50)
		}
		return ms(100) // 80 requests a second
	}
	g := newGradient(4, clients)
	res := simulate(clients, workers, service, g.limit, g.observe, 25*time.Minute, 35*time.Minute)
	t.Logf("after the slowdown: median %v, %.1f req/s, limit %d", res.median, res.throughput, g.limit())
	if res.throughput < 0.8*80 {
		t.Errorf("%.1f req/s after the origin slowed down for good, want at least 0.8 of its new capacity 80", res.throughput)
	}
	if res.median > 2*ms(100) {
		t.Errorf("median %v, want at most twice the new baseline 100ms", res.median)
	}
}

// TestGradientQueueServer runs 64 workers for 10 seconds against
// ratelimittest's queue server (8 workers of 50ms: 160 requests a second)
// in a synctest bubble, with the gradient bounding the requests in flight
// and without.
func TestGradientQueueServer(t *testing.T) {
	const clients = 64
	for _, adaptive := range []bool{true, false} {
		name := "without the gradient"
		if adaptive {
			name = "with the gradient"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := ratelimittest.NewQueueHandler(ratelimittest.QueueConfig{QueueLen: 4 * clients})
				tr := &ratelimittest.Transport{Handler: h}
				var (
					mu       sync.Mutex
					g        = newGradient(4, clients)
					inflight int
					freed    = make(chan struct{})
				)
				acquire := func() int {
					for {
						mu.Lock()
						lim := clients
						if adaptive {
							lim = g.limit()
						}
						if inflight < lim {
							inflight++
							n := inflight
							mu.Unlock()
							return n
						}
						ch := freed
						mu.Unlock()
						<-ch
					}
				}
				release := func(rtt time.Duration, n int) {
					mu.Lock()
					defer mu.Unlock()
					inflight--
					if adaptive {
						g.observe(time.Now(), rtt, n)
					}
					close(freed)
					freed = make(chan struct{})
				}
				end := time.Now().Add(10 * time.Second)
				var wg sync.WaitGroup
				for range clients {
					wg.Go(func() {
						for time.Now().Before(end) {
							n := acquire()
							sent := time.Now()
							req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://q.example/", nil)
							resp, err := tr.RoundTrip(req)
							if err != nil {
								t.Error(err)
								return
							}
							resp.Body.Close()
							release(time.Since(sent), n)
						}
					})
				}
				wg.Wait()
				st := h.Stats()
				if adaptive {
					t.Logf("gradient: limit %d, srtt %v, baseline %v", g.limit(), g.srtt, g.base)
				}
				hist := map[time.Duration]int{}
				for _, l := range st.Latencies {
					hist[l.Round(10*time.Millisecond)]++
				}
				t.Logf("latencies: %v", hist)
				t.Logf("median latency %v, %.1f req/s (%.2f of capacity), %d served, %d refused, peak queue %d",
					st.Median(), st.Throughput(), st.Throughput()/h.Capacity(), st.Served, st.Refused, st.PeakQueue)
				switch {
				case adaptive && (st.Median() > 100*time.Millisecond || st.Throughput() < 0.8*h.Capacity()):
					t.Errorf("median %v at %.1f req/s, want at most 2× 50ms at 0.8 of %v", st.Median(), st.Throughput(), h.Capacity())
				case !adaptive && st.Median() < 200*time.Millisecond:
					t.Errorf("median %v without the gradient, want it to grow with the queue", st.Median())
				}
				if st.Refused != 0 {
					t.Errorf("%d refused, want 0", st.Refused)
				}
			})
		})
	}
}
