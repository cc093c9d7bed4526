package polite_test

import (
	"cmp"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/ratelimittest"
)

var (
	scenarioTable = flag.Bool("scenarios", false, "print the scenario table")
	scenarioRuns  = flag.Int("scenarioruns", 12, "runs of each scenario whose server states nothing (-short: 3)")
)

// scenario is one server a batch of tasks runs against.
type scenario struct {
	name    string
	cfg     ratelimittest.Config
	tasks   int
	honest  bool    // states its limits: no refusals allowed
	minEff  float64 // efficiency floor
	maxPeak int     // most requests in flight allowed at the server; 0: any

	known      string           // why minEff is below 0.90 on an honest server, or a target is missed
	maxRefused float64          // refusals allowed, as a share of tasks (not honest servers)
	flip       time.Duration    // > 0: every other span this long, the server sends no rate-limit fields
	rename     int              // > 0: the policy "api" is named afresh every rename answers ("api1", "api2"...)
	shed       int              // > 0: one request in shed is refused with a bare 429, whatever the limits (a load balancer shedding load)
	shedStatus int              // the status of a shed request: 0 is 429
	shedRetry  string           // the Retry-After of a shed request; "": none
	down       [2]time.Duration // when down[1] > 0: from down[0] to down[1] into the run, every request gets a bare 503 (an upstream down behind a load balancer)
	slowRefuse bool             // refusals answer after cfg.Latency too, as over a network
	dateOff    time.Duration    // ≠ 0: every response's Date is this far off the server's clock, its rate-limit fields not (a Date in the wrong zone)
	unasserted string           // why the row is printed but not asserted
}

// The bounds asserted on servers that say little or lie, in the worst of
// -scenarioruns runs: at most 5% refused and an efficiency of 0.85. Rows
// that miss them assert looser bounds and say so in their note.
const (
	learnFloor    = 0.85
	learnRefusals = 0.05
)

func scenarios() []scenario {
	var out []scenario
	const latency = 5 * time.Millisecond
	algorithms := []ratelimittest.Algorithm{ratelimittest.FixedWindow, ratelimittest.SlidingLog, ratelimittest.SlidingWindow, ratelimittest.TokenBucket}
	dialects := []ratelimittest.Dialect{ratelimittest.IETF, ratelimittest.Draft06, ratelimittest.Draft07, ratelimittest.XRateLimitEpoch, ratelimittest.XRateLimitDelta, ratelimittest.GitHub, ratelimittest.OpenAI}
	for _, a := range algorithms {
		for _, d := range dialects {
			eff, why := 0.95, ""
			switch {
			case a == ratelimittest.SlidingWindow && d == ratelimittest.OpenAI:
				// OpenAI's reset is the time until the bucket is full
				// again; a sliding-window counter is full only two
				// windows after a burst.
				eff, why = 0.55, "OpenAI's reset is the time until the quota is whole again: two windows after a burst on a sliding-window counter"
			case a == ratelimittest.SlidingWindow && d != ratelimittest.IETF:
				// t is whole seconds, rounded up; a sliding-window counter
				// frees a slot every w/q, far less than a second here. A
				// draft-11 quota shows the counter by the low r of the
				// probe sent at its reset; a legacy one cannot.
				eff, why = 0.8, "t is whole seconds, rounded up, while the counter frees a request every w/q (0.2s): up to a second lost a window; nothing is refused, and a legacy r (maybe another window's) and reset (maybe a bucket's time to full) cannot show the counter as the draft-11 fields do"
			case a == ratelimittest.SlidingLog && (d == ratelimittest.XRateLimitEpoch || d == ratelimittest.GitHub):
				// An epoch reset is a whole second, rounded up: up to a
				// second lost in every 4-second cycle.
				eff, why = 0.8, "a sliding log's reset is its oldest start plus w, rounded up to the second: each burst a second late (w is not stated, so it cannot be reckoned from the starts)"
			}
			out = append(out, scenario{
				known: why,
				name:  string(a) + " 20/4s",
				cfg: ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Name: "api", Algorithm: a, Quota: 20, Window: 4 * time.Second}},
					Dialect:  d,
					Latency:  latency,
				},
				tasks: 200, honest: true, minEff: eff,
			})
		}
	}
	for _, d := range []ratelimittest.Dialect{ratelimittest.IETF, ratelimittest.Draft06, ratelimittest.XRateLimitDelta} {
		out = append(out, scenario{
			name: "two policies 10/1s+100/20s",
			cfg: ratelimittest.Config{
				Policies: []ratelimittest.Policy{
					{Name: "burst", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: time.Second},
					{Name: "hour", Algorithm: ratelimittest.FixedWindow, Quota: 100, Window: 20 * time.Second},
				},
				Dialect: d,
				Latency: latency,
			},
			tasks: 300, honest: true, minEff: 0.95,
		})
	}
	// Servers that say little, or lie: learned, not read.
	fixed := []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 20, Window: 4 * time.Second}}
	for _, a := range []ratelimittest.Algorithm{ratelimittest.FixedWindow, ratelimittest.TokenBucket} {
		pol := []ratelimittest.Policy{{Name: "api", Algorithm: a, Quota: 20, Window: 4 * time.Second}}
		out = append(out,
			scenario{name: string(a) + " 20/4s", cfg: ratelimittest.Config{Policies: pol, Dialect: ratelimittest.RetryAfterOnly, Latency: latency}, tasks: 200, minEff: learnFloor, maxRefused: learnRefusals},
			scenario{name: string(a) + " 20/4s", cfg: ratelimittest.Config{Policies: pol, Dialect: ratelimittest.Bare429, Latency: latency}, tasks: 200, minEff: learnFloor, maxRefused: learnRefusals},
		)
	}
	// The four rows above meet the targets, in 100 runs each: fixed
	// window up to 3 refused, 0.984 (Retry-After only) and 6, 0.939
	// (bare 429: a first step half way to the probe refused at 3.05s of a
	// window measured as 4.58s, 3.82s, drifts through the server's 4s
	// window and is refused after its trial, a refusal of a rate that
	// held, now cut without a pause); token bucket up to 7, 0.955 and 7,
	// 0.979.
	// The same fixed window without headers, its windows 0.9s into a
	// second: the first burst, sent 0.9s into a window, measures it as
	// 3.1s, and each learned window's probe fell in the window the last
	// burst spent until a refused probe lengthened the learned window
	// (12-13 refused in every run before; DESIGN.md, "a learned window's
	// lone probe refused with nothing to undo").
	out = append(out, scenario{
		name:  "fixed-window 20/4s, windows 0.9s into a second",
		cfg:   ratelimittest.Config{Policies: fixed, Dialect: ratelimittest.Bare429, Latency: latency, Phase: 900 * time.Millisecond},
		tasks: 200, minEff: learnFloor, maxRefused: learnRefusals,
	})
	out = append(out,
		scenario{name: "malformed fields 20/4s", cfg: ratelimittest.Config{Policies: fixed, Malformed: true, Latency: latency}, tasks: 200, minEff: learnFloor, maxRefused: learnRefusals},
		scenario{name: "inflated ×5000, enforces 20/1s", cfg: ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 20, Window: time.Second}},
			Inflate:  5000, Latency: latency,
		}, tasks: 200, minEff: learnFloor, maxRefused: learnRefusals},
		// The row above as over a network: ratelimittest answers refusals
		// at once, so the first refusal of a flight usually pauses the
		// key before the rest of the flight is granted. Here the flight
		// the ramp sends when 3 of the 20 are left goes out whole: while
		// a hinted key's ramp tripled each round trip (1, 4, 12, 36), 33
		// or more were refused in every run with 100 workers, and the row
		// was not asserted; doubling, it sends 16 into the 7 left. Its
		// ceiling is twice the target's, which it misses.
		scenario{name: "inflated ×5000, enforces 20/1s, slow refusals", cfg: ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 20, Window: time.Second}},
			Inflate:  5000, Latency: latency,
		}, slowRefuse: true, tasks: 200, minEff: learnFloor, maxRefused: 2 * learnRefusals,
			known: "refusals answer after the latency: the ramp, doubling, sends 16 into the 7 requests left of the first window, and the 7 acceptances, answered at the instant of the 9 refusals, let up to 8 more go before those are read: 12 to 19 refused (6 to 10%) in the worst of 12 runs over 40 sets (33 to 37 in every run while the ramp tripled)"},
		scenario{name: "flips honest/silent every 10s", cfg: ratelimittest.Config{Policies: fixed, Latency: latency}, flip: 10 * time.Second, tasks: 200, minEff: learnFloor, maxRefused: learnRefusals},
	)
	// A Date in the wrong zone: a server that writes its local time, five
	// hours behind or ahead, under "GMT", while its rate-limit fields are
	// right. Measured from that Date, an epoch or HTTP-date reset 4s away
	// read, behind, as 5h0m4s, and every task past the first window failed
	// with a WaitError (19 of 200 ok); ahead, as past, the quota whole
	// again, and each window cost a refusal or two (17 of 200). The same
	// with resets rounded down, as ulule/limiter and go-limiter send them,
	// which are past by the caller's clock by up to a second.
	for _, d := range []ratelimittest.Dialect{ratelimittest.GitHub, ratelimittest.XRateLimitEpoch, ratelimittest.XRateLimitDate} {
		down := ratelimittest.Config{Policies: fixed, Dialect: d, Latency: latency, ResetRounding: ratelimittest.RoundDown, Phase: 500 * time.Millisecond}
		for _, cfg := range []ratelimittest.Config{{Policies: fixed, Dialect: d, Latency: latency}, down} {
			// A reset rounded down is stated early, not honest: one
			// refusal, as with a right Date.
			sc := scenario{name: "fixed-window 20/4s, Date 5h ", cfg: cfg, tasks: 200, honest: true, minEff: 0.95}
			if cfg.ResetRounding == ratelimittest.RoundDown {
				sc.name, sc.honest, sc.maxRefused = "fixed-window 20/4s, reset rounded down, Date 5h ", false, 0.02
			}
			behind, ahead := sc, sc
			behind.name, behind.dateOff = sc.name+"behind", -5*time.Hour
			ahead.name, ahead.dateOff = sc.name+"ahead", 5*time.Hour
			out = append(out, behind, ahead)
		}
	}
	out = append(out, wildScenarios()...)
	out = append(out, scenario{
		name: "concurrency q=4",
		cfg: ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "conc", Algorithm: ratelimittest.Concurrency, Quota: 4}},
			Latency:  100 * time.Millisecond,
		},
		tasks: 200, honest: true, minEff: 0.95, maxPeak: 4,
	})
	return out
}

// result is what one run of a scenario measured.
type result struct {
	ok, refused, peak int
	took, ideal       time.Duration
}

func (r result) efficiency() float64 {
	if r.took <= 0 {
		return 1
	}
	return r.ideal.Seconds() / r.took.Seconds()
}

// scenarioServer moves a synctest bubble's clock to the present (it
// starts in 2000, before the epoch resets of parse's magnitude rule, 1e9 s
// in 2001) and returns sc's server: its handler, and the handler to serve
// through, which may wrap it.
func scenarioServer(sc scenario) (*ratelimittest.Handler, *shedder, http.Handler) {
	time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
	h := ratelimittest.NewHandler(sc.cfg)
	var srv http.Handler = h
	if sc.flip > 0 {
		srv = silentEvery(h, sc.flip)
	}
	if sc.rename > 0 {
		srv = renameEvery(srv, sc.rename)
	}
	shed := &shedder{h: srv, every: sc.shed, status: sc.shedStatus, retryAfter: sc.shedRetry}
	if sc.shed > 0 {
		srv = shed
	}
	if sc.slowRefuse {
		srv = refuseAfter(srv, sc.cfg.Latency)
	}
	if sc.down[1] > 0 {
		srv = downFor(srv, sc.down, shed)
	}
	if sc.dateOff != 0 {
		srv = dateOff(srv, sc.dateOff)
	}
	return h, shed, srv
}

// runScenario runs sc's tasks with workers goroutines through a fresh polite
// Transport in a synctest bubble, and measures them.
func runScenario(t *testing.T, sc scenario, workers int) result {
	var res result
	synctest.Test(t, func(t *testing.T) {
		h, shed, srv := scenarioServer(sc)
		c, _ := politeOver(srv)
		start := time.Now()
		statuses := run(t, c, "http://api.test/", sc.tasks, workers)
		res.took = time.Since(start)
		s := h.Stats()
		res.ok, res.refused, res.peak = statuses[http.StatusOK], s.Refused+shed.shed, s.PeakInFlight
	})
	res.ideal = scenarioIdeal(sc, workers)
	return res
}

// scenarioIdeal is how long a perfect client takes to serve sc's tasks
// with workers.
func scenarioIdeal(sc scenario, workers int) time.Duration {
	ideal := ratelimittest.Ideal(sc.cfg, sc.tasks, workers)
	ideal += sc.down[1] - sc.down[0] // a perfect client waits the outage out
	if sc.shed > 0 {
		// Shed in front of a limit: the slower of the two.
		ideal = max(ideal, shedIdeal(sc.tasks, workers, sc.shed, sc.cfg.Latency))
	}
	return ideal
}

// shedIdeal is how long a perfect client takes to serve tasks with
// workers from a server of no limit that answers in latency and refuses
// one request in every at once (a shedder): each refused request waits
// the refusal floor before it is sent again, as polite's do, while the
// other workers go on.
func shedIdeal(tasks, workers, every int, latency time.Duration) time.Duration {
	free := make([]time.Duration, max(workers, 1)) // when each worker may send next
	owes := make([]bool, len(free))                // its task was refused: it sends it again
	n, end := 0, time.Duration(0)
	for {
		i := -1
		for j := range free {
			if (owes[j] || tasks > 0) && (i < 0 || free[j] < free[i]) {
				i = j
			}
		}
		if i < 0 {
			return end
		}
		if !owes[i] {
			tasks--
		}
		if n++; n%every == 0 {
			free[i], owes[i] = free[i]+control.RefusalFloor, true // refused at once; sent again after the floor
			continue
		}
		free[i], owes[i] = free[i]+latency, false
		end = max(end, free[i])
	}
}

// TestScenarios runs polite against every server of the table with 16 and
// 100 workers: every task must succeed; an honest server must refuse
// nothing, and polite must finish nearly as fast as a perfect client. A
// server that states nothing (or lies) is run -scenarioruns times, since
// the fallback backoff is random: the worst run must stay within the
// row's refusal ceiling and efficiency floor; the table shows the worst
// and the median. Run with -scenarios -v to print the table. The rows run
// in parallel: each is a bubble of its own, on its own clock.
func TestScenarios(t *testing.T) {
	var rows []string // the table's, in the order of the loop
	var table strings.Builder
	fmt.Fprintf(&table, "\n| server | dialect | workers | tasks | runs | ok | refused (worst) | peak in flight | polite (worst) | ideal | efficiency worst / median | note |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, sc := range scenarios() {
		for _, workers := range []int{16, 100} {
			dialect := sc.cfg.Dialect
			if dialect == "" {
				dialect = ratelimittest.IETF
			}
			name := fmt.Sprintf("%s/%s/%d", sc.name, dialect, workers)
			row := len(rows)
			rows = append(rows, "") // written by the subtest, which runs after the loop
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runs := 1
				if !sc.honest && sc.unasserted == "" {
					runs = max(1, *scenarioRuns)
					if testing.Short() {
						runs = min(runs, 3)
					}
				}
				var (
					effs      []float64
					worst     result
					refusedHi int
				)
				for i := range runs {
					r := runScenario(t, sc, workers)
					effs = append(effs, r.efficiency())
					if i == 0 || r.efficiency() < worst.efficiency() {
						worst = r
					}
					refusedHi = max(refusedHi, r.refused)
					if r.ok != sc.tasks {
						t.Errorf("run %d: %d of %d tasks ok", i, r.ok, sc.tasks)
					}
					if sc.maxPeak > 0 && r.peak > sc.maxPeak {
						t.Errorf("run %d: peak in flight %d, want ≤ %d", i, r.peak, sc.maxPeak)
					}
				}
				slices.Sort(effs)
				median := effs[len(effs)/2]
				rows[row] = fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %d | %d | %v | %v | %.3f / %.3f | %s |\n",
					sc.name, dialect, workers, sc.tasks, runs, worst.ok, refusedHi, worst.peak, worst.took.Round(time.Millisecond), worst.ideal.Round(time.Millisecond), effs[0], median, sc.known+sc.unasserted)
				if sc.unasserted != "" {
					t.Skipf("not asserted: %s", sc.unasserted)
				}
				if sc.honest && refusedHi != 0 {
					t.Errorf("%d requests refused, want 0", refusedHi)
				}
				// The ceiling asserted is the row's target with room for
				// the scatter of its random backoff, so that only a
				// regression fails the build; the table prints the run's
				// own figures against the target. The race detector
				// interleaves goroutines otherwise: more requests are in
				// flight when a refusal comes, and are refused with it.
				ceiling := sc.maxRefused * 1.5
				if raceEnabled {
					ceiling = sc.maxRefused * 3
				}
				if !sc.honest && float64(refusedHi) > ceiling*float64(sc.tasks) {
					t.Errorf("%d requests refused in the worst of %d runs, want at most %.0f%% of %d tasks", refusedHi, runs, 100*ceiling, sc.tasks)
				}
				if e := effs[0]; e < sc.minEff {
					t.Errorf("efficiency %.3f in the worst of %d runs (took %v, ideal %v), want ≥ %.2f", e, runs, worst.took, worst.ideal, sc.minEff)
				}
			})
		}
	}
	if *scenarioTable {
		t.Cleanup(func() { // after every row's subtest
			for _, r := range rows {
				table.WriteString(r)
			}
			t.Log(table.String())
		})
	}
}

// silentEvery wraps h so that every other span of d (the first one honest)
// its responses carry no rate-limit fields at all: a server that flips
// between stating its limits and saying nothing.
func silentEvery(h http.Handler, d time.Duration) http.Handler {
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (time.Since(start)/d)%2 == 0 {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&stripper{ResponseWriter: w}, r)
	})
}

// shedder refuses one request in every before h sees it, whatever h's
// limits: a load balancer shedding load. Its refusal is a bare 429, or
// status with Retry-After retryAfter when set. shed counts them.
type shedder struct {
	h          http.Handler
	every      int
	status     int
	retryAfter string
	mu         sync.Mutex
	n          int
	shed       int
}

func (s *shedder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.n++
	refuse := s.every > 0 && s.n%s.every == 0
	if refuse {
		s.shed++
	}
	s.mu.Unlock()
	if refuse {
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.WriteHeader(cmp.Or(s.status, http.StatusTooManyRequests))
		return
	}
	s.h.ServeHTTP(w, r)
}

// downFor wraps h so that every request from down[0] to down[1] after its
// creation gets a bare 503 before h sees it, counted in s.shed: an
// outage.
func downFor(h http.Handler, down [2]time.Duration, s *shedder) http.Handler {
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := time.Since(start); d >= down[0] && d < down[1] {
			s.mu.Lock()
			s.shed++
			s.mu.Unlock()
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// refuseAfter wraps h so that its refusals (429 and 503) answer after d,
// as admitted requests do after Config.Latency: a refusal crosses the
// network too.
func refuseAfter(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&lateRefusal{ResponseWriter: w, r: r, d: d}, r)
	})
}

// lateRefusal holds back a refusal's status line for d.
type lateRefusal struct {
	http.ResponseWriter
	r *http.Request
	d time.Duration
}

func (l *lateRefusal) WriteHeader(code int) {
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		t := time.NewTimer(l.d)
		select {
		case <-t.C:
		case <-l.r.Context().Done():
			t.Stop()
		}
	}
	l.ResponseWriter.WriteHeader(code)
}

// Flush passes a flush on, for handlers that stream their bodies.
func (l *lateRefusal) Flush() { http.NewResponseController(l.ResponseWriter).Flush() }

// Unwrap returns the ResponseWriter wrapped, for http.ResponseController.
func (l *lateRefusal) Unwrap() http.ResponseWriter { return l.ResponseWriter }

// stripper drops every rate-limit field from what a handler writes.
// renameEvery wraps h so that the policy "api" of its rate-limit fields is
// named afresh every n answers: "api1", "api2"... as a server that puts
// its window's number in the name.
func renameEvery(h http.Handler, n int) http.Handler {
	var answers atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := fmt.Sprintf(`"api%d"`, answers.Add(1)/int64(n))
		h.ServeHTTP(&rewriter{ResponseWriter: w, fix: func(hd http.Header) {
			for k, vs := range hd {
				if strings.HasPrefix(strings.ToLower(k), "ratelimit") {
					for i, v := range vs {
						vs[i] = strings.ReplaceAll(v, `"api"`, name)
					}
				}
			}
		}}, r)
	})
}

// rewriter calls fix on the header it writes, once, before it is sent.
type rewriter struct {
	http.ResponseWriter
	fix  func(http.Header)
	done bool
}

func (w *rewriter) once() {
	if !w.done {
		w.done = true
		w.fix(w.Header())
	}
}

func (w *rewriter) WriteHeader(code int)        { w.once(); w.ResponseWriter.WriteHeader(code) }
func (w *rewriter) Write(b []byte) (int, error) { w.once(); return w.ResponseWriter.Write(b) }

type stripper struct{ http.ResponseWriter }

func (s *stripper) strip() {
	for k := range s.Header() {
		if l := strings.ToLower(k); strings.Contains(l, "ratelimit") || strings.Contains(l, "rate-limit") || l == "retry-after" {
			s.Header().Del(k)
		}
	}
}

func (s *stripper) WriteHeader(code int) { s.strip(); s.ResponseWriter.WriteHeader(code) }

func (s *stripper) Write(b []byte) (int, error) { s.strip(); return s.ResponseWriter.Write(b) }

// dateOff wraps h so that the Date of its responses is off by d, and
// nothing else: a server writing its local time under "GMT".
func dateOff(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&rewriter{ResponseWriter: w, fix: func(hdr http.Header) {
			if t, err := http.ParseTime(hdr.Get("Date")); err == nil {
				hdr.Set("Date", t.Add(d).Format(http.TimeFormat))
			}
		}}, r)
	})
}
