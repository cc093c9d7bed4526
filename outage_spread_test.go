package polite_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// Ten clients of one server that refuses everything with a bare 429 (ten
// processes behind one address, say), with MaxAttempts 1, refused
// together from their first request: their probes must spread over the
// pause as it doubles, not stay as close as their first backoffs left
// them for as long as the server refuses. Before the refusal floor's
// doublings and its cap were spread, each went exactly at the doubled
// wait: in the last 20 of 30 minutes, all ten clients' probes came within
// a second, a minute apart (210 probes); now 2 to 4 (about 186: the
// minute is lengthened by up to a quarter).
//
// The same for an origin whose dials are all refused, with
// RetryTransient: its outage pauses the key as the 429s' does
// (control.State.transient). No random value was drawn for a transient
// failure, so the pauses were exactly 1 s, 2 s, ..., 60 s, and the ten
// clients probed within the same second each minute.
func TestOutageProbesOfClientsSpread(t *testing.T) {
	const clients = 10
	for _, tt := range []struct {
		name      string
		transient bool
	}{{"bare 429", false}, {"dial refused", true}} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				present()
				start := time.Now()
				var mu sync.Mutex
				var late []time.Time
				caller := func() {
					tr := &polite.Transport{Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
						if time.Since(start) >= 10*time.Minute {
							mu.Lock()
							late = append(late, time.Now())
							mu.Unlock()
						}
						if tt.transient {
							return downAnswer(req, 0)
						}
						return &http.Response{StatusCode: 429, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
					}), MaxAttempts: 1, RetryTransient: tt.transient}
					callUntil(t, tr, start.Add(30*time.Minute), 5*time.Minute)
				}
				var wg sync.WaitGroup
				for range clients {
					wg.Go(caller)
				}
				wg.Wait()
				slices.SortFunc(late, func(a, b time.Time) int { return a.Compare(b) })
				most := maxInSpan(late, time.Second)
				t.Logf("%d probes in the last 20 of 30 minutes, at most %d within a second", len(late), most)
				if most > clients/2 {
					t.Errorf("%d of %d clients' probes within a second in the last 20 of 30 minutes; want them spread", most, clients)
				}
			})
		})
	}
}
