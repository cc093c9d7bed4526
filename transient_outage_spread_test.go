package polite_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// Ten clients (ten processes, say) of an origin whose dials are all
// refused for 30 minutes, RetryTransient, MaxAttempts 1. In the outage
// each flight's failure pauses the key "spread" (control.State.transient,
// as refusals' outage pauses are: TestOutageProbesOfClientsSpread), so that
// clients failed together do not probe together for as long as it lasts.
// The Transport set no Outcome.Rand for a transient failure (a
// connection error's Outcome is fresh; a 502's only when a quota is
// spent), so spread(0, d) returned d: every pause was exactly 1 s, 2 s,
// ..., 60 s, and the ten clients probed within the same second each
// minute.
func TestTransientOutageProbesOfClientsSpread(t *testing.T) {
	const clients = 10
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
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
			}), MaxAttempts: 1, RetryTransient: true}
			callUntilTransient(t, tr, start.Add(30*time.Minute), 5*time.Minute)
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
}

// callUntilTransient is callUntil, a 502 counting as an error the caller
// thinks a second after.
func callUntilTransient(t *testing.T, tr *polite.Transport, end time.Time, timeout time.Duration) {
	for time.Now().Before(end) {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		time.Sleep(time.Second)
		cancel()
	}
}
