package polite_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
	"github.com/politehttp/polite/ratelimittest"
	"github.com/politehttp/polite/storetest"
)

// bytesStore keeps states as bytes, as a store in another process would:
// every Update decodes and encodes them. It can be made to fail.
type bytesStore struct {
	mu      sync.Mutex
	states  map[string][]byte
	gens    map[string]uint64
	changed map[string]chan struct{}
	failing atomic.Bool
	updates atomic.Int64
}

var errStoreDown = errors.New("store down")

func newBytesStore() *bytesStore {
	return &bytesStore{states: map[string][]byte{}, gens: map[string]uint64{}, changed: map[string]chan struct{}{}}
}

func (s *bytesStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.failing.Load() {
		return errStoreDown
	}
	s.updates.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	var ks polite.KeyState
	if err := ks.UnmarshalBinary(s.states[key]); err != nil {
		return err
	}
	fn(&ks)
	b, err := ks.MarshalBinary()
	if err != nil {
		return err
	}
	s.states[key] = b
	if g := ks.Generation(); g > s.gens[key] {
		s.gens[key] = g
		if ch := s.changed[key]; ch != nil {
			close(ch)
			delete(s.changed, key)
		}
	}
	return nil
}

func (s *bytesStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	if s.failing.Load() {
		return errStoreDown
	}
	s.mu.Lock()
	if s.gens[key] > gen {
		s.mu.Unlock()
		return nil
	}
	ch := s.changed[key]
	if ch == nil {
		ch = make(chan struct{})
		s.changed[key] = ch
	}
	s.mu.Unlock()
	var fire <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		fire = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-fire:
	case <-ch:
	}
	return nil
}

func TestBytesStoreConforms(t *testing.T) {
	storetest.TestStore(t, func(*testing.T) polite.Store { return newBytesStore() })
}

func TestBudgetsSharingAStore(t *testing.T) {
	// Two Budgets (two processes, say) over one Store: a pause one of
	// them learns holds the other.
	synctest.Test(t, func(t *testing.T) {
		n := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n++; n == 1 {
				w.Header().Set("RateLimit", `"default";r=0;t=30`)
			}
		})
		st := newBytesStore()
		one := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}}}
		two := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}}}
		get(t, one, "http://api.test/")
		start := time.Now()
		get(t, two, "http://api.test/")
		if d := time.Since(start); d < 30*time.Second || d > 30*time.Second+25*time.Millisecond {
			t.Errorf("second Budget waited %v, want the 30s the first learned", d)
		}
		if st.updates.Load() == 0 {
			t.Error("the Store was never updated")
		}
	})
}

func TestStoreFailureFallsBack(t *testing.T) {
	// The Store fails for a while: requests go on, paced by what this
	// process sees; one event and one log line say so, and one more when
	// the Store answers again.
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: time.Second}},
			Latency:  5 * time.Millisecond,
		})
		st := newBytesStore()
		var buf bytes.Buffer
		ev := &events{}
		tr := &polite.Transport{
			Base:    &ratelimittest.Transport{Handler: h},
			Budget:  &polite.Budget{Store: st},
			OnEvent: ev.on,
			Logger:  slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})),
		}
		c := &http.Client{Transport: tr}
		run(t, c, "http://api.test/", 20, 4)
		st.failing.Store(true)
		got := run(t, c, "http://api.test/", 30, 4)
		st.failing.Store(false)
		time.Sleep(2 * time.Second) // past the Budget's retry interval
		run(t, c, "http://api.test/", 20, 4)

		if got[http.StatusOK] != 30 {
			t.Errorf("statuses while the Store failed = %v, want 30 × 200", got)
		}
		// The fallback knows nothing at first: its probe may fall in a
		// window the Store knew was spent. Nothing more may be refused.
		if s := h.Stats(); s.Refused > 1 {
			t.Errorf("%d refusals, want at most the fallback's first probe: it paces by what it sees", s.Refused)
		}
		down, up := ev.of(polite.EventStoreDown), ev.of(polite.EventStoreUp)
		if len(down) != 1 || len(up) != 1 {
			t.Fatalf("%d EventStoreDown and %d EventStoreUp, want one each", len(down), len(up))
		}
		if !errors.Is(down[0].Err, errStoreDown) || down[0].Key != "http://api.test" {
			t.Errorf("EventStoreDown = %+v, want Err matching the Store's error, Key http://api.test", down[0])
		}
		log := buf.String()
		if strings.Count(log, "polite: store-down") != 1 || strings.Count(log, "polite: store-up") != 1 {
			t.Errorf("log has %d store-down and %d store-up lines, want one each:\n%s", strings.Count(log, "polite: store-down"), strings.Count(log, "polite: store-up"), log)
		}
	})
}

func TestStoreDownAtStart(t *testing.T) {
	// A Store that never answers: every request still goes, none hangs.
	synctest.Test(t, func(t *testing.T) {
		st := newBytesStore()
		st.failing.Store(true)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
		ev := &events{}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}, OnEvent: ev.on}
		got := run(t, &http.Client{Transport: tr}, "http://api.test/", 50, 8)
		if got[http.StatusOK] != 50 {
			t.Errorf("statuses = %v, want 50 × 200", got)
		}
		if n := len(ev.of(polite.EventStoreDown)); n != 1 {
			t.Errorf("%d EventStoreDown, want 1", n)
		}
		if _, ok := tr.Inspect("http://api.test", time.Now()); !ok {
			t.Error("Inspect while the Store fails: false, want what this process saw")
		}
	})
}

func TestForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "99999999999999999999")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		for _, store := range []polite.Store{nil, newBytesStore()} {
			b := &polite.Budget{Store: store}
			c := &http.Client{Transport: &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: b}}
			get(t, c, "http://API.test:80/")
			st, ok := b.Inspect("http://api.test/x", time.Now())
			if !ok || time.Until(st.PauseUntil) != 24*time.Hour {
				t.Fatalf("after Retry-After: 99999999999999999999, pause = %v (found %v), want the cap of 24h", time.Until(st.PauseUntil), ok)
			}
			b.Forget("http://api.test")
			if st, ok := b.Inspect("http://api.test", time.Now()); ok && !st.PauseUntil.IsZero() {
				t.Errorf("after Forget: %+v, want no pause", st)
			}
		}
	})
}

// slowStore is a bytesStore whose Updates take delay, while its context
// lasts, once slow is set.
type slowStore struct {
	*bytesStore
	slow  atomic.Bool
	delay time.Duration
}

func (s *slowStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.slow.Load() {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// A held request whose context ends returns at once, though the Store
// takes seconds to hear that it stopped waiting: that Update runs on its
// own, bounded in time.
func TestHeldRequestReturnsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("RateLimit", `"d";r=0;t=5`)
		})
		st := &slowStore{bytesStore: newBytesStore(), delay: 3 * time.Second}
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}}
		c := &http.Client{Transport: tr}
		get(t, c, "http://api.test/")
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			// Slow from the request's first wait on: its context ends
			// while it is held by the pause.
			time.Sleep(100 * time.Millisecond)
			st.slow.Store(true)
			cancel()
		}()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		start := time.Now()
		_, err := c.Do(req)
		if d := time.Since(start); !errors.Is(err, context.Canceled) || d != 100*time.Millisecond {
			t.Errorf("held request: %v after %v; want context.Canceled when its context ended, after 100ms", err, d)
		}
		time.Sleep(st.delay) // the Store hears of it meanwhile
	})
}

// A pause holds a key through a Store's outage, both ways: one learned
// while the Store was down (kept by the Budget's fallback) carries over to
// the Store when it answers again, and one the Store keeps still holds the
// process's fallback when the Store fails.
func TestPauseSurvivesStoreOutage(t *testing.T) {
	for _, tt := range []struct {
		name          string
		before, after bool // the Store fails for the refusal, and for the next request
	}{
		{"learned in the outage", true, false},
		{"learned before it", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if n.Add(1) == 1 {
						w.Header().Set("Retry-After", "30")
						w.WriteHeader(http.StatusTooManyRequests)
					}
				})
				st := newBytesStore()
				tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: st}, MaxAttempts: 1}
				c := &http.Client{Transport: tr}
				st.failing.Store(tt.before)
				if code, _ := get(t, c, "http://api.test/"); code != http.StatusTooManyRequests {
					t.Fatalf("first request: %d, want the 429", code)
				}
				st.failing.Store(tt.after)
				time.Sleep(1100 * time.Millisecond) // the Budget tries the Store again
				ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
				if resp, err := c.Do(req); err == nil {
					resp.Body.Close()
				}
				if got := n.Load(); got != 1 {
					t.Errorf("%d requests sent within 5s of a Retry-After: 30, want 1", got)
				}
			})
		})
	}
}

// failFrom is a bytesStore whose Updates fail from the n-th on.
type failFrom struct {
	*bytesStore
	from  int64
	calls atomic.Int64
}

func (s *failFrom) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if s.calls.Add(1) >= s.from {
		return errStoreDown
	}
	return s.bytesStore.Update(ctx, key, fn)
}

// TestStoreDownFoundLeaving checks that a Store's first failure, found by
// the Update of a request that stopped waiting, is reported: the Store was
// marked down with no EventStoreDown, and none came after.
func TestStoreDownFoundLeaving(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		store := &failFrom{bytesStore: newBytesStore(), from: 4} // 1,2: first request; 3: second's acquire; 4: its leave
		var mu sync.Mutex
		kinds := map[polite.EventKind]int{}
		tr := &polite.Transport{
			Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1,
			Budget:  &polite.Budget{Store: store},
			OnEvent: func(e polite.Event) { mu.Lock(); kinds[e.Kind]++; mu.Unlock() },
		}
		do := func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		do(t.Context()) // 429: the key pauses 30 s
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		if err := do(ctx); err == nil {
			t.Fatal("want a WaitError")
		}
		cancel()
		synctest.Wait()
		time.Sleep(2 * time.Second)
		ctx, cancel = context.WithTimeout(t.Context(), 5*time.Second)
		do(ctx) // the Store fails again
		cancel()
		synctest.Wait()
		if store.calls.Load() < 5 {
			t.Fatalf("%d Updates, want the Store asked again", store.calls.Load())
		}
		mu.Lock()
		defer mu.Unlock()
		if kinds[polite.EventStoreDown] == 0 {
			t.Errorf("no store-down event although the Store failed %d times; events: %v", store.calls.Load()-3, kinds)
		}
	})
}

// seedState writes into store, under key, the state a broken process
// whose clock runs ahead by skew leaves after one accepted request.
func seedState(t *testing.T, store *bytesStore, key string, skew time.Duration, cfg control.Config, out control.Outcome) {
	t.Helper()
	var s control.State
	var l control.Lease
	at := time.Now().Add(skew)
	if _, ok := s.Acquire(at, &cfg, control.Ask{}, &l); !ok {
		t.Fatal("seed: not granted")
	}
	s.Release(at.Add(time.Millisecond), &cfg, &l, &out)
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var ks polite.KeyState
	if err := ks.UnmarshalBinary(b); err != nil {
		t.Fatalf("the Store's bytes do not decode: %v", err)
	}
	store.states[key] = b
	store.gens[key] = s.Generation()
}

// getErr sends one GET through tr and reports its error.
func getErr(tr http.RoundTripper, url string) error {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// DESIGN.md §3: what a Budget over a Store cannot check while decoding
// it bounds before each request, "so that one bad write (a hostile or
// broken process sharing the store) holds the key, and keeps its stored
// state alive, no longer than a pause may" (MaxPause, 24 hours). The
// MaxRate spacing is bounded too, to one spacing: a process whose clock ran
// 300 days ahead held the key for 300 days before.
func TestStoreBoundsMaxRateNextStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newBytesStore()
		seedState(t, store, "http://api.test", 300*24*time.Hour, control.Config{MaxRate: 1}, control.Outcome{First: true, Bytes: -1})
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Budget: &polite.Budget{Store: store, MaxRate: 1}}
		time.Sleep(control.MaxPause + time.Hour) // past any pause, probe or lease the write may hold
		err := getErr(tr, "http://api.test/")
		var we *polite.WaitError
		if errors.As(err, &we) {
			t.Errorf("25h after the bad write, the key is still held: %v", err)
		} else if err != nil {
			t.Fatal(err)
		}
	})
}

// The same for the deadline of a live observation of a quota of requests:
// a broken process whose clock ran 300 days ahead saw r=0 with t=60; the
// pause it wrote is cut to 24 hours, and so is the observation's deadline,
// which held the key until then before.
func TestStoreBoundsObservationDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newBytesStore()
		seedState(t, store, "http://api.test", 300*24*time.Hour, control.Config{}, control.Outcome{First: true, Bytes: -1,
			Quotas: []parse.Quota{{Policy: "default", Unit: "requests", Limit: 10, Window: time.Minute, Remaining: 0, Reset: time.Minute}}})
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Budget: &polite.Budget{Store: store}}
		// The first request reads the state: its pause is cut to MaxPause.
		if err := getErr(tr, "http://api.test/"); err == nil {
			t.Log("first request went")
		}
		time.Sleep(control.MaxPause + time.Hour)
		err := getErr(tr, "http://api.test/")
		var we *polite.WaitError
		if errors.As(err, &we) {
			t.Errorf("25h after the bad write, the key is still held: %v", err)
		} else if err != nil {
			t.Fatal(err)
		}
	})
}

// jitteryStore is a MemoryStore whose calls take up to max each, drawn
// at random, and whose Waits return up to max late: a Store over a
// network, or a process short of CPU.
type jitteryStore struct {
	polite.MemoryStore
	max time.Duration
	mu  sync.Mutex
	rng *rand.Rand
}

func (s *jitteryStore) pause() {
	s.mu.Lock()
	d := time.Duration(s.rng.Int64N(int64(s.max)))
	s.mu.Unlock()
	time.Sleep(d)
}

func (s *jitteryStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	s.pause()
	defer s.pause()
	return s.MemoryStore.Update(ctx, key, fn)
}

func (s *jitteryStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	defer s.pause()
	return s.MemoryStore.Wait(ctx, key, gen, until)
}

// Requests held to an instant take turns (see internal/control's
// turn.go). Three Budgets sharing a Store whose calls took up to 10ms
// each, 48 workers, a fixed window of 300 a second, deadlines of 50ms to
// 2s: the turns ran ahead of every window, a layer of claims a grace
// after the one before: within 10 seconds a request was told to wait 24s
// (run for 20, no request went in the last 5, each told of 30s to 50s).
// The waits stay within about a window now.
func TestTurnsKeepPaceOverSlowStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 300, Window: time.Second}}, Latency: 20 * time.Millisecond})
		store := &jitteryStore{max: 10 * time.Millisecond, rng: rand.New(rand.NewPCG(1, 2))}
		var trs [3]*polite.Transport
		for i := range trs {
			trs[i] = &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, Budget: &polite.Budget{Store: store}}
		}
		const secs = 10
		var (
			mu      sync.Mutex
			ok      [secs]int
			longest *polite.WaitError
		)
		start := time.Now()
		var wg sync.WaitGroup
		for w := range 48 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 3))
				for time.Since(start) < secs*time.Second {
					d := 30 * time.Second
					if rng.IntN(5) != 0 {
						d = 50*time.Millisecond + time.Duration(rng.Int64N(int64(1950*time.Millisecond)))
					}
					ctx, cancel := context.WithTimeout(t.Context(), d)
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
					resp, err := trs[w%3].RoundTrip(req)
					sec := int(time.Since(start) / time.Second)
					var we *polite.WaitError
					mu.Lock()
					switch {
					case err == nil:
						resp.Body.Close()
						if sec < secs {
							ok[sec]++
						}
					case errors.As(err, &we):
						if longest == nil || we.Delay > longest.Delay {
							longest = we
						}
					case errors.Is(err, context.DeadlineExceeded):
						// Granted, and its deadline came before the
						// answer: the Store's delays and the server's.
					default:
						t.Errorf("request failed: %v", err)
					}
					mu.Unlock()
					cancel()
					if err != nil {
						time.Sleep(time.Millisecond) // the caller's backoff
					}
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Minute) // the Store calls of requests that left
		t.Logf("granted each second: %v; refused %d; longest %v", ok, h.Stats().Refused, longest)
		if longest != nil && longest.Delay > 2*time.Second {
			t.Errorf("a request was told to wait %v, for a window of 1s: %v", longest.Delay, longest)
		}
		// From the third second on (the first window spent, the second
		// waits for it and probes), at least a quarter of the quota:
		// a second can be lost whole, as a reset stated in whole seconds
		// can hold the key past the next window's start.
		if n := sumInts(ok[2:]); n < 300*(secs-2)/4 {
			t.Errorf("%d requests granted in seconds 2 to %d, for a quota of 300 a second and 48 workers", n, secs-1)
		}
	})
}

// sumInts returns the sum of ns.
func sumInts(ns []int) int {
	n := 0
	for _, v := range ns {
		n += v
	}
	return n
}
