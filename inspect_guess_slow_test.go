package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// When Inspect recorded a failing Store from its guess of a custom key (a
// URL with a path, read verbatim before its origin) only if the Store did
// not answer within Inspect's timeout, a Store that fails slowly, within
// it (a driver's own 5 s timeout, as TestInspectHeedsSlowFailingStore has
// it), was not recorded by the guess: Inspect asked it again for the
// origin and waited for a second failure. Inspect of one URL took 10s and
// two calls; inspect -cost, which Inspects the URL it fetched, paid it at
// every run. A guess's failure that took a second or more is recorded.
func TestInspectURLHeedsSlowFailingStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &slowFailStore{bytesStore: newBytesStore(), delay: 5 * time.Second}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: http.NotFoundHandler()}, Budget: &polite.Budget{Store: st}}
		st.down.Store(true)
		start := time.Now()
		tr.Inspect("http://a.test/v1/items", time.Now())
		if d, n := time.Since(start), st.calls.Load(); d > 5*time.Second || n != 1 {
			t.Errorf("Inspect of a URL with a Store failing after 5 s took %v and asked it %d times, want 5s and once", d, n)
		}
	})
}
