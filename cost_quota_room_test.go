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

// tokenWindowServer states a fixed window of 1000 tokens a minute, after
// the quotas of the extra units named in extra (each with plenty left),
// and charges each request 600 tokens; it refuses one the window cannot
// pay for.
func tokenWindowServer(extra []string, refused *int) http.Handler {
	var mu sync.Mutex
	used := int64(0)
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(start) >= time.Minute {
			start, used = time.Now(), 0
		}
		left := time.Minute - time.Since(start)
		var pol, rl []string
		for i, u := range extra {
			pol = append(pol, fmt.Sprintf(`"x%d";q=100000;w=60;qu=%q`, i, u))
			rl = append(rl, fmt.Sprintf(`"x%d";r=100000;t=%d`, i, int(left.Seconds())))
		}
		ok := used+600 <= 1000
		if ok {
			used += 600
		}
		pol = append(pol, `"tok";q=1000;w=60;qu="tokens"`)
		rl = append(rl, fmt.Sprintf(`"tok";r=%d;t=%d`, 1000-used, int(left.Seconds())))
		w.Header().Set("RateLimit-Policy", strings.Join(pol, ", "))
		w.Header().Set("RateLimit", strings.Join(rl, ", "))
		if !ok {
			*refused++
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
}

func sendTokens(t *testing.T, c *http.Client) {
	t.Helper()
	ctx := polite.WithCost(t.Context(), polite.Cost{Tokens: 600})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.example/v1/x", strings.NewReader("{}"))
	if _, err := statusOf(c, req); err != nil {
		t.Fatal(err)
	}
}

// A server that states quotas in four other units beside its tokens quota
// has its tokens quota read all the same: a key always has room for the
// token units (the four others, all tracked, left it unread, and a request
// it could not pay for was sent and refused).
func TestTokenQuotaAfterFourOtherUnits(t *testing.T) {
	for _, extra := range [][]string{nil, {"points", "credits", "images", "seconds"}} {
		t.Run(fmt.Sprint(len(extra)), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				refused := 0
				c, _ := politeOver(tokenWindowServer(extra, &refused))
				sendTokens(t, c)
				start := time.Now()
				sendTokens(t, c)
				if refused != 0 {
					t.Errorf("%d refused, want 0: the second request was sent into 400 tokens left (after %v)", refused, time.Since(start))
				}
			})
		})
	}
}

// tokenQuotasServer is tokenWindowServer with eight other quotas of
// tokens, named apart, each with plenty left, stated before the binding
// one.
func tokenQuotasServer(n int, refused *int) http.Handler {
	var mu sync.Mutex
	used := int64(0)
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(start) >= time.Minute {
			start, used = time.Now(), 0
		}
		left := time.Minute - time.Since(start)
		var pol, rl []string
		for i := range n {
			pol = append(pol, fmt.Sprintf(`"big%d";q=10000000;w=86400;qu="tokens"`, i))
			rl = append(rl, fmt.Sprintf(`"big%d";r=10000000;t=86400`, i))
		}
		ok := used+600 <= 1000
		if ok {
			used += 600
		}
		pol = append(pol, `"tok";q=1000;w=60;qu="tokens"`)
		rl = append(rl, fmt.Sprintf(`"tok";r=%d;t=%d`, 1000-used, int(left.Seconds())))
		w.Header().Set("RateLimit-Policy", strings.Join(pol, ", "))
		w.Header().Set("RateLimit", strings.Join(rl, ", "))
		if !ok {
			*refused++
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
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
				c, _ := politeOver(tokenQuotasServer(n, &refused))
				sendTokens(t, c)
				sendTokens(t, c)
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
				var mu sync.Mutex
				used, refused := int64(0), 0
				start := time.Now()
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					defer mu.Unlock()
					if time.Since(start) >= time.Minute {
						start, used = time.Now(), 0
					}
					left := time.Minute - time.Since(start)
					var pol, rl []string
					if points {
						pol = append(pol, `"pts";q=100000;w=60;qu="points"`)
						rl = append(rl, fmt.Sprintf(`"pts";r=100000;t=%d`, int(left.Seconds())))
					}
					ok := used+600 <= 1000
					if ok {
						used += 600
					}
					pol = append(pol, `"cr";q=1000;w=60;qu="credits"`)
					rl = append(rl, fmt.Sprintf(`"cr";r=%d;t=%d`, 1000-used, int(left.Seconds())))
					w.Header().Set("RateLimit-Policy", strings.Join(pol, ", "))
					w.Header().Set("RateLimit", strings.Join(rl, ", "))
					if !ok {
						refused++
						w.WriteHeader(http.StatusTooManyRequests)
					}
				})
				c, _ := politeOver(h)
				for range 2 {
					ctx := polite.WithCost(t.Context(), polite.Cost{Unit: "credits", Amount: 600})
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.example/x", strings.NewReader("{}"))
					if _, err := statusOf(c, req); err != nil {
						t.Fatal(err)
					}
				}
				if refused != 0 {
					t.Errorf("%d refused, want 0: the credits quota (1000/min, 400 left) was not read", refused)
				}
			})
		})
	}
}
