package redisstore

import (
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// "A release is never refused so: late, it still frees its slot, and it
// is never swapped with an update that takes a lease (such a batch is
// split)" (doc.go, "When Redis fails"). A release that kept its request in
// flight (Outcome.Keep: the headers of a response whose body streams,
// every body past 4 KiB) left Leases() as it was (removed, then kept), so
// split counted it as neither kind and swapped it in one batch after an
// update that took a lease: the batch got the limit, and when Redis ran it
// late the release was refused with it. What the server said in those
// headers (here "none left of 10 a minute") never reached the Store:
// another process went on sending into a spent quota. (Alone, the
// release was applied however late.)
func TestBatchedKeepReleaseLate(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	prefix := testPrefix(t)
	a := New(warmClient(t, rs.addr()), prefix) // Timeout 250ms
	b := New(ownClient(t, rs.addr()), prefix)
	t.Cleanup(func() { a.Close(); b.Close() })
	const k = "k"
	// The probe, answered after 210ms: the key opens to splitCfg's 2 at
	// once. Its swaps measure Redis's clock: swaps taking a lease get a
	// limit.
	var p control.Lease
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { s.Acquire(time.Now(), splitCfg, control.Ask{}, &p) })
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(210 * time.Millisecond)
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { s.Release(time.Now(), splitCfg, &p, &control.Outcome{First: true, Bytes: -1}) })
	}); err != nil {
		t.Fatal(err)
	}
	var l1 control.Lease
	granted := false
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { _, granted = s.Acquire(time.Now(), splitCfg, control.Ask{}, &l1) })
	}); err != nil || !granted {
		t.Fatalf("the request: granted %v, %v", granted, err)
	}

	busy := busyRedis(t, rs.addr(), time.Second)
	// A plug, so that the next two go in one batch.
	plug := make(chan error, 1)
	go func() { plug <- a.Update(t.Context(), k, func(*polite.KeyState) {}) }()
	time.Sleep(20 * time.Millisecond)
	acqErr := make(chan error, 1)
	var g2 bool
	go func() { // another request starts, into the second slot
		acqErr <- a.Update(t.Context(), k, func(ks *polite.KeyState) {
			edit(t, ks, func(s *control.State) { _, g2 = s.Acquire(time.Now(), splitCfg, control.Ask{}, new(control.Lease)) })
		})
	}()
	time.Sleep(10 * time.Millisecond)
	// l1's headers arrive, its body streams: "0 left of 10 a minute".
	spent := []parse.Quota{{Policy: "p", Unit: "requests", Limit: 10, Window: time.Minute, Remaining: 0, Reset: time.Minute}}
	relErr := make(chan error, 1)
	go func() {
		relErr <- a.Update(t.Context(), k, func(ks *polite.KeyState) {
			edit(t, ks, func(s *control.State) {
				s.Release(time.Now(), splitCfg, &l1, &control.Outcome{Keep: true, Quotas: spent, Bytes: -1})
			})
		})
	}()
	errPlug, errAcq, errRel := <-plug, <-acqErr, <-relErr
	if e := <-busy; e != nil {
		t.Fatal(e)
	}
	time.Sleep(50 * time.Millisecond) // Redis runs what it was sent
	t.Logf("plug: %v; acquire (granted %v): %v; release: %v", errPlug, g2, errAcq, errRel)
	var ok bool
	var h control.Hold
	if err := b.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { h, ok = s.Acquire(time.Now(), splitCfg, control.Ask{}, new(control.Lease)) })
	}); err != nil {
		t.Fatal(err)
	}
	if ok || h.Reason != control.ReasonQuota {
		t.Errorf("a release carrying the server's \"0 left\" (release error: %v), run late by Redis, was refused with the acquire batched before it: another process's next request is granted %v (hold reason %d), want held for the spent quota", errRel, ok, h.Reason)
	}
}
