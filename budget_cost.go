package polite

import (
	"context"
	"errors"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// excess reports the quota of k that a request costing c exceeds whole,
// after h held it for good; the zero Excess if none does any longer. It
// changes nothing. A Store's hold carries what its state said in the same
// Update (read again, the Store could fail, and the request would wait
// on a hold with no end until MaxWait). A hold of the Transport's local
// ceilings, which asked no store, reads the Store's state with an Update
// that changes nothing, once a hold, until limit at most (MaxWait's end):
// the fallback knows no quota while the Store answers. Should the Store
// fail it (not merely answer after limit), it is marked down, as an
// acquire's failure marks it (the next reads skip it for a while); the
// request waits on the ceiling, which has an end, and the Store's hold at
// its grant says.
func (b *Budget) excess(ctx context.Context, k budgetKey, h hold, now, limit time.Time, c *control.Cost) (control.Excess, storeNote) {
	switch {
	case b.mem != nil:
		return b.mem.excess(k.m, now, c), storeNote{}
	case h.ex != nil:
		return *h.ex, storeNote{}
	case !h.local && b.useExt(now) && limit.After(now):
		// (At or past limit, the read could not be told from the
		// Store failing at once: the request fails by MaxWait anyway.)
		var ex control.Excess
		rctx, cancel := context.WithDeadline(ctx, limit)
		err := b.ext.Update(rctx, k.m.String(), func(s *KeyState) { ex = s.c.Excess(now, c) })
		// Ended by the bound, or the request's end, unless the error came
		// well after it, the Store's own (see outlasted), as an
		// acquire judges it: a Store that ignores ctx is down.
		ended := (rctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) && deadlinePassed(rctx)) && !outlasted(rctx, err)
		cancel()
		if err == nil {
			return ex, b.answered()
		}
		var note storeNote
		if !ended {
			// The Store's own failure, not the end of the request
			// or of what it may wait (a Store slower than a small
			// MaxWait is not down).
			note = b.failed(err)
		}
		return b.fallback.excess(k.m, now, c), note
	}
	return b.fallback.excess(k.m, now, c), storeNote{}
}

// excess is Budget.excess on the in-memory store.
func (s *MemoryStore) excess(k memKey, now time.Time, c *control.Cost) control.Excess {
	sh := s.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[k]
	if e == nil {
		return control.Excess{}
	}
	return e.ks.c.Excess(now, c)
}
