package polite_test

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

var shedMinutes = flag.Int("shedminutes", 0, "minutes of each row of the random-shedding table (0: skip): a server that limits no rate and refuses a share of requests at random, bare; what polite is served, against a plain client")

// TestShedRandomTable prints, for a server that limits no rate and
// refuses a share of the requests at random with a bare 429 or 503 (a
// load balancer with a failing backend, an overloaded model), answering
// in 20 ms, looped on by 8 workers for -shedminutes: the requests it
// served polite in the first and the last tenth of the run, each as a
// share of what it served a plain client looping alike, the quota polite
// learned by the end, and the calls that returned an error. DESIGN.md §6
// ("Refusals of no rate") quotes it. It asserts nothing.
//
//	go test -run 'TestShedRandomTable$' -shedminutes 60 -v .
func TestShedRandomTable(t *testing.T) {
	if *shedMinutes <= 0 {
		t.Skip("run with -shedminutes N")
	}
	span := time.Duration(*shedMinutes) * time.Minute
	for _, row := range []struct {
		share  float64
		status int
	}{{0.01, 429}, {0.02, 429}, {0.05, 429}, {0.05, 503}} {
		t.Run(fmt.Sprintf("%v%%/%d", row.share*100, row.status), func(t *testing.T) {
			plain := shedRun(t, row.share, row.status, span, nil)
			tr := &polite.Transport{}
			run := shedRun(t, row.share, row.status, span, tr)
			learned := "none"
			if run.learned != nil {
				learned = fmt.Sprintf("%d per %v", run.learned.Quota, run.learned.Window)
			}
			t.Logf("first tenth %.3f of plain, last tenth %.3f; learned %s; %d calls failed",
				float64(run.first)/float64(plain.first), float64(run.last)/float64(plain.last), learned, run.errs)
		})
	}
}

// shedResult is what one run of TestShedRandomTable counted.
type shedResult struct {
	first, last int64 // requests served in the first and the last tenth of the run
	errs        int64
	learned     *polite.PolicyState
}

// shedRun loops 8 workers for span on a server refusing share of the
// requests at random with status, through tr over an in-memory Base, or
// through that Base alone when tr is nil.
func shedRun(t *testing.T, share float64, status int, span time.Duration, tr *polite.Transport) shedResult {
	var res shedResult
	synctest.Test(t, func(t *testing.T) {
		present()
		rng := rand.New(rand.NewPCG(1, 2))
		var mu sync.Mutex
		start := time.Now()
		var first, last, errs atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			refuse := rng.Float64() < share
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			if refuse {
				w.WriteHeader(status)
				return
			}
			switch since := time.Since(start); {
			case since < span/10:
				first.Add(1)
			case since >= span-span/10:
				last.Add(1)
			}
			io.WriteString(w, "ok")
		})
		var rt http.RoundTripper = &ratelimittest.Transport{Handler: h}
		if tr != nil {
			tr.Base = rt
			rt = tr
		}
		c := &http.Client{Transport: rt}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for time.Since(start) < span {
					req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
					resp, err := c.Do(req)
					if err != nil {
						errs.Add(1)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		res.first, res.last, res.errs = first.Load(), last.Load(), errs.Load()
		if tr != nil {
			if s, ok := tr.Inspect("http://api.test", time.Now()); ok {
				res.learned = s.Learned
			}
		}
	})
	return res
}
