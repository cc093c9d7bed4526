package redisstore

import (
	"container/list"
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
)

// shard holds, for some of the keys this process uses, the last state seen
// in Redis (to swap without reading first) and the newest generation seen
// (to wake waiters). It is bounded: the least recently used entries that
// nobody is using are forgotten.
type shard struct {
	mu  sync.Mutex
	m   map[string]*entry
	lru list.List // front: most recently used
	max int
}

type entry struct {
	id      string
	elem    *list.Element
	pins    int   // updates and waits using the entry
	queue   []*op // updates waiting for the next batch
	leading bool  // an update is swapping a batch

	ver    int64         // version of state in Redis; 0: the key is absent (or unknown)
	state  []byte        // the state at ver
	newVer chan struct{} // closed when a notification brings a newer state; nil when nobody waits

	known   bool          // an update of this process saw the key
	gen     uint64        // generation of the newest state seen
	genVer  int64         // version of that state
	born    int64         // its identity (control.Identity); 0: unknown
	over    bool          // the key started over at gen since this process's last swap of it
	overGen uint64        // the generation it started over at
	epoch   uint64        // the store's epoch when the last update was sent
	live    bool          // whether the subscription was live then
	changed chan struct{} // closed when gen changes; nil when nobody waits

	// clock measures how far the clock of the server holding the key is
	// ahead of this process's. It goes with the entry: a read of the key
	// (see Store.refresh), or a swap, which expects no key and fails when
	// Redis holds one, measures it again.
	clock clockMeasure

	// stall is when Redis did not answer the key's last swap, in
	// nanoseconds since stallBase plus one; 0 when it did (see
	// Store.stalled).
	stall atomic.Int64
}

// clockPeriod is how long the least of a key's measures of the server's
// clock is taken over: the measures of the current period and of the one
// before, so each is kept one to two periods of swaps of the key.
const clockPeriod = time.Minute

// clockMeasure is a key's measure of how far the clock of the server
// holding the key is ahead of this process's: at most, in microseconds,
// plus one; 0 before any.
//
// A swap, or a read, measures the server's clock less the instant it was
// sent: the offset plus the time from the sending to the script's run, which
// includes any time the swap waited behind other commands of a busy Redis.
// Each measure bounds the offset from above, and the least is the
// tightest: the least of the recent ones is kept, so that a slow swap,
// however slow, does not delay the next swaps' limits (see commit). The
// least follows a clock that moves: at once when the offset shrinks (a
// new measure is less), and when it grows, by a swap whose reply shows the
// server's clock further ahead than the least allows (the clock at the
// script's run less the instant the reply came bounds the offset from
// below), by a swap refused as late while answered in time (see commit),
// or at the latest after two periods.
type clockMeasure struct {
	cur, prev int64     // the least measure of the current period, and of the one before; 0: none
	since     time.Time // when the current period started
}

// get returns the least of the measures of the current period and the
// one before; 0 if none.
func (m *clockMeasure) get() int64 {
	if m.prev != 0 && (m.cur == 0 || m.prev < m.cur) {
		return m.prev
	}
	return m.cur
}

// add records a swap's measure, taken at now: hi, the server's clock less
// when the swap was sent, plus one (the offset is below it), and lo, that
// clock less when the reply came, minus one (the offset is above it).
func (m *clockMeasure) add(hi, lo int64, now time.Time) {
	if least := m.get(); least != 0 && lo >= least {
		// The offset grew past the least (the server's clock, or this
		// process's, moved): start over from this measure.
		*m = clockMeasure{}
	}
	if m.cur == 0 || now.Sub(m.since) >= clockPeriod {
		m.prev, m.cur, m.since = m.cur, hi, now
		return
	}
	m.cur = min(m.cur, hi)
}

func (sh *shard) init(max int) {
	sh.m = make(map[string]*entry)
	sh.max = max
}

// pin returns id's entry, creating it, and keeps it until unpin.
func (sh *shard) pin(id string) *entry {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e, ok := sh.m[id]
	if ok {
		sh.lru.MoveToFront(e.elem)
	} else {
		e = &entry{id: id}
		e.elem = sh.lru.PushFront(e)
		sh.m[id] = e
		sh.trim(e)
	}
	e.pins++
	return e
}

func (sh *shard) unpin(e *entry) {
	sh.mu.Lock()
	e.pins--
	if len(sh.m) > sh.max {
		sh.trim(nil) // entries kept while pinned
	}
	sh.mu.Unlock()
}

// trim forgets the least recently used entries beyond max, but keep and
// those in use (pinned: a Wait may hold one for as long as a pause), which
// are forgotten once unpinned. It walks past the entries in use, so that
// one that waits long does not keep the others.
func (sh *shard) trim(keep *entry) {
	for el := sh.lru.Back(); el != nil && len(sh.m) > sh.max; {
		prev := el.Prev()
		if old := el.Value.(*entry); old != keep && old.pins == 0 {
			sh.lru.Remove(el)
			delete(sh.m, old.id)
		}
		el = prev
	}
}

// cached returns the last state seen and its version.
func (sh *shard) cached(e *entry) (int64, []byte) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return e.ver, e.state
}

// newer returns a channel closed when a notification brings a state newer
// than ver, and the newest state known now.
func (sh *shard) newer(e *entry) <-chan struct{} {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e.newVer == nil {
		e.newVer = make(chan struct{})
	}
	return e.newVer
}

// store records the state a failed swap returned.
func (sh *shard) store(e *entry, ver int64, state []byte) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e.ver, e.state = ver, state // the key as Redis has it now
}

// storeNewer records the key's state as a swap apart from its queue wrote
// it (see Store.resend), at version ver, unless a newer one is known.
func (sh *shard) storeNewer(e *entry, ver int64, state []byte) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if ver > e.ver {
		e.ver, e.state = ver, state
	}
}

// done records the outcome of a successful swap: the key now has state at
// cver (0 and nil after a delete), and generation gen at version ver.
//
// The swap's outcome is what Redis holds: it sets the generation even when
// a notification named a newer version. That one may be newer (sent while
// the swap's reply was on its way), or sent by no store (a hostile or
// broken process can publish anything): taken for newer, it would make
// waiters deaf to every later change, or, its generation not the key's,
// wake them at once again and again. The key is read again, to know.
//
// A swap that finds the key as it was when it last started over keeps it
// so for this process's waiters: the generations they wait on now come
// from such swaps, not from the state before (see watch).
func (sh *shard) done(e *entry, cver int64, state []byte, ver int64, gen uint64, epoch uint64, live bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e.ver, e.state = cver, state
	sure := ver >= e.genVer
	if !sh.setGen(e, ver, gen, control.Identity(state)) {
		e.over = false
	}
	e.known, e.epoch, e.live = sure, epoch, live
}

// startedOver reports whether a state of generation gen and identity born
// is the one e's key started over to, at the generation known before (see
// setGen), no swap of this process since, and no other generation
// notified (another process moved past it).
func (sh *shard) startedOver(e *entry, gen uint64, born int64) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return e.over && born != 0 && e.gen == gen && e.overGen == gen && e.born == born
}

// setGen records generation gen at version ver, of a state of identity
// born (0: unknown), waking waiters if it changed. A state of another
// identity than the one known at the same generation is the key started
// over (forgotten, flushed, evicted, lost in a restart of Redis, and made
// again from zero): its generation counts from zero again, and may be the
// one waiters wait on, at the state before. It wakes them too, and setGen
// reports it.
func (sh *shard) setGen(e *entry, ver int64, gen uint64, born int64) (over bool) {
	changed := gen != e.gen
	over = !changed && born != 0 && e.born != 0 && born != e.born
	e.gen, e.genVer = gen, ver
	if changed || born != 0 {
		e.born = born
	}
	if over {
		e.over, e.overGen = true, gen
	}
	if (changed || over) && e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
	return over
}

// unmeasuredAhead is how far ahead of this process's clock the server's
// is taken to be, at most, for a notification of a key whose clock no swap
// has measured, in microseconds: a day. (Taken at its word, a version of
// 2^53-1 woke a key's waiters, and deafened them to changes until this
// process swapped the key.)
const unmeasuredAhead = int64(24 * time.Hour / time.Microsecond)

// notify applies a notification from another update: the key named id has
// generation gen at version ver, with state (nil if not sent).
func (sh *shard) notify(id string, ver int64, gen uint64, state []byte) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e, ok := sh.m[id]
	if !ok {
		return // a key this process does not use
	}
	c := e.clock.get()
	if c == 0 {
		// No measure of the server's clock (the key only read, or its
		// measure started over): a server's clock a day ahead of this
		// process's is none the bound would let through anyway.
		c = unmeasuredAhead
	}
	if ver > time.Now().UnixMicro()+c-1+maxAhead {
		return // a version no swap writes: taken, it would deafen waiters
	}
	if state != nil && ver > e.ver && follows(state, gen, e.state) {
		e.ver, e.state = ver, state
		if e.newVer != nil {
			close(e.newVer)
			e.newVer = nil
		}
	}
	born := control.Identity(state)
	if ver > e.genVer && (gen != e.gen || born != 0 && e.born != 0 && born != e.born) {
		// Only a change of generation is taken, or a state of another
		// identity at the same generation (the key started over: see
		// setGen): one that names the generation already known changes
		// nothing for waiters, and a version it named past every
		// store's (a hostile publisher's, up to maxAhead) would make
		// them deaf to every change notified before that version, until
		// this process swaps or reads the key.
		sh.setGen(e, ver, gen, born)
	}
}

// follows reports whether state, sent with a notification naming
// generation gen, may be the key's at the version named: a state of
// generation gen, and, of the identity of cur (the state this process
// holds), not written before cur (of a lower generation, or of the same
// and fewer grants). A store sends the state it wrote, of the generation
// it names, and a state only grows; another (a replay, or what a hostile
// publisher made) would be written back by this process's next swap,
// which expects the version named, over what Redis holds. An empty state
// (a key deleted) is none: the next swap finds the key absent anyway.
func follows(state []byte, gen uint64, cur []byte) bool {
	g, born, seq, ok := control.Stamp(state)
	if !ok || g != gen {
		return false
	}
	cg, cborn, cseq, ok := control.Stamp(cur)
	return !ok || cborn != born || g > cg || g == cg && seq >= cseq
}

// ahead returns e's measure of the server's clock (see clockMeasure).
func (sh *shard) ahead(e *entry) int64 {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return e.clock.get()
}

// measured records a swap of e that the script ran at clock, on the
// server's clock in microseconds, sent at sent and answered at recv, on
// this process's.
func (sh *shard) measured(e *entry, clock, sent, recv int64) {
	now := time.Now()
	sh.mu.Lock()
	e.clock.add(clock-sent+1, clock-recv-1, now)
	sh.mu.Unlock()
}

// forgetAhead forgets e's measure of the server's clock: the next swap
// measures it again.
func (sh *shard) forgetAhead(e *entry) {
	sh.mu.Lock()
	e.clock = clockMeasure{}
	sh.mu.Unlock()
}

// watchState is what watch found.
type watchState int

const (
	waiting watchState = iota // nothing changed: wait on the channel
	woken                     // the generation is no longer the one waited on
	unsure                    // a notification may have been missed: read the key
)

// waiter is what a Wait saw of its key: the identity of the state at the
// generation it waits on (see setGen).
type waiter struct {
	looked bool  // it looked at the generation once
	born   int64 // the identity then (0: unknown)
}

// watch returns a channel closed when e's generation changes, and whether
// the caller must wait on it. It is unsure when no update or read of this
// process saw the key since the subscription last (re)started. A key
// started over at the generation waited on (a state of another identity
// than the one w saw, or one that no swap of this process found since
// before w looked: its generation may be of the state before) wakes the
// waiter as a change of generation does.
func (sh *shard) watch(e *entry, gen uint64, w *waiter, epoch uint64, live bool) (<-chan struct{}, watchState) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !e.known || (live && (!e.live || e.epoch != epoch)) {
		return nil, unsure
	}
	if e.gen != gen {
		return nil, woken
	}
	switch {
	case !w.looked:
		if e.over {
			return nil, woken
		}
		w.looked, w.born = true, e.born
	case w.born == 0:
		w.born = e.born
	case e.born != 0 && e.born != w.born:
		return nil, woken
	}
	if e.changed == nil {
		e.changed = make(chan struct{})
	}
	return e.changed, waiting
}

// refreshed records what a read of the key found, after the subscription
// went live at epoch: version ver (0: no key) with generation gen.
func (sh *shard) refreshed(e *entry, ver int64, gen uint64, state []byte, epoch uint64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	// Versions order what was seen: a notification of a newer state may
	// have come while the read was on its way. A key found absent tells
	// nothing newer than what was seen of it. As with a swap (see done),
	// what the read found sets the generation even below the version of
	// a notification, which one more read confirms or undoes.
	if ver >= e.ver {
		e.ver, e.state = ver, state
	}
	sure := true
	born := control.Identity(state)
	switch {
	case ver >= e.genVer:
		sh.setGen(e, ver, gen, born)
	case ver > 0:
		sh.setGen(e, ver, gen, born)
		sure = false
	}
	e.known, e.live, e.epoch = sure, true, epoch
}

// op is one update waiting in a batch.
type op struct {
	ctx  context.Context // the caller's: it may leave a batch between swaps once it ends
	fn   func(*polite.KeyState)
	done chan result // one result: the batch's outcome, or the lead; first a resent one if its release is sent again (see Store.resend)
	// fate, while its release is sent again: 0 while fn is not running,
	// opRunning while it runs (the caller waits for it to end before it
	// leaves), opLeft once its caller left (fn never runs again).
	fate atomic.Int32
}

const (
	opRunning = 1
	opLeft    = 2
)

// run runs o's fn on st unless its caller left, and reports whether it
// ran.
func (o *op) run(st *polite.KeyState) bool {
	if !o.fate.CompareAndSwap(0, opRunning) {
		return false
	}
	defer o.fate.Store(0)
	o.fn(st)
	return true
}

// runSafe is run, a panic of fn recovered: its value is returned, for
// o's caller to panic with (fn ran in another goroutine: see
// Store.resend).
func (o *op) runSafe(st *polite.KeyState) (ran bool, p any) {
	defer func() {
		if v := recover(); v != nil {
			ran, p = true, v
		}
	}()
	return o.run(st), nil
}

// opPanic is the panic of op o's update, run apart from its caller.
type opPanic struct {
	o *op
	v any
}

// leave marks o's caller gone: its fn never runs again. A run under way
// ends first (fn is a function of the state alone, and short).
func (o *op) leave() {
	for !o.fate.CompareAndSwap(0, opLeft) && o.fate.Load() != opLeft {
		runtime.Gosched()
	}
}

type result struct {
	err    error
	lead   bool     // the op now leads: it swaps the queue
	resent bool     // the op's release is sent again (see Store.resend): its outcome follows
	panic  *opPanic // its update panicked, run again apart from its caller
}

// enqueue queues o; it reports whether o leads (nobody was leading).
func (sh *shard) enqueue(e *entry, o *op) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e.queue = append(e.queue, o)
	if e.leading {
		return false
	}
	e.leading = true
	return true
}

// take returns the queue as a batch, the leader first, and empties it.
func (sh *shard) take(e *entry) []*op {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	batch := e.queue
	e.queue = nil
	return batch
}

// requeue puts ops back at the head of the queue, in order, ahead of the
// updates queued since: a batch whose leader left (see errLeaderGone), or
// the updates split from a batch (see split). An op whose context ended
// meanwhile ends with its context's error instead: out of the queue, it
// could not withdraw, and its goroutine waits for its result, deaf to its
// context (requeued, one waited through the leader's whole commit, a
// second of contention where its context had 60 ms left, then led and
// sent its swap: TestRequeuedUpdateEndsWithContext).
func (sh *shard) requeue(e *entry, ops []*op) {
	if len(ops) == 0 {
		return
	}
	// Under the lock, as withdraw reads the queue: an op whose context
	// ends after this reads it is in the queue for withdraw to find.
	// Read before, its context could end and withdraw miss it between.
	sh.mu.Lock()
	defer sh.mu.Unlock()
	back := make([]*op, 0, len(ops)+len(e.queue))
	for _, o := range ops {
		if err := o.ctx.Err(); err != nil {
			o.done <- result{err: err} // out of the queue: nothing else sends to it
			continue
		}
		back = append(back, o)
	}
	e.queue = append(back, e.queue...)
}

// pass hands on the lead o was handed once its context had ended: o
// leaves the queue, unsent, and the next update queued leads.
func (sh *shard) pass(e *entry, o *op) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if i := slices.Index(e.queue, o); i >= 0 {
		e.queue = slices.Delete(e.queue, i, i+1)
	}
	if len(e.queue) == 0 {
		e.leading = false
		return
	}
	e.queue[0].done <- result{lead: true}
}

// handOff ends a lead: the first update queued since leads next.
func (sh *shard) handOff(e *entry) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(e.queue) == 0 {
		e.leading = false
		return
	}
	e.queue[0].done <- result{lead: true}
}

// withdraw removes o, whose context ended, from the queue. It reports
// false when o was already taken into a batch or handed the lead: then a
// result is on its way, or there.
func (sh *shard) withdraw(e *entry, o *op) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i := slices.Index(e.queue, o)
	if i < 0 {
		return false
	}
	select {
	case r := <-o.done:
		// Handed the lead at the same time: pass it on.
		o.done <- r
		return false
	default:
	}
	e.queue = slices.Delete(e.queue, i, i+1)
	return true
}
