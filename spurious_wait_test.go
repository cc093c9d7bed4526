package polite_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// impatientStore is a Store whose Wait returns at once, whatever it was
// asked to wait for: it breaks the Store contract.
type impatientStore struct {
	m       *polite.MemoryStore
	updates *int
}

func (s impatientStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	*s.updates++
	return s.m.Update(ctx, key, fn)
}

func (s impatientStore) Wait(context.Context, string, uint64, time.Time) error { return nil }

// TestStoreWaitReturningEarlyDoesNotSpin: a Store whose Wait returns at
// once made a request held for 10 s ask the Store again and again at one
// instant without end (in real time, a loop that never sleeps, hammering
// the Store). The request now waits on its own a quarter second between
// asks, and goes when its quota is whole again.
func TestStoreWaitReturningEarlyDoesNotSpin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit-Policy", `"p";q=1;w=10`)
			w.Header().Set("RateLimit", `"p";r=0;t=10`)
		})
		updates := 0
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h},
			Budget: &polite.Budget{Store: impatientStore{&polite.MemoryStore{}, &updates}}}
		c := &http.Client{Transport: tr}
		start := time.Now()
		for range 2 {
			resp, err := c.Get("http://api.test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if d := time.Since(start); d < 10*time.Second || d > 11*time.Second {
			t.Errorf("two requests of a quota of 1 per 10 s took %v, want 10 s", d)
		}
		if updates > 200 {
			t.Errorf("%d updates of the Store for two requests, want a few a second of the wait", updates)
		}
	})
}
