package polite

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// slowAnswerStore is a shared Store whose next Update, once armed, returns only
// after gate closes (its fn already run): a call whose answer is slow to
// come back, as over a network.
type slowAnswerStore struct {
	m       MemoryStore
	failing atomic.Bool
	armed   atomic.Pointer[chan struct{}]
}

func (s *slowAnswerStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if s.failing.Load() {
		return errors.New("store down")
	}
	err := s.m.Update(ctx, key, fn)
	if g := s.armed.Swap(nil); g != nil {
		<-*g
	}
	return err
}

func (s *slowAnswerStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	if s.failing.Load() {
		return errors.New("store down")
	}
	return s.m.Wait(ctx, key, gen, until)
}

// Two requests of one process to one key. B's acquire reads the Store's
// state (no pause yet) and its answer is slow to come back; meanwhile A
// is refused for an hour: the Store holds the pause and the release copies
// it into the fallback. B's stale reading of the Store (no pause) does not
// drop that copy, made since: once the Store fails, the fallback still
// holds the key for the hour.
func TestUnmirrorKeepsPauseCopiedSinceRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &slowAnswerStore{}
		a := &Budget{Store: st}
		a.init()
		k := originKey("http", "api.test")
		t0 := time.Now()
		var gA lease
		if _, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &gA); !ok {
			t.Fatal("A held")
		}
		gate := make(chan struct{})
		st.armed.Store(&gate)
		done := make(chan bool)
		var gB lease
		go func() {
			_, ok, _, _ := a.acquire(t.Context(), k, t0, control.Ask{}, &gB)
			done <- ok
		}()
		synctest.Wait() // B's Update ran fn, its answer not back yet
		t1 := t0.Add(10 * time.Millisecond)
		a.release(t.Context(), k, &gA, t1, &control.Outcome{First: true, Bytes: -1, Refused: true, Rejected: true,
			Refusal: control.Refusal{Wait: time.Hour, Given: true, Reason: control.ReasonRetryAfter, MaxWait: 2 * time.Hour}})
		var stored time.Time
		st.m.Update(t.Context(), k.m.String(), func(s *KeyState) { stored, _ = s.c.Paused(t1) })
		if stored.Before(t1.Add(50 * time.Minute)) {
			t.Fatalf("the Store holds no hour's pause: %v", stored)
		}
		close(gate)
		<-done // granted or held (A's answer not back yet): either way it read no pause
		st.failing.Store(true)
		t2 := t1.Add(time.Second)
		var gC lease
		if h, ok, _, _ := a.acquire(t.Context(), k, t2, control.Ask{}, &gC); ok || !h.local {
			t.Errorf("the Store holds the key until %v (Retry-After: 3600); with the Store failing, the fallback granted it (ok=%v, local=%v)", stored.Sub(t2).Round(time.Second), ok, h.local)
		}
	})
}
