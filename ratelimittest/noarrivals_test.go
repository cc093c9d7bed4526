package ratelimittest_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A Handler with Config.NoArrivals counts its requests and keeps no
// arrival time: polite serve, which runs for as long as it is let and
// never reads them, grew by 26 bytes a request.
func TestNoArrivals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Second}}, NoArrivals: true})
		c := client(h)
		send(t, c, "")
		send(t, c, "")
		if s := h.Stats(); s.Requests != 2 || len(s.Arrivals) != 0 {
			t.Errorf("Requests %d, Arrivals %v; want 2 and none", s.Requests, s.Arrivals)
		}
	})
}

// A TokenHandler with TokenConfig.NoArrivals counts its requests and keeps
// no arrival time, as a Handler with Config.NoArrivals does: it grew by an
// arrival time a request whatever its config.
func TestTokenNoArrivals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewTokenHandler(ratelimittest.TokenConfig{Requests: 100, Tokens: 1000, NoArrivals: true})
		c := client(h)
		body := ratelimittest.TokenTask{Input: 10, MaxOutput: 10}.Body(ratelimittest.OpenAIAPI)
		post(t, c, chatPath, body)
		post(t, c, chatPath, body)
		if s := h.Stats(); s.Requests != 2 || len(s.Arrivals) != 0 {
			t.Errorf("Requests %d, Arrivals %v; want 2 and none", s.Requests, s.Arrivals)
		}
	})
}
