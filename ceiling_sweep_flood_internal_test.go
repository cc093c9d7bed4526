package polite

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Past ceilingHard, the sweep dropped, when none of the entries it looked
// at was idle, the one whose next start was the soonest. Under a flood of
// origins asking a long Crawl-delay (subdomains each asking a day), an
// honest origin asking an hour was the soonest of every sample it was in,
// and was dropped each time a sweep looked at it, while the flood's
// entries stayed. A caller that does not queue inside RoundTrip (the
// default MaxWait of 10 minutes is shorter than the hour: each early try
// fails at once with a WaitError and holds no ticket) leaves the entry
// idle between tries, and each drop let its next try go at once.
//
// Here two new flood origins a second land in the honest origin's shard
// (about 32 a second over the whole crawl), and the honest origin is
// tried every second for three hours: its requests went minutes apart
// (9 to 43 sent), where they must go an hour apart (4).
func TestSweepKeepsHonestCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			victim = "slow.test"
			delay  = time.Hour
		)
		var (
			mu   sync.Mutex
			sent []time.Time
		)
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				d := "86400"
				if r.URL.Host == victim {
					d = "3600"
				}
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nCrawl-delay: " + d + "\n")), ContentLength: -1, Request: r}, nil
			}
			if r.URL.Host == victim {
				mu.Lock()
				sent = append(sent, time.Now())
				mu.Unlock()
			}
			return okResponse(r)
		})
		tr := &Transport{Base: base, Robots: &Robots{MaxOrigins: 64}, Budget: &Budget{MaxKeys: 64}}
		get := func(host string) error {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		sh := tr.ceil.shard(originKey("http", victim).m)
		size := func() int {
			sh.mu.Lock()
			defer sh.mu.Unlock()
			return len(sh.m)
		}
		i := 0
		flood := func() { // one more flood origin in the victim's shard
			for ; ; i++ {
				host := fmt.Sprintf("a%d.evil.test", i)
				if tr.ceil.shard(originKey("http", host).m) == sh {
					i++
					if err := get(host); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
		}
		if err := get(victim); err != nil {
			t.Fatal(err)
		}
		for size() < ceilingHard {
			flood()
			time.Sleep(100 * time.Millisecond)
		}
		tries := 0
		for end := time.Now().Add(3 * time.Hour); time.Now().Before(end); {
			time.Sleep(time.Second)
			flood()
			flood()
			tries++
			var we *WaitError
			if err := get(victim); err != nil && !errors.As(err, &we) {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		early := 0
		minGap := time.Duration(1<<63 - 1)
		for j := 1; j < len(sent); j++ {
			gap := sent[j].Sub(sent[j-1])
			minGap = min(minGap, gap)
			if gap < delay {
				early++
			}
		}
		t.Logf("%d tries of %s, %d sent, %d less than its Crawl-delay after the one before; shard size %d", tries, victim, len(sent), early, size())
		if early > 0 {
			t.Errorf("%s (Crawl-delay: 3600) got %d requests within three hours and a few minutes, %d of them less than an hour after the one before (closest %v apart), while new origins asking Crawl-delay: 86400 filled its shard; want them an hour apart (at most 4)", victim, len(sent), early, minGap)
		}
	})
}
