package ratelimittest_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

func ExampleNewServer() {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Hour}},
	})
	defer srv.Close()

	for range 2 {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Printf("%d RateLimit-Policy: %s RateLimit: %s Retry-After: %q\n", resp.StatusCode,
			resp.Header.Get("RateLimit-Policy"), resp.Header.Get("RateLimit"), resp.Header.Get("Retry-After"))
	}
	// Output:
	// 200 RateLimit-Policy: "default";q=1;w=3600 RateLimit: "default";r=0;t=3600 Retry-After: ""
	// 429 RateLimit-Policy: "default";q=1;w=3600 RateLimit: "default";r=0;t=3600 Retry-After: "3600"
}

func ExampleTransport() {
	h := ratelimittest.NewHandler(ratelimittest.Config{
		Dialect:  ratelimittest.XRateLimitDelta,
		Policies: []ratelimittest.Policy{{Quota: 100, Window: time.Hour}},
	})
	c := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}

	resp, err := c.Get("http://api.example/items")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining"))
	fmt.Println(h.Stats().Admitted)
	// Output:
	// 200 100 99
	// 1
}

func ExampleIdeal() {
	cfg := ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Algorithm: ratelimittest.TokenBucket, Quota: 10, Window: time.Second}},
	}
	// A burst of 10, then one every 100ms.
	fmt.Println(ratelimittest.Ideal(cfg, 100, 16))
	// Output: 9s
}
