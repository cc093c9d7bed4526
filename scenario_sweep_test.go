package polite_test

import (
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

var (
	phaseSweep      = flag.String("phasesweep", "", "run the scenario rows whose name holds this string at every phase and start instant (tenths of a second), and print what each gave")
	phaseSweepTasks = flag.Int("phasesweeptasks", 0, "with -phasesweep, tasks per run (default: the row's)")
)

// TestPhaseSweep runs the rows of the scenario table named by -phasesweep
// with the server's windows aligned at each tenth of a second
// (ratelimittest.Config.Phase) and the run started at each tenth of a
// second (and 37ms, off the server's grain), 16 workers: whatever the
// phase, every task must succeed, an honest server refuse nothing and
// another no more than the row's ceiling. It prints the efficiency and
// the refusals of each run, a line per phase, and the worst and the mean.
func TestPhaseSweep(t *testing.T) {
	if *phaseSweep == "" {
		t.Skip("-phasesweep not set")
	}
	for _, sc := range scenarios() {
		if !strings.Contains(sc.name, *phaseSweep) {
			continue
		}
		if *phaseSweepTasks > 0 {
			sc.tasks = *phaseSweepTasks
		}
		phases := 10
		if slices.ContainsFunc(sc.cfg.Policies, func(p ratelimittest.Policy) bool { return p.Algorithm == ratelimittest.FixedWindowFromFirst }) {
			phases = 1 // its windows start at the first request: Phase plays no part
		}
		var b strings.Builder
		worst, sum, n, refusedHi := 2.0, 0.0, 0, 0
		for ph := range phases {
			cfg := sc.cfg
			cfg.Phase = time.Duration(ph) * 100 * time.Millisecond
			fmt.Fprintf(&b, "phase %v:", cfg.Phase)
			for st := range 10 {
				off := time.Duration(st)*100*time.Millisecond + 37*time.Millisecond
				var took time.Duration
				var refused int
				at := sc
				at.cfg = cfg
				synctest.Test(t, func(t *testing.T) {
					time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) + off)
					h, shed, srv := scenarioServer(at) // the row's shedder, outage, renames... too
					c, _ := politeOver(srv)
					start := time.Now()
					statuses := run(t, c, "http://api.test/", sc.tasks, 16)
					took = time.Since(start)
					if statuses[http.StatusOK] != sc.tasks {
						t.Errorf("%s, phase %v, start %v: %d of %d tasks ok", sc.name, cfg.Phase, off, statuses[http.StatusOK], sc.tasks)
					}
					refused = h.Stats().Refused + shed.shed
				})
				eff := scenarioIdeal(at, 16).Seconds() / took.Seconds()
				worst, sum, n, refusedHi = min(worst, eff), sum+eff, n+1, max(refusedHi, refused)
				fmt.Fprintf(&b, " %.3f/%d", eff, refused)
				if sc.honest && refused > 0 {
					t.Errorf("%s, phase %v, start %v: %d refused, want 0", sc.name, cfg.Phase, off, refused)
				}
				if !sc.honest && sc.unasserted == "" && float64(refused) > 1.5*sc.maxRefused*float64(sc.tasks) {
					t.Errorf("%s, phase %v, start %v: %d refused, want at most %.0f%% of %d", sc.name, cfg.Phase, off, refused, 150*sc.maxRefused, sc.tasks)
				}
			}
			b.WriteString("\n")
		}
		t.Logf("%s, %d tasks: efficiency worst %.3f, mean %.3f; refused at most %d (each run: efficiency/refused)\n%s", sc.name, sc.tasks, worst, sum/float64(n), refusedHi, b.String())
	}
}
