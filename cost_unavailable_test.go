package polite_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// Only a 429 says the server did not serve a request; a 503 (or a 403
// read as a refusal) may come after it counted it (DESIGN.md §1.10), and
// is charged its cost as an answer stating nothing is. An origin of 10,000
// tokens a minute (IETF fields, restored whole) has 9,900 left; a POST of
// 6,000 tokens is processed and counted, then answered 503 with no fields
// (an overloaded front answering after the work was done). Uncharged, the
// key read 9,900 and sent the next POST of 6,000 into 3,900: refused.
func TestUnavailableCountedNotCharged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		left := int64(10000)
		end := time.Now().Add(time.Minute)
		unavailable := false
		refused := 0
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cost, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
			mu.Lock()
			defer mu.Unlock()
			if !time.Now().Before(end) {
				left, end = 10000, end.Add(time.Minute)
			}
			reset := int64((time.Until(end) + time.Second - 1) / time.Second)
			if cost > left {
				refused++
				w.Header().Set("RateLimit-Policy", `"tpm";q=10000;qu="tokens";w=60`)
				w.Header().Set("RateLimit", `"tpm";r=`+strconv.FormatInt(left, 10)+`;t=`+strconv.FormatInt(reset, 10))
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			left -= cost // the origin counts what it processed
			if unavailable {
				unavailable = false
				w.WriteHeader(http.StatusServiceUnavailable) // no fields, no Retry-After
				return
			}
			w.Header().Set("RateLimit-Policy", `"tpm";q=10000;qu="tokens";w=60`)
			w.Header().Set("RateLimit", `"tpm";r=`+strconv.FormatInt(left, 10)+`;t=`+strconv.FormatInt(reset, 10))
		})
		c := declaredCostClient(h)
		tr := c.Transport.(*polite.Transport)
		send := func(tokens int64) int {
			code, err := sendDeclared(c, tokens)
			if err != nil {
				t.Fatal(err)
			}
			return code
		}
		send(100) // 9900 left
		mu.Lock()
		unavailable = true
		mu.Unlock()
		if code := send(6000); code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want the 503 back (a POST is not resent)", code)
		}
		st, _ := tr.Inspect("http://llm.example", time.Now())
		for _, p := range st.Policies {
			if p.Unit == "tokens" {
				t.Logf("after the 503: key reads %d tokens remaining; the origin has 3900", p.Remaining)
			}
		}
		send(6000)
		mu.Lock()
		defer mu.Unlock()
		if refused > 0 {
			t.Errorf("%d request(s) refused: the 503's 6000 tokens, which the origin counted, were not charged, and a POST of 6000 was sent into 3900", refused)
		}
	})
}
