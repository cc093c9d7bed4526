package redisstore

import (
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// shortLeaseCfg is splitCfg with a lease short enough to end while its
// request still waits for its headers.
var shortLeaseCfg = &control.Config{MaxConcurrency: 2, Lease: 500 * time.Millisecond}

// "A release is never refused so: late, it still frees its slot (or, for
// a response whose body streams, applies what its headers said), and it
// is never swapped with an update that takes a lease (such a batch is
// split)" (doc.go, "When Redis fails"). split told a release by the
// leases it frees or keeps (Leases, Awaiting): a release that frees none
// (its lease already ended, or one of an earlier incarnation of the key,
// which started over since it was granted) was counted as neither kind and
// swapped in one batch after an update that takes a lease, under that
// update's limit. When Redis ran the swap late, the release was refused
// with it, and what the server said in its headers (here "none left of 10
// a minute") never reached Redis: another process went on sending into a
// spent quota. Every release makes the generation grow (Release: gen++),
// and so does split's reading of one now.
func TestBatchedExpiredReleaseLate(t *testing.T) {
	waitsSeconds(t)
	rs := startServer(t)
	prefix := testPrefix(t)
	a := New(warmClient(t, rs.addr()), prefix) // Timeout 250ms
	b := New(ownClient(t, rs.addr()), prefix)
	t.Cleanup(func() { a.Close(); b.Close() })
	const k = "k"
	// The probe, answered after 210ms: the key opens to 2 at once, and
	// a's swaps measured Redis's clock: swaps taking a lease get a limit.
	var p control.Lease
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { s.Acquire(time.Now(), shortLeaseCfg, control.Ask{}, &p) })
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(210 * time.Millisecond)
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) {
			s.Release(time.Now(), shortLeaseCfg, &p, &control.Outcome{First: true, Bytes: -1})
		})
	}); err != nil {
		t.Fatal(err)
	}
	var l1 control.Lease
	granted := false
	if err := a.Update(t.Context(), k, func(ks *polite.KeyState) {
		edit(t, ks, func(s *control.State) { _, granted = s.Acquire(time.Now(), shortLeaseCfg, control.Ask{}, &l1) })
	}); err != nil || !granted {
		t.Fatalf("the request: granted %v, %v", granted, err)
	}
	time.Sleep(600 * time.Millisecond) // l1's lease ends; its answer is still to come

	busy := busyRedis(t, rs.addr(), time.Second)
	plug := make(chan error, 1) // so that the next two go in one batch
	go func() { plug <- a.Update(t.Context(), k, func(*polite.KeyState) {}) }()
	time.Sleep(20 * time.Millisecond)
	acqErr := make(chan error, 1)
	var g2 bool
	go func() { // another request starts
		acqErr <- a.Update(t.Context(), k, func(ks *polite.KeyState) {
			edit(t, ks, func(s *control.State) {
				_, g2 = s.Acquire(time.Now(), shortLeaseCfg, control.Ask{}, new(control.Lease))
			})
		})
	}()
	time.Sleep(10 * time.Millisecond)
	// l1's answer arrives at last: "0 left of 10 a minute".
	spent := []parse.Quota{{Policy: "p", Unit: "requests", Limit: 10, Window: time.Minute, Remaining: 0, Reset: time.Minute}}
	relErr := make(chan error, 1)
	go func() {
		relErr <- a.Update(t.Context(), k, func(ks *polite.KeyState) {
			edit(t, ks, func(s *control.State) {
				s.Release(time.Now(), shortLeaseCfg, &l1, &control.Outcome{Quotas: spent, Bytes: -1})
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
		edit(t, ks, func(s *control.State) {
			h, ok = s.Acquire(time.Now(), shortLeaseCfg, control.Ask{}, new(control.Lease))
		})
	}); err != nil {
		t.Fatal(err)
	}
	if ok || h.Reason != control.ReasonQuota {
		t.Errorf("a release carrying the server's \"0 left\" (release error: %v), whose lease had ended, run late by Redis, was refused with the acquire batched before it: another process's next request is granted %v (hold reason %d), want held for the spent quota", errRel, ok, h.Reason)
	}
}
