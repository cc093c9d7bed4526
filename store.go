package polite

import (
	"context"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// KeyState is the opaque state of one budget key: what its server stated,
// the live observations, the pause, the probe and ramp-up, the learned
// quota, the retry budget and the leases of its requests in flight. A
// [Store] keeps it; only a [Budget] reads or changes it.
//
// The zero value is a key never used: its first request probes.
type KeyState struct {
	c control.State
}

// MarshalBinary returns the binary form of s, for a Store that keeps
// bytes: a version byte and varints, typically a few hundred bytes, and
// never more than 64 KiB. The zero KeyState is the empty form.
func (s *KeyState) MarshalBinary() ([]byte, error) { return s.c.MarshalBinary() }

// UnmarshalBinary sets s from its binary form. It accepts any input
// without panicking, in time linear in its length: data that is not a form
// MarshalBinary writes (another version, a value out of bounds, trailing
// bytes) returns an error and leaves s unchanged. The empty form is the
// zero KeyState.
func (s *KeyState) UnmarshalBinary(data []byte) error { return s.c.UnmarshalBinary(data) }

// Generation counts the changes of s that waiters wait for: a release
// (one request fewer in flight, or something learned that may free a
// holder), leases expiring, the key being forgotten. It only grows. A
// Store wakes the waiters of a key when an Update leaves its Generation
// higher than it found it.
func (s *KeyState) Generation() uint64 { return s.c.Generation() }

// Format writes s as its Generation and Expiry, for every verb (%v, %+v,
// %#v, ...): a state holds what servers sent, partition keys among them,
// which polite shows only as a hash (see [PolicyState]), and a Store that
// logs the states it keeps must not show them whole. [Budget.Inspect]
// shows what a key holds.
func (s KeyState) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "polite.KeyState{Generation: %d, Expiry: %s}", s.c.Generation(), s.c.Expiry().Format(time.RFC3339Nano))
}

// Expiry returns when a Store may forget s: the Budget's IdleTTL after the
// key's last request or the end of its pause, whichever is later; not
// before its last lease expires, nor before a stop of retries ends, nor
// before the last start a stated quota counts leaves its window or a cost
// quota spent from is whole again (at most 24 hours), nor before the
// Budget's MaxRate lets its next request start. It is the zero time for the zero KeyState, which a Store need
// not keep at all.
func (s *KeyState) Expiry() time.Time { return s.c.Expiry() }

// Store keeps the [KeyState] of every budget key, for a [Budget]. The
// in-memory [MemoryStore] is the default; a Store shared by several
// processes (on Redis, say) lets them pace together, as one client. Every
// pacing rule runs in the Budget, in Go: a Store keeps states and wakes
// waiters, nothing more. Package
// [github.com/politehttp/polite/storetest] tests an implementation.
//
// A Store must be safe for concurrent use by multiple goroutines.
type Store interface {
	// Update calls fn with key's state (a zero KeyState if the store has
	// none, or has forgotten it after its Expiry) and keeps what fn
	// leaves, atomically per key. A store that retries on conflict calls
	// fn again with fresh state, so fn acts on nothing but its argument.
	// When Generation grew, the store wakes the key's waiters. A state
	// left zero may be deleted. An error means the state may not have
	// been kept. An error returned once ctx has ended is read as ctx's
	// end, not the store failing, unless it does not wrap ctx.Err() and
	// comes more than 25 ms after ctx's deadline (a timeout of the
	// store's own, longer than the request's deadline, ended the call):
	// then the Budget goes on with its fallback (see Budget).
	//
	// A key is an origin, normalised ("https://api.example:8443"), of at
	// most some 300 bytes (a longer scheme or host is handed as its
	// digest), or what a Transport.Key returned, verbatim: of any length
	// and any bytes (NUL, bytes that are not UTF-8), and perhaps a
	// credential, which polite itself shows only as a fingerprint. A
	// store that keeps its keys where others may read them, or that
	// limits their length or bytes, keeps a hash of each instead, as
	// redisstore does: an error for a key it refuses fails every request
	// of the key, and sends every key to the fallback for a second. So
	// does an error for a stored state that UnmarshalBinary rejects
	// (written by another version of polite, or damaged), at every
	// request of the key until the state expires: a store reads such a
	// state as none, and fn's result replaces it.
	Update(ctx context.Context, key string, fn func(*KeyState)) error

	// Wait blocks until key's Generation exceeds gen, until the instant
	// until (zero: no deadline), or ctx ends; it returns nil in the first
	// two cases, ctx.Err() in the last. It must not lose a wake that
	// happened between the Update that returned gen and the call to Wait.
	Wait(ctx context.Context, key string, gen uint64, until time.Time) error
}

// MemoryStore is a [Store] that keeps states in this process, in
// memory: the default of a [Budget]. A Budget whose Store is a MemoryStore
// runs the controller on the stored state in place, with no serialisation
// and no allocation on a request's path.
//
// The zero value is ready to use. A MemoryStore is safe for concurrent use
// by multiple goroutines. Its fields must not be changed after first use,
// nor the MemoryStore copied.
//
// Keys are spread over shards with a lock each, so that different keys
// seldom contend. A state is forgotten after its Expiry (lazily, when it is
// looked up or a new key comes in: no goroutine runs in the background),
// and at most MaxKeys are kept, the least recently used going first
// (within its shard, when MaxKeys is 4096 or more; a few more than MaxKeys
// may be kept for an instant). A key that requests wait on is not evicted,
// nor one with a request in flight (evicted, its next request went beside
// the first): the store keeps more than MaxKeys only by such keys, and
// drops the surplus as new keys come in. Of the 8 least recently used
// keys that may go, the one whose state holds its next start back least
// long (a pause, Budget.MaxRate's spacing, a quota's pacing) goes first,
// so that a key paused for an hour (a Retry-After whose refusal went back
// to the caller) is not forgotten while a key that holds nothing back may
// go. An evicted key's next request starts fresh: Budget.MaxRate's
// spacing since its last start is lost with it (kept, every key used
// within 1/MaxRate would be).
type MemoryStore struct {
	// MaxKeys is the most keys kept at once. If zero or negative, 65536.
	MaxKeys int

	once   sync.Once
	shards *[]memShard // behind a pointer, which fmt prints as an address: it holds the keys
	seed   maphash.Seed
	max    int64
	count  atomic.Int64
}

const (
	defaultMaxKeys = 1 << 16
	shardedFrom    = 4096 // MaxKeys from which keys are spread over memShards shards
	memShards      = 64
)

// memShard is one lock's share of a MemoryStore.
type memShard struct {
	mu         sync.Mutex
	m          map[memKey]*memEntry
	head, tail *memEntry     // least recently used list: head most recent
	last       *memEntry     // the entry looked up last: a key asked again needs no map lookup
	created    chan struct{} // closed when an entry is made; nil when nobody waits for a key with none
	born       int64         // the identity of the last state made here (see control.State.Begin)
	_          [8]byte       // keeps shards on separate cache lines
}

// memKey is a store key split at "://": an origin's scheme and host, or
// a custom key whole (scheme empty). Splitting costs no allocation, and
// maps one to one to the key's string.
type memKey struct {
	scheme, host string
}

// clone returns k with strings of its own. A key is cut from the request's
// URL without a copy; kept so, it would keep the whole URL, of a megabyte
// maybe (a link, a redirect's Location), for as long as the key's state.
func (k memKey) clone() memKey {
	return memKey{scheme: strings.Clone(k.scheme), host: strings.Clone(k.host)}
}

func splitKey(key string) memKey {
	if i := strings.Index(key, "://"); i > 0 {
		return memKey{scheme: key[:i], host: key[i+3:]}
	}
	return memKey{host: key}
}

func (k memKey) String() string {
	if k.scheme == "" {
		return k.host
	}
	return k.scheme + "://" + k.host
}

// memEntry is one key's state.
type memEntry struct {
	key        memKey
	sh         *memShard
	prev, next *memEntry
	ks         KeyState
	changed    chan struct{} // closed when Generation grows; nil when nobody waits
	waiters    int32         // requests waiting on it now (see evictable)
	gone       bool          // removed from its shard
	// mirror, in a Budget's fallback only, is the end of the latest
	// pause copied from the Store (see Budget.releaseExt), in
	// nanoseconds since 1970: a pause no later is the Store's own, not
	// one learned while it failed (see learned).
	mirror int64
	// spaced, in a Budget's fallback only, is the latest next start of
	// Config.MaxRate copied from the Store (see space), in nanoseconds
	// since 1970: a next start no later is the Store's own, which another
	// process may have cleared since (Budget.Forget), not one the
	// fallback set granting a request (see MemoryStore.spaced).
	spaced int64
	// own, in a Budget's fallback only, is the end of the latest pause a
	// release on it set, learned while the Store failed, with its reason
	// (see Budget.ownPause): carried into the Store however it compares
	// with a pause copied from there (see learned); 0 once carried, or
	// none.
	own    int64
	ownWhy control.Reason
	// copies, in a Budget's fallback only, counts the pauses copied from
	// the Store into the state (see pause and mirrored): a reading of the
	// Store made before the latest copy does not drop it (see unmirror).
	copies uint64
	// memo is the memo of a Transport whose key was found to be this
	// entry's key: a key from it is, with no comparison of strings.
	memo *keyMemo
	// rd reads the key's responses, remembering the RateLimit-Policy and
	// the Date its server repeats. It is not part of the KeyState: it
	// is never serialised, and is used outside the shard's lock.
	rd parse.Reader
}

func (s *MemoryStore) init() {
	s.once.Do(func() {
		s.max = int64(s.MaxKeys)
		if s.max <= 0 {
			s.max = defaultMaxKeys
		}
		n := 1
		if s.max >= shardedFrom {
			n = memShards
		}
		shards := make([]memShard, n)
		for i := range shards {
			shards[i].m = make(map[memKey]*memEntry)
		}
		s.shards = &shards
		s.seed = maphash.MakeSeed()
	})
}

func (s *MemoryStore) shard(k memKey) *memShard {
	s.init()
	shards := *s.shards
	if len(shards) == 1 {
		return &shards[0]
	}
	return &shards[maphash.String(s.seed, k.host)&(memShards-1)]
}

// prune removes up to two entries at the tail of sh, the least recently
// used, expired at now. sh must be locked.
func (s *MemoryStore) prune(sh *memShard, now int64) {
	for range 2 {
		if t := sh.tail; t != nil && expired(t, now) {
			s.remove(sh, t)
		}
	}
}

// entry returns k's entry, creating it when create is set; nil if there
// is none. A state past its Expiry is forgotten first. A new entry makes
// room: a few idle states at the back of the shard's list are forgotten,
// and the least recently used one if the store is full. sh must be locked.
func (s *MemoryStore) entry(sh *memShard, k memKey, now int64, create bool) *memEntry {
	e := sh.last
	if e == nil || e.key != k {
		e = sh.m[k]
	}
	if e != nil && expired(e, now) {
		s.remove(sh, e)
		e = nil
	}
	if e == nil {
		if !create {
			return nil
		}
		s.prune(sh, now)
		// At most MaxKeys, the least recently used going first, but
		// never a key requests wait on: woken by its eviction, they
		// would make their key again, evicting another's, whose
		// waiters would do the same, without end (with 4 keys for 10
		// origins, 16 workers spun at one instant). Nor one with a
		// request in flight: evicted, it let a second request go
		// beside the first past the Budget's MaxConcurrency. A key
		// made when no key to evict is found is kept beyond MaxKeys;
		// each later key made removes two while there are more.
		for range 2 {
			if s.count.Load() < s.max {
				break
			}
			v := sh.evictable(now)
			if v == nil {
				break
			}
			s.remove(sh, v)
		}
		k = k.clone()
		e = &memEntry{key: k, sh: sh}
		// A key forgotten and used again at the same instant is a new
		// incarnation still: the ends of the old one's leases are not
		// its own. Every key of the shard shares the floor.
		sh.born = e.ks.c.Begin(now, sh.born)
		sh.m[k] = e
		s.count.Add(1)
		if sh.created != nil {
			close(sh.created) // waiters for a key with no state look again
			sh.created = nil
		}
	} else if sh.head == e {
		sh.last = e
		return e
	} else {
		sh.unlink(e)
	}
	sh.last = e
	e.next = sh.head
	if sh.head != nil {
		sh.head.prev = e
	}
	sh.head = e
	if sh.tail == nil {
		sh.tail = e
	}
	return e
}

// evictable returns the entry of sh to evict at now, looking at the 8
// least recently used that may go at most, those that no request waits on
// and that are not in use at now (see control.State.InUse): the one whose state
// holds a next start back least long (control.State.HeldUntil: its pause,
// Budget.MaxRate's spacing, its quotas' pacing), the least recently used
// of equals; nil if none may go. An entry waited on or in use that it
// passes goes to the front, as if just used, so that the next look starts
// past it: a store whose oldest keys are waited on for long (an hour's
// pause) evicts the others still, and keeps beyond MaxKeys no more keys
// than it has waited on or in use. The others keep their places. Evicted
// as the least recently used whatever it held, a key paused for an hour
// by a Retry-After (its refusal returned to the caller) was forgotten and
// its next request went at once.
func (sh *memShard) evictable(now int64) *memEntry {
	var (
		best *memEntry
		held int64
	)
	// Only the keys that may go count towards the 8 (counted, seven keys
	// in flight behind a key paused for an hour had it evicted while an
	// idle key just past them stayed). Each entry is visited once at most,
	// the ones moved to the front too: the walk stops at len(sh.m).
	t := sh.tail
	for looked, visited := 0, 0; looked < 8 && t != nil && visited < len(sh.m); visited++ {
		prev := t.prev
		if t.waiters == 0 && !t.ks.c.InUse(now) {
			looked++
			h := max(t.ks.c.HeldUntil(now), now)
			if best == nil || h < held {
				best, held = t, h
			}
			if h == now {
				break // holds nothing back: none can beat it
			}
		} else if t != sh.head {
			sh.unlink(t)
			t.next = sh.head
			sh.head.prev = t
			sh.head = t
		}
		t = prev
	}
	return best
}

// expired reports whether e's state may be forgotten at now.
func expired(e *memEntry, now int64) bool { return forgettable(&e.ks, now) }

// forgettable reports whether a store may forget ks at now, as MemoryStore
// does: past its Expires, and Forgettable.
func forgettable(ks *KeyState, now int64) bool {
	return ks.c.Expires() <= now && ks.c.Forgettable(now)
}

func (sh *memShard) unlink(e *memEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		sh.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		sh.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// remove forgets e and wakes its waiters, so that they start over on a
// fresh state.
func (s *MemoryStore) remove(sh *memShard, e *memEntry) {
	sh.unlink(e)
	delete(sh.m, e.key)
	if sh.last == e {
		sh.last = nil
	}
	s.count.Add(-1)
	e.gone = true
	e.wake()
}

func (e *memEntry) wake() {
	if e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
}

// Update implements [Store]. fn runs under the lock of key's shard: it
// must not call the store.
func (s *MemoryStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k := splitKey(key)
	sh := s.shard(k)
	now := time.Now().UnixNano()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := s.entry(sh, k, now, false)
	if e == nil {
		// A key with no state gets an entry only if fn leaves one: an
		// entry made first would make room in a full store, evicting a
		// live key for an Update that changes nothing (Inspect's, say).
		var ks KeyState
		ks.c.Begin(now, sh.born) // what the entry's Begin will give
		if fn(&ks); ks.c.IsZero() {
			return nil
		}
		e = s.entry(sh, k, now, true)
		e.ks = ks
		if ks.Generation() > 0 {
			e.wake()
		}
		return nil
	}
	gen := e.ks.Generation()
	fn(&e.ks)
	switch {
	case e.ks.c.IsZero():
		s.remove(sh, e)
	case e.ks.Generation() > gen:
		e.wake()
	}
	return nil
}

// Wait implements [Store].
func (s *MemoryStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.wait(ctx, splitKey(key), gen, 0, until, nil, false)
}

// wait is Wait with a timer to reuse (nil: make one). held reports that
// the hold the caller waits out came from this store's state for k, born
// (see control.Hold.Born; 0: not known): if k has none now, or a new one,
// that state was forgotten (Forget, eviction or expiry) since, which wakes
// the waiter as a change does. A new one is told by its identity: its
// Generation counts from its own start, and, told by that alone, a state
// whose count had reached gen again held its waiter until the old hold's
// end (TestWaitNewIncarnationSameGeneration).
func (s *MemoryStore) wait(ctx context.Context, k memKey, gen uint64, born int64, until time.Time, timer **time.Timer, held bool) error {
	sh := s.shard(k)
	var fire <-chan time.Time
	for {
		// The timer first: a wait whose end has passed returns before it
		// counts as a waiter (counted and not taken back, the entry was
		// never evicted again).
		if fire == nil && !until.IsZero() {
			d := time.Until(until)
			if d <= 0 {
				return nil
			}
			var local *time.Timer
			if timer == nil {
				timer = &local
			}
			if *timer == nil {
				*timer = time.NewTimer(d)
			} else {
				(*timer).Reset(d)
			}
			if local != nil {
				defer local.Stop()
			}
			fire = (*timer).C
		}
		sh.mu.Lock()
		e := sh.m[k]
		var changed chan struct{}
		switch {
		case e == nil && held:
			sh.mu.Unlock()
			return nil
		case e == nil:
			// No state: the next one made in the shard wakes the waiter,
			// which looks again (it may be another key's, or not yet
			// past gen).
			if sh.created == nil {
				sh.created = make(chan struct{})
			}
			changed = sh.created
		case e.ks.Generation() > gen, held && (e.ks.Generation() < gen || born != 0 && e.ks.c.Born() != born):
			// Grown; or a new state: below what the waiter saw (its
			// generation starts over), or of another incarnation.
			sh.mu.Unlock()
			return nil
		default:
			if e.changed == nil {
				e.changed = make(chan struct{})
			}
			changed = e.changed
			e.waiters++
		}
		sh.mu.Unlock()

		var err error
		done := true
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-fire:
		case <-changed:
			done = e != nil // changed, or forgotten: started over
		}
		if e != nil {
			sh.mu.Lock()
			e.waiters--
			sh.mu.Unlock()
		}
		if done {
			return err
		}
	}
}

// acquire runs Acquire on k's state in place. sh is k's shard, if known
// (nil: look it up). A grant comes with the entry that holds the state,
// for release.
func (s *MemoryStore) acquire(sh *memShard, k memKey, now time.Time, cfg *control.Config, ask control.Ask, g *lease) (control.Hold, bool) {
	if sh == nil {
		sh = s.shard(k)
	}
	sh.mu.Lock()
	e := s.entry(sh, k, now.UnixNano(), true)
	gen := e.ks.c.Generation()
	var (
		h  control.Hold
		ok bool
	)
	h, ok = e.ks.c.Acquire(now, cfg, ask, &g.Lease)
	if e.ks.c.Generation() > gen {
		e.wake()
	}
	if ok {
		// A next start of the state's own from here (a Budget's
		// fallback granting while its Store fails): see spaced.
		e.spaced = 0
	}
	sh.mu.Unlock()
	if ok {
		g.e, g.at = e, now
	}
	return h, ok
}

// acquireAt is acquire on key at the Transport clock's reading now, which
// the grant keeps instead of a time.Time.
func (s *MemoryStore) acquireAt(key *budgetKey, now reading, cfg *control.Config, ask *control.Ask, g *lease) (control.Hold, bool) {
	sh := key.sh
	if sh == nil {
		sh = s.shard(key.m)
	}
	var unix, inst int64
	if now.exact() { // unixInstant, inline
		unix = now.b.unix + int64(now.d)
		inst = control.InstantOf(unix)
	} else {
		unix, inst = now.unixInstant()
	}
	sh.mu.Lock()
	e := sh.last
	if e == nil || (e.memo != key.memo || key.memo == nil) && e.key != key.m || expired(e, unix) || sh.head != e {
		e = s.entry(sh, key.m, unix, true)
	}
	if e.memo != key.memo && key.memo != nil {
		e.memo = key.memo // the next key from the memo needs no comparison
	}
	gen := e.ks.c.Generation()
	h, ok := e.ks.c.AcquireInstant(inst, cfg, ask, &g.Lease)
	if e.ks.c.Generation() > gen {
		e.wake()
	}
	sh.mu.Unlock()
	if ok {
		g.e, g.from = e, now
	}
	return h, ok
}

// lockGranted locks the shard of k and returns it with the entry that
// granted g, or, if that entry was forgotten since (or g came from no
// entry), k's current entry: made anew if create, else nil when k has none.
// The caller unlocks the shard.
func (s *MemoryStore) lockGranted(k memKey, now time.Time, g *lease, create bool) (*memShard, *memEntry) {
	if e := g.e; e != nil {
		e.sh.mu.Lock()
		if e.gone {
			e = s.entry(e.sh, k, now.UnixNano(), create)
		}
		return g.e.sh, e
	}
	sh := s.shard(k)
	sh.mu.Lock()
	return sh, s.entry(sh, k, now.UnixNano(), create)
}

// release runs Release on k's state in place: on the entry that granted
// g, unless it was forgotten since.
func (s *MemoryStore) release(k memKey, now time.Time, cfg *control.Config, g *lease, out *control.Outcome) control.Plan {
	return s.releaseAt(&k, now, control.Instant(now), cfg, g, out)
}

// releaseAt is release at now, whose instant on the controller's clock is
// ns.
func (s *MemoryStore) releaseAt(k *memKey, now time.Time, ns int64, cfg *control.Config, g *lease, out *control.Outcome) control.Plan {
	var sh *memShard
	e := g.e
	if e != nil {
		// The entry that granted g, as nearly always: lockGranted's
		// first case, inline.
		sh = e.sh
		sh.mu.Lock()
		if e.gone {
			e = s.entry(sh, *k, now.UnixNano(), true)
		}
	} else {
		sh, e = s.lockGranted(*k, now, g, true)
	}
	c := &e.ks.c
	if c.ReleasesQuietly(ns, &g.Lease, out) {
		c.ReleaseQuiet(ns, cfg, &g.Lease, out)
		e.wake()
		sh.mu.Unlock()
		return control.Plan{}
	}
	p := c.ReleaseAt(now, ns, cfg, &g.Lease, out)
	e.wake()
	sh.mu.Unlock()
	return p
}

// releaseAccepted is releaseAt at the arrival arr of an answer that was
// not a refusal, whose Plan is the zero Plan.
func (s *MemoryStore) releaseAccepted(k *memKey, arr *arrival, cfg *control.Config, g *lease, out *control.Outcome) {
	e := g.e
	if e == nil {
		s.releaseAt(k, arr.wall, arr.ns, cfg, g, out)
		return
	}
	sh := e.sh
	sh.mu.Lock()
	if e.gone {
		e = s.entry(sh, *k, arr.wall.UnixNano(), true)
	}
	if c := &e.ks.c; c.ReleasesQuietly(arr.ns, &g.Lease, out) {
		c.ReleaseQuiet(arr.ns, cfg, &g.Lease, out)
	} else {
		c.ReleaseAt(arr.wall, arr.ns, cfg, &g.Lease, out)
	}
	e.wake()
	sh.mu.Unlock()
}

// end runs End on k's state in place, for a lease g whose Release kept it
// in flight: on the entry that granted it, unless it was forgotten since,
// in which case nothing is left to end.
func (s *MemoryStore) end(k memKey, now time.Time, cfg *control.Config, g *lease) {
	sh, e := s.lockGranted(k, now, g, false)
	if e != nil {
		gen := e.ks.c.Generation()
		e.ks.c.End(now, cfg, &g.Lease)
		if e.ks.c.Generation() > gen {
			e.wake()
		}
	}
	sh.mu.Unlock()
}

// leave runs Leave on k's state, if it has one.
func (s *MemoryStore) leave(k memKey, now time.Time, since time.Time, claimed, placed bool) {
	sh := s.shard(k)
	sh.mu.Lock()
	if e := s.entry(sh, k, now.UnixNano(), false); e != nil {
		gen := e.ks.c.Generation()
		e.ks.c.Leave(since, claimed, placed)
		if e.ks.c.Generation() > gen {
			e.wake()
		}
	}
	sh.mu.Unlock()
}

// mirrored records that a pause of k's state until until is the Store's
// too (see memEntry.mirror).
func (s *MemoryStore) mirrored(k memKey, until time.Time) {
	sh := s.shard(k)
	sh.mu.Lock()
	if e := sh.m[k]; e != nil {
		e.mirror = max(e.mirror, until.UnixNano())
		e.copies++
		if e.own <= until.UnixNano() {
			e.own, e.ownWhy = 0, control.ReasonNone // carried
		}
	}
	sh.mu.Unlock()
}

// owned records that a release on k's state, learned while the Store
// failed, paused it until until for why (see memEntry.own).
func (s *MemoryStore) owned(k memKey, until time.Time, why control.Reason) {
	sh := s.shard(k)
	sh.mu.Lock()
	if e := sh.m[k]; e != nil && until.UnixNano() > e.own {
		e.own, e.ownWhy = until.UnixNano(), why
	}
	sh.mu.Unlock()
}

// copiesOf returns how many pauses were copied from the Store into k's
// state so far (see memEntry.copies).
func (s *MemoryStore) copiesOf(k memKey) uint64 {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.m[k]; e != nil {
		return e.copies
	}
	return 0
}

// wakeAll wakes every request waiting on a state of s: the Store, which
// a Budget's fallback stands in for, answers again, and a request held
// here looks at the key's state there (another process may have cleared
// the pause held: Budget.Forget).
func (s *MemoryStore) wakeAll() {
	s.init()
	shards := *s.shards
	for i := range shards {
		sh := &shards[i]
		sh.mu.Lock()
		for _, e := range sh.m {
			if e.changed != nil {
				e.wake()
			}
		}
		sh.mu.Unlock()
	}
}

// unmirror drops what k's state holds of a pause copied from the Store
// (see memEntry.mirror) that ends later than the Store's pause at now,
// until (zero: none), read when copies pauses had been copied into it:
// another process cleared it there (Budget.Forget), and the copy, kept,
// held the key again in this process once the Store failed. A copy made
// since that reading may be of a later pause (another request's refusal)
// and is kept; so is a state holding a pause learned here while the
// Store failed and not carried yet (see learned).
func (s *MemoryStore) unmirror(k memKey, now, until time.Time, copies uint64, cfg *control.Config) {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[k]
	if e == nil || e.copies != copies || e.mirror <= max(now.UnixNano(), until.UnixNano()) {
		return
	}
	if pu, _ := unmirrored(e, now); !pu.IsZero() {
		return
	}
	s.drop(sh, e, now, cfg)
}

// drop forgets e's state at now, under its shard's lock: in place while
// requests are in flight on it (they still count, see
// control.State.Forget) or cfg's MaxRate holds its next start, with what a
// Budget's fallback marks of it, and its waiters woken; otherwise the
// entry goes.
func (s *MemoryStore) drop(sh *memShard, e *memEntry, now time.Time, cfg *control.Config) {
	e.ks.c.Forget(now, cfg)
	if e.ks.c.Blank() {
		s.remove(sh, e)
		return
	}
	e.mirror, e.spaced, e.own, e.ownWhy = 0, 0, 0, control.ReasonNone
	e.copies++ // a Store read before this drops nothing since (see unmirror)
	e.wake()
}

// learned returns the pause k's state is in at now, and what it is for,
// when it ends later than any pause copied into it from the Store (see
// memEntry.mirror): one this process learned while the Store failed. The
// zero time when none.
func (s *MemoryStore) learned(k memKey, now time.Time) (time.Time, control.Reason) {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return unmirrored(s.entry(sh, k, now.UnixNano(), false), now)
}

// unmirrored returns the pause e's state is in at now, and what it is for,
// when it ends later than any pause copied into it from the Store; the
// zero time when none, or e is nil.
func unmirrored(e *memEntry, now time.Time) (time.Time, control.Reason) {
	if e != nil {
		pu, why := e.ks.c.Paused(now)
		if pu.UnixNano() <= e.mirror {
			pu, why = time.Time{}, control.ReasonNone
		}
		if e.own > now.UnixNano() && e.own > pu.UnixNano() {
			// Shorter than a pause copied from the Store, which the
			// state keeps instead, and which another process may
			// clear: carried all the same.
			pu, why = time.Unix(0, e.own), e.ownWhy
		}
		return pu, why
	}
	return time.Time{}, control.ReasonNone
}

// learnedAt is learned for inspection: it removes no entry expired at now
// (an instant Inspect may ask ahead of the clock). custom reports that k's
// entry is a custom key's: the state of the Store, which the entry's
// request has not written yet, may not say so.
func (s *MemoryStore) learnedAt(k memKey, now time.Time) (_ time.Time, _ control.Reason, custom bool) {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[k]
	if e != nil && expired(e, control.Instant(now)) {
		e = nil
	}
	pu, why := unmirrored(e, now)
	return pu, why, e != nil && e.ks.c.Custom()
}

// mayRetry is control.State.MayRetry on k's state; control.MayRetry when
// there is none.
func (s *MemoryStore) mayRetry(k memKey, now time.Time, cfg *control.Config, r *control.Refusal, l *control.Lease) bool {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.m[k]; e != nil {
		return e.ks.c.MayRetry(now, cfg, r, l)
	}
	return control.MayRetry(now, r, l)
}

// pause pauses k's state until until for why, if that is later than its
// pause (see control.State.PauseUntil); custom marks it as a custom key's.
func (s *MemoryStore) pause(k memKey, now, until time.Time, why control.Reason, cfg *control.Config, custom bool) {
	sh := s.shard(k)
	sh.mu.Lock()
	e := s.entry(sh, k, now.UnixNano(), true)
	if custom {
		e.ks.c.MarkCustom() // shown as a custom key, never verbatim
	}
	gen := e.ks.c.Generation()
	e.ks.c.PauseUntil(now, cfg, until, why)
	// The Store's pause, not the state's: a later one the state holds
	// was learned while the Store failed, and still carries over.
	e.mirror = max(e.mirror, min(until.UnixNano(), now.Add(control.MaxPause).UnixNano()))
	e.copies++
	if e.ks.c.Generation() > gen {
		e.wake()
	}
	sh.mu.Unlock()
}

// space holds k's next start back until until by Config.MaxRate (see
// control.State.SpaceUntil): the spacing the Store's state kept, which
// the fallback keeps too, should the Store fail. It makes k's state only
// when the store has room for it: one key's spacing, a second at most,
// does not evict another's state, which may hold a pause.
func (s *MemoryStore) space(k memKey, now, until time.Time, cfg *control.Config, custom bool) {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	n := now.UnixNano()
	e := s.entry(sh, k, n, false)
	if e == nil {
		if s.prune(sh, n); s.count.Load() >= s.max {
			return
		}
		e = s.entry(sh, k, n, true)
	}
	if custom {
		e.ks.c.MarkCustom() // shown as a custom key, never verbatim
	}
	e.ks.c.SpaceUntil(now, cfg, until)
	if at := e.ks.c.Spaced(now); !at.IsZero() {
		e.spaced = max(e.spaced, at.UnixNano())
	}
}

// spaced returns when Config.MaxRate lets k's next start go, by what k's
// state set granting a request, if after now; the zero time otherwise,
// or when the next start is the one copied from the Store (see space),
// or what the bound of a clock stepped back left of it: a grant of the
// state's own clears the copy's mark (see acquire).
func (s *MemoryStore) spaced(k memKey, now time.Time) time.Time {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := s.entry(sh, k, now.UnixNano(), false); e != nil {
		if at := e.ks.c.Spaced(now); at.UnixNano() > e.spaced {
			return at
		}
	}
	return time.Time{}
}

// view returns what k's state says at now, without changing it; false when
// there is none, or when it may be forgotten by then. The state is kept
// either way: now may be any instant, and the state may be live before it.
func (s *MemoryStore) view(k memKey, now time.Time, cfg *control.Config) (control.View, bool) {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[k]
	if e == nil || expired(e, control.Instant(now)) {
		return control.View{}, false
	}
	if c, ok := e.ks.c.Stepped(now, cfg); ok {
		return c.View(now), true // as the next request finds it, the clock gone back
	}
	return e.ks.c.View(now), true
}

// acceptsAt returns when k's state accepts a request again at the
// earliest at now, and why (see control.State.AcceptsAt; rate: with
// Config.MaxRate's spacing); the zero time when none holds one back, or
// when there is no state, as view judges it.
func (s *MemoryStore) acceptsAt(k memKey, now time.Time, rate bool, cfg *control.Config) (time.Time, control.Reason) {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[k]
	if e == nil || expired(e, control.Instant(now)) {
		return time.Time{}, control.ReasonNone
	}
	if c, ok := e.ks.c.Stepped(now, cfg); ok {
		return c.AcceptsAt(now, rate) // as the next request finds it, the clock gone back
	}
	return e.ks.c.AcceptsAt(now, rate)
}

// forget drops k's state, or clears it where a request it granted is in
// flight (see control.State.Forget), and wakes its waiters. It reports
// whether the store held a state for k at now, as view judges it: one it
// may forget by then (idle past its expiry) is none.
func (s *MemoryStore) forget(k memKey, now time.Time, cfg *control.Config) bool {
	sh := s.shard(k)
	sh.mu.Lock()
	e := sh.m[k]
	held := e != nil && !expired(e, control.Instant(now))
	if e != nil {
		s.drop(sh, e, now, cfg)
	}
	sh.mu.Unlock()
	return held
}
