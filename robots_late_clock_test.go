package polite_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A server whose clock is truly 15 minutes late answers 503 with its Date
// (15 minutes behind ours) and a Retry-After HTTP-date 14m30s after it by
// its own clock: 30 s before the request was sent, by ours. The Transport
// reads such a date from the Date on a refusal of a page: more than 2 s
// before the request was sent, it was reckoned on a clock that late. The
// robots.txt fetch read it without the send time, due while at most a
// minute past by now: robots.txt was unreachable for a minute only, and
// fetched again 13m30s before the server asked.
func TestRobotsRetryAfterLateClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)))
		late := func(w http.ResponseWriter, r *http.Request) {
			date := time.Now().Add(-15 * time.Minute).Truncate(time.Second)
			w.Header().Set("Date", date.UTC().Format(http.TimeFormat))
			w.Header().Set("Retry-After", date.Add(14*time.Minute+30*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		}

		// The page, through a Transport without Robots: how polite reads it.
		var pageWait time.Duration = -1
		pages := &polite.Transport{MaxAttempts: 1, Base: &ratelimittest.Transport{Handler: http.HandlerFunc(late)},
			OnEvent: func(e polite.Event) {
				if e.Kind == polite.EventGiveUp {
					pageWait = e.Wait
				}
			}}
		req, _ := http.NewRequest("GET", "http://a.example/page", nil)
		resp, err := pages.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if pageWait < 14*time.Minute {
			t.Fatalf("the Transport read the page's Retry-After as %v; this test assumes about 14m30s", pageWait)
		}

		// robots.txt of another origin, same answer.
		robots := &polite.Transport{MaxAttempts: 1, Robots: &polite.Robots{},
			Base: &ratelimittest.Transport{Handler: http.HandlerFunc(late)}}
		start := time.Now()
		req, _ = http.NewRequest("GET", "http://b.example/page", nil)
		_, err = robots.RoundTrip(req)
		var rerr *polite.RobotsError
		if !errors.As(err, &rerr) || !rerr.Unreachable {
			t.Fatalf("RoundTrip = %v, want robots.txt unreachable", err)
		}
		if got := rerr.Until.Sub(start); got < 14*time.Minute {
			t.Errorf("robots.txt unreachable for %v after a 503 whose Retry-After the Transport reads as %v for a page; want as long", got, pageWait)
		}
	})
}
