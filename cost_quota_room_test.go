package polite_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// spendServer states the quotas others returns (given the time left in
// the binding quota's window), and the binding one, "b": 1000 of unit per
// window, before the others if first, else after them. It charges the
// binding quota 600 a request and refuses one it cannot pay for, counting
// the refusals in refused.
func spendServer(unit string, window time.Duration, first bool, others func(left time.Duration) (pol, rl []string), refused *int) http.Handler {
	var mu sync.Mutex
	used := int64(0)
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(start) >= window {
			start, used = time.Now(), 0
		}
		left := window - time.Since(start)
		ok := used+600 <= 1000
		if ok {
			used += 600
		}
		pol, rl := others(left)
		bp := fmt.Sprintf(`"b";q=1000;w=%d;qu=%q`, int(window.Seconds()), unit)
		br := fmt.Sprintf(`"b";r=%d;t=%d`, 1000-used, int(left.Seconds()))
		if first {
			pol, rl = append([]string{bp}, pol...), append([]string{br}, rl...)
		} else {
			pol, rl = append(pol, bp), append(rl, br)
		}
		w.Header().Set("RateLimit-Policy", strings.Join(pol, ", "))
		w.Header().Set("RateLimit", strings.Join(rl, ", "))
		if !ok {
			*refused++
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
}

// loose returns n quotas of unit, each of plenty per window, named by
// prefix and their index, with all of it left and reset in t.
func loose(prefix, unit string, n int, plenty int64, window, t time.Duration) (pol, rl []string) {
	for i := range n {
		pol = append(pol, fmt.Sprintf(`"%s%d";q=%d;w=%d;qu=%q`, prefix, i, plenty, int(window.Seconds()), unit))
		rl = append(rl, fmt.Sprintf(`"%s%d";r=%d;t=%d`, prefix, i, plenty, int(t.Seconds())))
	}
	return pol, rl
}

// send sends a request costing cost through c; a request held past
// MaxWait fails, which is right.
func send(t *testing.T, c *http.Client, cost polite.Cost) {
	t.Helper()
	ctx := polite.WithCost(t.Context(), cost)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/x", strings.NewReader("{}"))
	statusOf(c, req)
}

// A server that states quotas in four other units beside its tokens quota
// has its tokens quota read all the same, once a request of tokens is
// answered: the four others, none spent from and none declared, are spare
// (all four kept, the tokens quota was left unread, and a request it could
// not pay for was sent and refused).
func TestTokenQuotaAfterFourOtherUnits(t *testing.T) {
	for _, units := range [][]string{nil, {"points", "credits", "images", "seconds"}} {
		t.Run(fmt.Sprint(len(units)), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				refused := 0
				c, _ := politeOver(spendServer("tokens", time.Minute, false, func(left time.Duration) (pol, rl []string) {
					for i, u := range units {
						p, r := loose(fmt.Sprint("x", i), u, 1, 100000, time.Minute, left)
						pol, rl = append(pol, p...), append(rl, r...)
					}
					return pol, rl
				}, &refused))
				send(t, c, polite.Cost{Tokens: 600})
				start := time.Now()
				send(t, c, polite.Cost{Tokens: 600})
				if refused != 0 {
					t.Errorf("%d refused, want 0: the second request was sent into 400 tokens left (after %v)", refused, time.Since(start))
				}
			})
		})
	}
}

// The same with eight other quotas of tokens, each allowing more than the
// binding one in any span, stated before it: the ninth takes the place of
// one it makes redundant (ignored, it let a request it could not pay for
// be sent).
func TestTokenQuotaAfterEightOthers(t *testing.T) {
	for _, n := range []int{0, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				refused := 0
				c, _ := politeOver(spendServer("tokens", time.Minute, false, func(time.Duration) (pol, rl []string) {
					return loose("big", "tokens", n, 10000000, 24*time.Hour, 24*time.Hour)
				}, &refused))
				send(t, c, polite.Cost{Tokens: 600})
				send(t, c, polite.Cost{Tokens: 600})
				if refused != 0 {
					t.Errorf("%d refused, want 0: the second request was sent into 400 tokens left", refused)
				}
			})
		})
	}
}

// A server states a quota of "points" (plenty left, a unit the client
// never declares a cost in) before its quota of "credits", the unit the
// requests cost: 1000 credits a minute, 600 a request. The key tracks both
// units, and the second request waits for the window (a rule keeping a
// single unit besides the token units left the credits quota unread).
func TestSecondOtherUnitRead(t *testing.T) {
	for _, points := range []bool{false, true} {
		t.Run(fmt.Sprint("points=", points), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				refused := 0
				c, _ := politeOver(spendServer("credits", time.Minute, false, func(left time.Duration) (pol, rl []string) {
					if points {
						return loose("pts", "points", 1, 100000, time.Minute, left)
					}
					return nil, nil
				}, &refused))
				send(t, c, polite.Cost{Unit: "credits", Amount: 600})
				send(t, c, polite.Cost{Unit: "credits", Amount: 600})
				if refused != 0 {
					t.Errorf("%d refused, want 0: the credits quota (1000/min, 400 left) was not read", refused)
				}
			})
		})
	}
}

// A server states a daily tokens quota (1000 a day) first, then eight loose
// tokens quotas a minute, and charges 600 a request: the second request,
// which the day cannot pay for (400 left), waits (the ninth quota once took
// the daily quota's slot, tokens read as a unit no request declared, and
// the second request was sent and refused).
func TestDailyQuotaStatedFirstKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := 0
		c, _ := politeOver(spendServer("tokens", 24*time.Hour, true, func(time.Duration) (pol, rl []string) {
			return loose("m", "tokens", 8, 1000000000, time.Minute, time.Minute)
		}, &refused))
		send(t, c, polite.Cost{Tokens: 600})
		send(t, c, polite.Cost{Tokens: 600})
		if refused != 0 {
			t.Errorf("%d refused, want 0: the daily tokens quota (400 left) was dropped", refused)
		}
	})
}
