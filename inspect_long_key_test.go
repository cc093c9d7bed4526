package polite_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// keyLimitStore is a bytesStore that refuses keys longer than 2048 bytes,
// as DynamoDB refuses a partition key of more (storetest asks for keys of
// some 600 bytes): the Store answers, for every key a request uses.
type keyLimitStore struct{ *bytesStore }

var errKeyTooLong = errors.New("key too long")

func (s keyLimitStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if len(key) > 2048 {
		return errKeyTooLong
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// Inspect of a URL first asks the Store for the URL itself, verbatim, as a
// custom key, then for its origin. When Inspect first recorded a failing
// Store, a failure of that first call (a key no request uses, which the
// Store refuses) was recorded as the Store failing: the origin, asked
// next, was read from the fallback, which did not hold it (Inspect
// reported nothing for a key the Store keeps), and for a second every
// request skipped the Store, which answers, pacing by this process alone,
// without EventStoreDown. Only a Store that does not answer in time is
// recorded as failing now.
func TestInspectLongURLLeavesStoreInUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := keyLimitStore{newBytesStore()}
		h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 5, Window: time.Minute}}})
		var events []polite.EventKind
		tr := &polite.Transport{
			Base:    &ratelimittest.Transport{Handler: h},
			Budget:  &polite.Budget{Store: st},
			OnEvent: func(e polite.Event) { events = append(events, e.Kind) },
		}
		c := &http.Client{Transport: tr}
		get := func() {
			resp, err := c.Get("http://api.test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		get()

		long := "http://api.test/search?q=" + strings.Repeat("x", 3000)
		if s, ok := tr.Inspect(long, time.Now()); !ok || s.Key != "http://api.test" || len(s.Policies) == 0 {
			t.Errorf("Inspect(a URL of %d bytes) = %q, %d policies, %v; want the origin's state the Store keeps", len(long), s.Key, len(s.Policies), ok)
		}
		before := st.updates.Load()
		get()
		if st.updates.Load() == before {
			t.Errorf("the request after Inspect did not ask the Store, which answers every key it was given")
		}
		for _, k := range events {
			if k == polite.EventStoreDown || k == polite.EventStoreUp {
				t.Errorf("event %v; want none, the Store never failed a request", k)
			}
		}
	})
}
