package polite_test

import (
	"flag"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

var (
	traceRow     = flag.String("tracerow", "", "print, as the server saw it, the worst of -traceruns runs of the first scenario row (of TestScenarios, then of TestStreamingScenarios) whose name, a space and its dialect hold this string (\"fixed-window 20/4s bare\")")
	traceWorkers = flag.Int("traceworkers", 16, "with -tracerow, workers of each run")
	traceRuns    = flag.Int("traceruns", 1, "with -tracerow, runs to choose the worst from")
	traceBy      = flag.String("traceby", "refused", `with -tracerow, what makes a run the worst: "refused" (most refusals) or "eff" (lowest efficiency)`)
	tracePhase   = flag.Duration("tracephase", 0, "with -tracerow, the server's windows this far into a second (ratelimittest.Config.Phase), as in -phasesweep")
	traceStart   = flag.Duration("tracestart", 0, "with -tracerow, start each run this far into a second, as -phasesweep starts its runs (37ms, 137ms, ...)")
)

// TestTraceRow prints what the server saw in the worst of -traceruns runs
// of one scenario row: each instant a request arrived, from the run's
// start, with how many arrived then and the status they got. It shows
// where a learned quota's refusals come from (the first burst, a step of
// growth, a burst after a pause) and how fast it grows:
//
//	go test -count=1 -run TestTraceRow -tracerow nginx -traceruns 100 .
func TestTraceRow(t *testing.T) {
	if *traceRow == "" {
		t.Skip("no -tracerow")
	}
	for _, sc := range append(scenarios(), streamScenarios()...) {
		if !strings.Contains(sc.name+" "+string(sc.cfg.Dialect), *traceRow) {
			continue
		}
		if *tracePhase > 0 {
			sc.cfg.Phase = *tracePhase
		}
		worst, score := "", -1.0
		for range max(*traceRuns, 1) {
			trace, s := traceScenario(t, sc, *traceWorkers)
			if s > score {
				worst, score = trace, s
			}
		}
		t.Log("\n" + worst)
		return
	}
	t.Fatalf("no scenario row holds %q", *traceRow)
}

// traceScenario runs sc once, as runScenario does, and returns the
// server's view of it and how bad the run was by -traceby (higher is
// worse).
func traceScenario(t *testing.T, sc scenario, workers int) (string, float64) {
	var (
		out   strings.Builder
		score float64
	)
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) + *traceStart)
		h, _, srv := scenarioServer(sc)
		type arrival struct {
			at   time.Duration
			code int
		}
		var (
			mu       sync.Mutex
			arrivals []arrival
		)
		start := time.Now()
		traced := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			at := time.Since(start)
			rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
			srv.ServeHTTP(rec, r)
			mu.Lock()
			arrivals = append(arrivals, arrival{at, rec.code})
			mu.Unlock()
		})
		c, _ := politeOver(traced)
		statuses, longest := runLongest(t, c, "http://api.test/", sc.tasks, workers)
		took := time.Since(start)
		ideal := ratelimittest.Ideal(sc.cfg, sc.tasks, workers)
		refused := h.Stats().Refused
		fmt.Fprintf(&out, "%s, %d workers: statuses %v, took %v, ideal %v, efficiency %.3f, refused %d, longest task %v\n",
			sc.name, workers, statuses, took, ideal, ideal.Seconds()/took.Seconds(), refused, longest)
		fmt.Fprintf(&out, "%10s %5s %s\n", "arrived", "count", "status")
		for i := 0; i < len(arrivals); {
			j := i + 1
			for j < len(arrivals) && arrivals[j] == arrivals[i] {
				j++
			}
			fmt.Fprintf(&out, "%9.3fs %5d %d\n", arrivals[i].at.Seconds(), j-i, arrivals[i].code)
			i = j
		}
		score = float64(refused)
		if *traceBy == "eff" {
			score = took.Seconds() / ideal.Seconds()
		}
	})
	return out.String(), score
}

// statusRecorder notes the status a handler writes.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }

// Unwrap returns the ResponseWriter wrapped, for http.ResponseController.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
