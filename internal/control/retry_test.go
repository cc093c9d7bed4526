package control

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDepositShortcutMatches checks that deposit, with its shortcut for a
// full budget, leaves every budget as depositFull does: full or not,
// never refilled, with the clock gone back, and with tokens past the cap,
// infinite or not a number (as a decoded state may hold).
func TestDepositShortcutMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	tokens := []float64{0, -3, 0.5, retryTokenCap - retryShare, retryTokenCap - 1e-9, retryTokenCap, retryTokenCap + 1, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	base := instant(t0)
	ats := []int64{0, 1, base - int64(time.Second), base, base + 1, base + int64(time.Hour)}
	shortcut := 0
	for _, tk := range tokens {
		for _, at := range ats {
			for range 20 {
				now := base + r.Int64N(int64(2*time.Second)) - int64(time.Second)
				a := retryBudget{tokens: tk, at: at, stopUntil: r.Int64N(3), run: r.Int32N(3), streak: r.Int32N(3)}
				b := a
				if a.at != 0 && a.tokens >= retryTokenCap {
					shortcut++
				}
				a.deposit(now)
				b.depositFull(now)
				if a != b && !(math.IsNaN(a.tokens) && math.IsNaN(b.tokens) && a.at == b.at) {
					t.Fatalf("deposit(%d) of tokens %v at %d: %+v, without the shortcut %+v", now, tk, at, a, b)
				}
			}
		}
	}
	if shortcut == 0 {
		t.Fatal("the shortcut was never taken")
	}
}
