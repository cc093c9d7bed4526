package control

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// Random answers over a few units, windows up to a week, costs in a few
// units: after each answer, the binary form reads back, writes the same
// bytes, and reads back the same cost state.
func TestCostBinaryRoundTripRandom(t *testing.T) {
	units := []string{"tokens", "input-tokens", "output-tokens", "points", "credits", "images", "seconds"}
	windows := []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 0}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		var s State
		cfg := &Config{}
		now := t0
		var live []*Lease
		for step := range 60 {
			now = now.Add(time.Duration(r.IntN(5000)) * time.Millisecond)
			if r.IntN(3) > 0 || len(live) == 0 {
				c := Cost{}
				switch r.IntN(4) {
				case 0:
					c.Tokens = int64(r.IntN(1000))
				case 1:
					c.InputTokens, c.OutputTokens = int64(r.IntN(500)), int64(r.IntN(500))
				case 2:
					c.Unit, c.Amount = units[3+r.IntN(4)], int64(1+r.IntN(10))
				case 3:
					c.Tokens, c.Unit, c.Amount = int64(r.IntN(1000)), units[3+r.IntN(4)], int64(1+r.IntN(10))
				}
				l := new(Lease)
				l.SetCost(c)
				if _, ok := s.Acquire(now, cfg, Ask{}, l); ok {
					live = append(live, l)
				}
			} else {
				i := r.IntN(len(live))
				l := live[i]
				live = append(live[:i], live[i+1:]...)
				var qs []parse.Quota
				for range r.IntN(12) {
					w := windows[r.IntN(len(windows))]
					lim := int64(1 + r.IntN(100000))
					q := parse.Quota{Policy: fmt.Sprint("p", r.IntN(6)), Unit: units[r.IntN(len(units))], Limit: lim, Window: w, Remaining: int64(r.IntN(int(lim) + 1)), Reset: time.Duration(1+r.IntN(3600)) * time.Second, Dialect: "ietf"}
					if r.IntN(5) == 0 {
						q.Policy = ""
					}
					qs = append(qs, q)
				}
				s.Release(now, cfg, l, &Outcome{First: true, Served: true, Bytes: -1, Quotas: qs})
			}
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatalf("seed %d step %d: MarshalBinary: %v", seed, step, err)
			}
			var got State
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatalf("seed %d step %d: UnmarshalBinary of what MarshalBinary wrote: %v", seed, step, err)
			}
			b2, err := got.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, b2) {
				t.Fatalf("seed %d step %d: encode(decode(b)) != b", seed, step)
			}
			if s.costs.full() {
				for i := range s.costs.units {
					if s.costs.units[i].declared != got.costs.units[i].declared {
						t.Fatalf("seed %d step %d: unit %d declared %v read back %v", seed, step, i, s.costs.units[i].declared, got.costs.units[i].declared)
					}
				}
				for i := range s.costs.quotas {
					if a, b := &s.costs.quotas[i], &got.costs.quotas[i]; a.cut != b.cut && a.w == int64(MaxPause) {
						t.Fatalf("seed %d step %d: quota %d cut %v read back %v", seed, step, i, a.cut, b.cut)
					}
				}
			}
			_ = reflect.DeepEqual
		}
	}
}
