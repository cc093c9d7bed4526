package polite_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

var errQuotingDown = errors.New("store down")

// quotingStore fails every Update with an error that quotes the key,
// as a driver's error may.
type quotingStore struct{}

func (quotingStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	return fmt.Errorf("update %q: %w", key, errQuotingDown)
}

func (quotingStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	<-ctx.Done()
	return ctx.Err()
}

// A Store's error that quotes a custom key shows the key's fingerprint in
// its place (DESIGN.md §5; SECURITY.md), whatever the verb it is printed
// with. %#v printed the error's fields, the key whole among them, and so
// did a verb no string takes (%d, %t).
var everyVerb = []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%t", "%o", "%b", "%e", "%-30.8s"}

func TestStoreErrorHidesKeyInEveryVerb(t *testing.T) {
	const secret = "sk-live-R3VIEW-0001"
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var errs []error
		tr := &polite.Transport{
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}),
			Key:    func(r *http.Request) string { return r.Header.Get("Authorization") },
			Budget: &polite.Budget{Store: quotingStore{}},
			OnEvent: func(e polite.Event) {
				if e.Err != nil {
					mu.Lock()
					errs = append(errs, e.Err)
					mu.Unlock()
				}
			},
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		req.Header.Set("Authorization", secret)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(errs) == 0 {
			t.Fatal("no event with an error (want an EventStoreDown)")
		}
		for _, e := range errs {
			for _, verb := range everyVerb {
				if s := fmt.Sprintf(verb, e); strings.Contains(s, secret) || strings.Contains(s, fmt.Sprintf("%x", secret)) {
					t.Errorf("fmt %s of Event.Err shows the custom key: %s", verb, s)
				}
			}
		}
	})
}

// A partition key appears only as a hash in what polite writes (SECURITY.md),
// and a KeyState, which every Store is handed, may be logged by one: fmt
// printed its fields, the partition key whole among them, with %v, %+v and
// %#v.
func TestKeyStateFormatHidesPartitionKey(t *testing.T) {
	const pk = "sk-live-secret" // base64 c2stbGl2ZS1zZWNyZXQ=
	ms := &polite.MemoryStore{}
	tr := &polite.Transport{Budget: &polite.Budget{Store: ms}, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		h.Set("RateLimit-Policy", `"api";q=100;w=60;pk=:c2stbGl2ZS1zZWNyZXQ=:`)
		h.Set("RateLimit", `"api";r=50;t=30;pk=:c2stbGl2ZS1zZWNyZXQ=:`)
		return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
	})}
	req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	st, ok := tr.Inspect("http://a.test", time.Now())
	if !ok || len(st.Policies) == 0 || st.Policies[0].Partition == "" {
		t.Fatalf("Inspect = %+v, %v; want a policy with a hashed partition", st, ok)
	}
	seen := false
	ms.Update(t.Context(), "http://a.test", func(ks *polite.KeyState) {
		seen = true
		for _, verb := range []string{"%v", "%+v", "%#v"} {
			if s := fmt.Sprintf(verb, ks); strings.Contains(s, pk) {
				t.Errorf("fmt %s of *KeyState shows the partition key %q verbatim", verb, pk)
			}
			if s := fmt.Sprintf(verb, *ks); strings.Contains(s, pk) {
				t.Errorf("fmt %s of KeyState shows the partition key %q verbatim", verb, pk)
			}
		}
	})
	if !seen {
		t.Fatal("no state for the key")
	}
}
