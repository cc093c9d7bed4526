package storetest_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/storetest"
)

// remote is a store "in another process": it keeps states as bytes, with
// a TTL, and wakes waiters by "pub/sub". Every polite.Store a newStore
// returns from it is a client (one "process") of the same remote state.
// Its zero knobs make a conforming store; each knob breaks one rule.
type remote struct {
	// inProcessLock: an Update is atomic only within one client (a Go
	// mutex around GET, fn, SET), not across the clients sharing the
	// state.
	inProcessLock bool
	// noLock: an Update is not atomic at all: it reads the state, runs fn
	// on the copy and writes it back, with no lock or swap between.
	noLock bool
	// localWakes: an Update wakes only the waiters of its own client
	// (the notification is never published to the others).
	localWakes bool
	// ttlMinutesAsSeconds: the TTL set is the minutes to Expiry, taken as
	// seconds (60 times too short); ttlMinutesUp rounds the minutes up.
	ttlMinutesAsSeconds, ttlMinutesUp bool
	// maxValue, if set: a state whose binary form is longer is silently
	// not written (the old one stays); Update still returns nil.
	maxValue int
	// wakeAnyUpdate: every Update of the key wakes its waiters, and Wait
	// returns nil when woken, whether Generation grew or not.
	wakeAnyUpdate bool
	// cacheReads: a client reads a key from what it last wrote itself,
	// if it wrote it (a cache never invalidated by others' writes).
	cacheReads bool
	// keyPrefix, if set: a key is kept by its first keyPrefix bytes only
	// (memcached's 250, a fixed-width column), so that keys sharing
	// them share one state.
	keyPrefix int
	// lateBy: Wait returns this long after its deadline (a blocking pop
	// whose timeout is whole seconds rounded up, say).
	lateBy time.Duration
	// keepFirstTTL: a key's expiry is set when it is created only, and
	// kept by every later write (SET ... XX KEEPTTL).
	keepFirstTTL bool
	// waitOwnGen: Wait compares gen with the Generation its own client
	// last wrote or was woken with, never with the stored one (a
	// subscription made for each Wait): a change another process made
	// before the Wait is not seen.
	waitOwnGen bool
	// subscribeLate: Wait reads the Generation and subscribes to wakes in
	// two steps, a round trip of a millisecond apart (GET, then
	// SUBSCRIBE): a wake between them is lost.
	subscribeLate bool

	mu    sync.Mutex
	vals  map[string][]byte
	exp   map[string]time.Time
	wakes map[string]chan struct{}
}

type client struct {
	r     *remote
	seen  map[string]uint64        // waitOwnGen; guarded by r.mu
	mu    sync.Mutex               // inProcessLock
	local map[string]chan struct{} // localWakes; guarded by r.mu
	cache map[string][]byte        // cacheReads; guarded by r.mu
}

func (r *remote) client() polite.Store {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.vals == nil {
		r.vals, r.exp, r.wakes = map[string][]byte{}, map[string]time.Time{}, map[string]chan struct{}{}
	}
	return &client{r: r, local: map[string]chan struct{}{}, cache: map[string][]byte{}, seen: map[string]uint64{}}
}

// stored returns the key the remote keeps key as.
func (r *remote) stored(key string) string {
	if r.keyPrefix > 0 && len(key) > r.keyPrefix {
		return key[:r.keyPrefix]
	}
	return key
}

// get returns key's state; r.mu held.
func (r *remote) get(key string) polite.KeyState {
	var ks polite.KeyState
	if e, ok := r.exp[key]; ok && !time.Now().Before(e) {
		delete(r.vals, key)
		delete(r.exp, key)
	}
	if err := ks.UnmarshalBinary(r.vals[key]); err != nil {
		panic(err)
	}
	return ks
}

// read returns key's state as this client sees it; r.mu held.
func (c *client) read(key string) polite.KeyState {
	if b, ok := c.cache[key]; ok && c.r.cacheReads {
		var ks polite.KeyState
		if err := ks.UnmarshalBinary(b); err != nil {
			panic(err)
		}
		return ks
	}
	return c.r.get(key)
}

func (c *client) registry() map[string]chan struct{} {
	if c.r.localWakes {
		return c.local
	}
	return c.r.wakes
}

// set keeps ks for key and wakes as configured; r.mu held.
func (c *client) set(key string, old uint64, ks *polite.KeyState) {
	r := c.r
	b, err := ks.MarshalBinary()
	if err != nil {
		panic(err)
	}
	if r.maxValue > 0 && len(b) > r.maxValue {
		return
	}
	c.cache[key] = b
	if len(b) == 0 {
		delete(r.vals, key)
		delete(r.exp, key)
	} else {
		_, had := r.vals[key]
		r.vals[key] = b
		e := ks.Expiry()
		switch {
		case r.ttlMinutesAsSeconds:
			e = time.Now().Add(time.Duration(int(time.Until(e).Minutes())) * time.Second)
		case r.ttlMinutesUp:
			e = time.Now().Add(time.Duration(math.Ceil(time.Until(e).Minutes())) * time.Second)
		}
		if !had || !r.keepFirstTTL {
			r.exp[key] = e
		}
	}
	c.seen[key] = ks.Generation()
	if ks.Generation() > old || r.wakeAnyUpdate {
		reg := c.registry()
		if ch := reg[key]; ch != nil {
			close(ch)
			delete(reg, key)
		}
	}
}

func (c *client) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := c.r
	key = r.stored(key)
	if r.inProcessLock || r.noLock {
		if !r.noLock {
			c.mu.Lock()
			defer c.mu.Unlock()
		}
		r.mu.Lock()
		ks := c.read(key)
		r.mu.Unlock()
		old := ks.Generation()
		fn(&ks)
		r.mu.Lock()
		c.set(key, old, &ks)
		r.mu.Unlock()
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ks := c.read(key)
	old := ks.Generation()
	fn(&ks)
	c.set(key, old, &ks)
	return nil
}

func (c *client) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	key = c.r.stored(key)
	var fire <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until) + c.r.lateBy)
		defer t.Stop()
		fire = t.C
	}
	for {
		c.r.mu.Lock()
		ks := c.r.get(key)
		cur := ks.Generation()
		if c.r.waitOwnGen {
			cur = c.seen[key]
		}
		if cur > gen {
			c.r.mu.Unlock()
			return nil
		}
		if c.r.subscribeLate {
			c.r.mu.Unlock()
			time.Sleep(time.Millisecond)
			c.r.mu.Lock()
		}
		reg := c.registry()
		ch := reg[key]
		if ch == nil {
			ch = make(chan struct{})
			reg[key] = ch
		}
		c.r.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-fire:
			return nil
		case <-ch:
			if c.r.wakeAnyUpdate {
				return nil
			}
			if c.r.waitOwnGen {
				c.r.mu.Lock()
				ks := c.r.get(key)
				c.seen[key] = ks.Generation() // as the notification says
				c.r.mu.Unlock()
			}
		}
	}
}

// canceledNil is a MemoryStore whose Update, when its context has ended,
// returns nil without calling fn: it reports as kept a state it never
// wrote.
type canceledNil struct{ polite.MemoryStore }

func (s *canceledNil) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	if ctx.Err() != nil {
		return nil
	}
	return s.MemoryStore.Update(ctx, key, fn)
}

// brokenChild names, in the environment of a child process, the subtest
// whose broken store the child runs the suites on.
const brokenChild = "STORETEST_BROKEN_CHILD"

// brokenStore is a store that breaks one rule of polite.Store, which the
// suites must catch.
type brokenStore struct {
	name, broken string // the subtest's name; what the store does wrong
	store        func() polite.Store
	// storeOnly runs storetest.TestStore alone: a store with one handle
	// need not pass TestSharedStore.
	storeOnly bool
	// oneCPU runs the suites with GOMAXPROCS=1, as a CI container of one
	// CPU does.
	oneCPU bool
}

// suitesMustFail runs storetest.TestStore and storetest.TestSharedStore on
// each store in a child process of its own (a failing suite would fail t
// itself), and fails the subtest named for a store if both suites pass it.
// The children run all at once: each spends nearly all its time asleep,
// in the suites' waits, and one after another they took a minute and a
// half. In a child, it runs the suites on the store the child is for.
func suitesMustFail(t *testing.T, stores []brokenStore) {
	t.Helper()
	if name := os.Getenv(brokenChild); name != "" {
		for _, bs := range stores {
			t.Run(bs.name, func(t *testing.T) {
				if t.Name() != name {
					return
				}
				storetest.TestStore(t, func(*testing.T) polite.Store { return bs.store() })
				if !t.Failed() && !bs.storeOnly {
					storetest.TestSharedStore(t, func(*testing.T) (polite.Store, polite.Store) { return bs.store(), bs.store() })
				}
			})
		}
		return
	}
	type result struct {
		out []byte
		err error
	}
	results := make([]chan result, len(stores))
	for i, bs := range stores {
		name := t.Name() + "/" + bs.name
		cmd := exec.Command(os.Args[0], "-test.run=^"+strings.ReplaceAll(name, "/", "$/^")+"$", "-test.count=1")
		cmd.Env = append(os.Environ(), brokenChild+"="+name)
		if bs.oneCPU {
			cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		results[i] = make(chan result, 1)
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting the child for %s: %v", name, err)
		}
		go func() {
			err := cmd.Wait()
			results[i] <- result{out.Bytes(), err}
		}()
	}
	for i, bs := range stores {
		t.Run(bs.name, func(t *testing.T) {
			if r := <-results[i]; r.err == nil {
				t.Errorf("the suite passes a store that %s:\n%s", bs.broken, r.out)
			}
		})
	}
}

// The remote store with no rule broken passes both suites, so that the
// tests below fail for the rule each breaks.
func TestRemoteConforms(t *testing.T) {
	r := &remote{}
	storetest.TestStore(t, func(*testing.T) polite.Store { return r.client() })
	storetest.TestSharedStore(t, func(*testing.T) (polite.Store, polite.Store) { return r.client(), r.client() })
}

// Each of these broken stores passed storetest.TestStore, which runs every
// check through one handle and writes only small states.
func TestSuiteCatchesBrokenStores(t *testing.T) {
	if testing.Short() {
		// Some twenty runs of the suites, mostly waiting in real time.
		t.Skip("runs the suites some twenty times, waiting in real time: run without -short")
	}
	suitesMustFail(t, []brokenStore{
		{name: "AtomicOnlyInProcess", broken: "runs Update under a lock of its process only: two processes sharing it lose updates",
			store: (&remote{inProcessLock: true}).client},
		{name: "WakesOnlyInProcess", broken: "wakes only the waiters of the process whose Update made Generation grow",
			store: (&remote{localWakes: true}).client},
		{name: "StaleReadsAcrossProcesses", broken: "reads a key from what its own client last wrote, missing other processes' writes",
			store: (&remote{cacheReads: true}).client},
		{name: "DropsLargeStates", broken: "silently keeps the old state when the new one's binary form is over 1 KiB",
			store: (&remote{maxValue: 1024}).client},
		{name: "WaitWokenWithoutGrowth", broken: "returns from Wait on any Update of the key, Generation grown or not",
			store: (&remote{wakeAnyUpdate: true}).client},
		{name: "TTLMinutesAsSeconds", broken: "keeps a state for the minutes to its Expiry taken as seconds, 60 times too short",
			store: (&remote{ttlMinutesAsSeconds: true}).client},
		// The suite's states had an Expiry 90 s away: two minutes,
		// rounded up, kept them 2 s, past its look at 1.1 s.
		{name: "TTLMinutesAsSecondsRoundedUp", broken: "keeps a state for the minutes to its Expiry, rounded up, taken as seconds: 60 times too short",
			store: (&remote{ttlMinutesUp: true}).client},
		{name: "KeysCutShort", broken: "keeps only the first 250 bytes of a key, so that keys sharing them share one state",
			store: (&remote{keyPrefix: 250}).client},
		{name: "WaitsPastDeadline", broken: "returns from Wait two seconds after its deadline, starting every paced request two seconds late",
			store: (&remote{lateBy: 2 * time.Second}).client},
		{name: "KeepsFirstTTL", broken: "keeps a key's first time to live through later writes, forgetting a pause written after a short idle expiry",
			store: (&remote{keepFirstTTL: true}).client},
		{name: "WaitComparesOwnGeneration", broken: "compares Wait's generation with the one its own process last saw, missing a change another process made before the Wait",
			store: (&remote{waitOwnGen: true}).client},
		{name: "SubscribesAfterReading", broken: "reads the Generation and subscribes to wakes in two steps, losing a wake that comes between them",
			store: (&remote{subscribeLate: true}).client},
		{name: "UpdateNilWhenCanceled", broken: "returns nil from Update without calling fn when its context has ended",
			store: func() polite.Store { return &canceledNil{} }},
		// The suite let a second pass between writes of one key.
		{name: "ForgetsBeforeExpiry", broken: "forgets a state 300ms after its last update, long before its Expiry",
			store: (&forgetful{last: map[string]time.Time{}}).self},
		// When WaitUntil first measured a late Wait up to three times,
		// it made no Update between the tries: this store was on time
		// at the second try. Each try follows an Update now.
		{name: "LateFirstWaitAfterUpdate", broken: "returns from the first Wait after each Update two seconds after its deadline, starting every paced request two seconds late",
			store: lateAfterUpdateClients()},
		// On one CPU, the goroutines of the concurrent Updates did not
		// interleave between a read and its write until fn yielded.
		{name: "NoLockOneCPU", broken: "reads a state, runs fn on the copy and writes it back with no lock or swap, on one CPU, its one handle checked by TestStore alone",
			store: (&remote{noLock: true}).client, storeOnly: true, oneCPU: true},
	})
}
