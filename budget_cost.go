package polite

import (
	"context"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// excess reports the quota of k that a request costing c exceeds whole,
// after h held it for good; the zero Excess if none does any longer. It
// changes nothing; it reads the state of the store that gave h (with a
// Store, an Update that changes nothing).
func (b *Budget) excess(ctx context.Context, k budgetKey, h hold, now time.Time, c *control.Cost) control.Excess {
	if b.mem != nil {
		return b.mem.excess(k.m, now, c)
	}
	var ex control.Excess
	if !h.local {
		if err := b.ext.Update(ctx, k.m.String(), func(s *KeyState) { ex = s.c.Excess(now, c) }); err == nil {
			return ex
		}
	}
	return b.fallback.excess(k.m, now, c)
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
