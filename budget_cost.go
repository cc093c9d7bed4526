package polite

import (
	"time"

	"github.com/politehttp/polite/internal/control"
)

// excess reports the quota of k that a request costing c exceeds whole,
// after h held it for good; the zero Excess if none does any longer. It
// changes nothing. A Store's hold carries what its state said in the same
// Update (read again, the Store could fail, and the request would wait
// on a hold with no end until MaxWait); the in-memory stores are read.
func (b *Budget) excess(k budgetKey, h hold, now time.Time, c *control.Cost) control.Excess {
	switch {
	case b.mem != nil:
		return b.mem.excess(k.m, now, c)
	case h.ex != nil:
		return *h.ex
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
