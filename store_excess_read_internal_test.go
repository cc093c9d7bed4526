package polite

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

// grpcLikeStore honours ctx, and reports its end at once in words of its
// own (as a gRPC status does), which outlasted's doc allows: "does so as
// it comes".
type grpcLikeStore struct{ MemoryStore }

var errStatusDeadline = errors.New("rpc error: code = DeadlineExceeded desc = context deadline exceeded")

func (s *grpcLikeStore) Update(ctx context.Context, key string, fn func(*KeyState)) error {
	if ctx.Err() != nil {
		return errStatusDeadline
	}
	return s.MemoryStore.Update(ctx, key, fn)
}

// The excess read's bound is MaxWait's end counted from start, which for
// a retry after a transient failure is the failure's instant: a drain of
// its body (up to drainTime, 1 s) may pass it before the read begins. The
// read's ctx was then ended when it was made; the Store answered at once,
// as it should, yet its error came "more than 25 ms after ctx's
// deadline" and marked a healthy Store down. A read past its bound is
// not made.
func TestExcessReadPastBoundNotDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{Store: &grpcLikeStore{}}
		tr := &Transport{Budget: b}
		req, _ := http.NewRequest(http.MethodGet, "http://a.test/", nil)
		var kb budgetKey
		key := tr.originOf(req, tr.budgetOf(), &kb)
		now := time.Now()
		limit := now.Add(-500 * time.Millisecond) // MaxWait's end, passed during the drain
		c := control.Cost{Tokens: 100}
		_, note := b.excess(t.Context(), *key, hold{}, now, limit, &c)
		if note.kind == EventStoreDown {
			t.Errorf("excess read begun 500ms past its bound: Store answering at once reported down (%v)", note.err)
		}
	})
}
