package redisstore

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Redis pauses for 2 s while four requests it granted get their answers:
// their releases, unanswered within the Store's Timeout, failed, and
// their leases stayed in Redis until the Budget's Lease (10 minutes). The
// key's observation stale once Redis answered again, its ramp counted
// them as requests awaiting an answer and let one request go every 3 s
// (its stall), in every process: six requests took 15 s against a quota
// of 100000 a second. Sent again until Redis answers (Store.resend),
// each release frees its slot once.
func TestReleaseSentAgainAfterPause(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	store := New(ownClient(t, rs.addr()), testPrefix(t)) // Timeout 250 ms
	t.Cleanup(func() { store.Close() })
	var slow atomic.Bool
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 100000, Window: time.Second}},
		Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if slow.Load() {
				time.Sleep(500 * time.Millisecond)
			}
			io.WriteString(w, "ok")
		}),
	})
	defer srv.Close()
	tr := &polite.Transport{Budget: &polite.Budget{Store: store}}
	c := &http.Client{Transport: tr}
	get := func() error {
		resp, err := c.Get(srv.URL)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	for range 5 { // the key states its quota
		if err := get(); err != nil {
			t.Fatal(err)
		}
	}
	// Four requests, granted by Redis, answered while it is paused.
	slow.Store(true)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { get() })
	}
	time.Sleep(100 * time.Millisecond)
	if err := ownClient(t, rs.addr()).Do(t.Context(), "CLIENT", "PAUSE", "2000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	slow.Store(false)
	time.Sleep(2500 * time.Millisecond) // Redis answers again

	if st, _ := tr.Budget.Inspect(srv.URL, time.Now()); st.InFlight != 0 {
		t.Errorf("after the pause: %d requests in flight in Redis, where none is", st.InFlight)
	}
	start := time.Now()
	for range 6 {
		if err := get(); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("six requests after the pause took %v, against a quota of 100000 a second", took.Round(time.Millisecond))
	}
}
