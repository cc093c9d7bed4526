package polite_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

func collectEvents(evs *[]polite.Event) func(polite.Event) {
	var mu sync.Mutex
	return func(e polite.Event) { mu.Lock(); *evs = append(*evs, e); mu.Unlock() }
}

// One flight of 100 requests refused together with Retry-After: 1 is no
// outage, and the server serves every request a second later; a retry
// the budget would space past MaxWait (5 s, 8 s) went back to the caller
// as a give-up for the retry budget, half the flight. Outside an outage
// the budget spaces retries within what the request may wait (doc.go).
func TestBudgetSpacesWithinShortMaxWait(t *testing.T) {
	for _, mw := range []time.Duration{5 * time.Second, 8 * time.Second} {
		t.Run(mw.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				srv := &rvServer{latency: 300 * time.Millisecond, answer: func(task string, k int, _ time.Time) (int, http.Header) {
					if strings.HasPrefix(task, "flight") && k == 0 {
						return 429, http.Header{"Retry-After": {"1"}}
					}
					return 200, rvRoomy()
				}}
				tr := &polite.Transport{Base: srv, MaxWait: mw}
				if st := run(t, &http.Client{Transport: tr}, "http://api.test/", 3000, 400); st[200] != 3000 {
					t.Fatalf("warm-up: %v", st)
				}
				var evs []polite.Event
				tr.OnEvent = collectEvents(&evs)
				var (
					mu       sync.Mutex
					statuses = map[int]int{}
					errs     = 0
					wg       sync.WaitGroup
				)
				for i := range 100 {
					wg.Go(func() {
						req, _ := http.NewRequest("GET", "http://api.test/", nil)
						req.Header.Set("X-Task", "flight"+strconv.Itoa(i))
						resp, err := tr.RoundTrip(req)
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							errs++
							return
						}
						resp.Body.Close()
						statuses[resp.StatusCode]++
					})
				}
				wg.Wait()
				budget := 0
				for _, e := range evs {
					if e.Kind == polite.EventGiveUp && e.Reason == polite.ReasonRetryBudget {
						budget++
					}
				}
				t.Logf("statuses %v, errors %d, give-ups for the retry budget %d", statuses, errs, budget)
				if budget > 0 || statuses[200] != 100 {
					t.Errorf("MaxWait %v: %d of 100 refusals of one flight (Retry-After: 1, no outage) went back to the caller as give-ups for the retry budget; statuses %v, errors %d", mw, budget, statuses, errs)
				}
			})
		})
	}
}
