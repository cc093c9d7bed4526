package polite_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/politehttp/polite"
)

// remoteStore keeps each key's state as bytes, the way a store in another
// process (Redis, a database) would, and wakes waiters through a channel
// per key, where a remote store would use its own notifications.
type remoteStore struct {
	mu      sync.Mutex
	data    map[string][]byte
	gen     map[string]uint64
	changed map[string]chan struct{}
}

// Update reads the state, lets fn change it and writes it back, all under
// one lock: atomic per key.
func (s *remoteStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st polite.KeyState
	if err := st.UnmarshalBinary(s.data[key]); err != nil {
		// Written by another version, or damaged: start over. An
		// error here would fail every request of the key.
		st = polite.KeyState{}
	}
	fn(&st)
	b, err := st.MarshalBinary()
	if err != nil {
		return err
	}
	s.data[key] = b
	if g := st.Generation(); g > s.gen[key] {
		s.gen[key] = g
		if ch, ok := s.changed[key]; ok {
			close(ch) // wake the key's waiters
			delete(s.changed, key)
		}
	}
	return nil
}

// Wait returns once key's generation passes gen (at once if it already
// has), at until, or when ctx ends.
func (s *remoteStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	s.mu.Lock()
	if s.gen[key] > gen {
		s.mu.Unlock()
		return nil
	}
	ch, ok := s.changed[key]
	if !ok {
		ch = make(chan struct{})
		s.changed[key] = ch
	}
	s.mu.Unlock()
	var deadline <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-ch:
	case <-deadline:
	}
	return nil
}

// A Store keeps the pacing state of every budget key; Budgets in several
// processes that share one pace together, as one client. This one keeps
// states as bytes, as a remote store would; package storetest checks a
// Store against the contract.
func ExampleStore() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"api";q=100;w=60`)
		w.Header().Set("RateLimit", `"api";r=99;t=60`)
		io.WriteString(w, "hello")
	}))
	defer srv.Close()

	store := &remoteStore{data: map[string][]byte{}, gen: map[string]uint64{}, changed: map[string]chan struct{}{}}
	client := &http.Client{Transport: &polite.Transport{
		Budget: &polite.Budget{Store: store},
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status)

	// The state the store keeps for the server's origin is about a
	// hundred bytes.
	for _, b := range store.data {
		fmt.Println(len(b) < 200)
	}
	// Output:
	// 200 OK
	// true
}
