package polite

import (
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// A request a Store held lost the Crawl-delay its lease carried: the
// Store's answer replaced the whole lease, so the next try reserved with
// no floor, and a local entry made anew for it (its old one swept while
// it waited) paced the origin by nothing.
func TestStoreHoldKeepsFloor(t *testing.T) {
	b, _, k, t0 := pausedInStore(t)
	g := lease{floor: 10 * time.Second}
	if _, ok, _, _ := b.acquire(t.Context(), k, t0.Add(time.Second), control.Ask{}, &g); ok {
		t.Fatal("granted inside the Store's pause")
	}
	if g.floor != 10*time.Second {
		t.Errorf("floor %v after the Store held the request, want the 10s it carried", g.floor)
	}
}
