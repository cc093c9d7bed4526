package polite_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// Inspect asked a Store that does not answer every time, each call waiting
// for its timeout, and recorded nothing: otelpolite's gauge, reading its
// keys one by one, took ten seconds a key (close to three hours at its
// default of a thousand keys), and a request after it found the Store as
// if it answered. Now the first call's failure is recorded as a request's
// is: for a second the Store is not asked again.
func TestInspectHeedsStoreDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
		st := &slowFailStore{bytesStore: newBytesStore(), delay: time.Hour}
		var events []polite.EventKind
		tr := &polite.Transport{
			Base:    &ratelimittest.Transport{Handler: h},
			Budget:  &polite.Budget{Store: st},
			OnEvent: func(e polite.Event) { events = append(events, e.Kind) },
		}
		c := &http.Client{Transport: tr}
		hosts := []string{"http://a.test", "http://b.test", "http://c.test"}
		for _, u := range hosts {
			resp, err := c.Get(u + "/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		st.down.Store(true)
		start := time.Now()
		for _, u := range hosts {
			tr.Inspect(u, time.Now()) // what this process saw: nothing, all kept by the Store
		}
		if d := time.Since(start); d > 11*time.Second {
			t.Errorf("Inspect of 3 keys with the Store not answering took %v, want one timeout (10s)", d)
		}
		if n := st.calls.Load(); n != 1 {
			t.Errorf("the Store was asked %d times by 3 Inspects within a second, want 1", n)
		}

		// The failure Inspect found is for a request to announce: the
		// first request to find the Store failing emits EventStoreDown,
		// and its recovery EventStoreUp, once each.
		time.Sleep(2 * time.Second)
		st.delay = 0
		get := func() {
			resp, err := c.Get(hosts[0] + "/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		get()
		time.Sleep(2 * time.Second)
		st.down.Store(false)
		get()
		var got []polite.EventKind
		for _, k := range events {
			if k == polite.EventStoreDown || k == polite.EventStoreUp {
				got = append(got, k)
			}
		}
		if len(got) != 2 || got[0] != polite.EventStoreDown || got[1] != polite.EventStoreUp {
			t.Errorf("Store events %v, want [%v %v]", got, polite.EventStoreDown, polite.EventStoreUp)
		}
	})
}

// A failure only Inspect found, ended before any request found one, is no
// outage a request saw: nothing is emitted.
func TestInspectFailureNoRequestSawEmitsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
		st := &slowFailStore{bytesStore: newBytesStore(), delay: time.Second}
		var events []polite.EventKind
		tr := &polite.Transport{
			Base:    &ratelimittest.Transport{Handler: h},
			Budget:  &polite.Budget{Store: st},
			OnEvent: func(e polite.Event) { events = append(events, e.Kind) },
		}
		c := &http.Client{Transport: tr}
		get := func() {
			resp, err := c.Get("http://a.test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		get()
		st.down.Store(true)
		tr.Inspect("http://a.test", time.Now())
		time.Sleep(2 * time.Second)
		st.down.Store(false)
		get()
		for _, k := range events {
			if k == polite.EventStoreDown || k == polite.EventStoreUp {
				t.Errorf("event %v, want none: no request found the Store failing", k)
			}
		}
	})
}

// A Store that fails slowly (after 5 s, within Inspect's 10 s) is recorded
// as failing by Inspect too: the Inspects after it, within a second, read
// what this process saw without asking it.
func TestInspectHeedsSlowFailingStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &slowFailStore{bytesStore: newBytesStore(), delay: 5 * time.Second}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: http.NotFoundHandler()}, Budget: &polite.Budget{Store: st}}
		st.down.Store(true)
		start := time.Now()
		for _, u := range []string{"http://a.test", "http://b.test", "http://c.test"} {
			tr.Inspect(u, time.Now())
		}
		if d, n := time.Since(start), st.calls.Load(); d > 5*time.Second || n != 1 {
			t.Errorf("3 Inspects of a Store failing after 5 s took %v and asked it %d times, want 5s and once", d, n)
		}
	})
}
