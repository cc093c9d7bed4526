package redisstore_test

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
	"github.com/politehttp/polite/redisstore"
	"github.com/redis/go-redis/v9"
)

// Two http.Clients pace together through one Redis: in real life each runs
// in a process of its own (a pod, a worker), with its own Redis client and
// Store; what they share is the Redis and the prefix. Against a server of
// 5 requests per second, the 20 requests of both take about 4 seconds, and
// none is refused. (The example needs a Redis on 127.0.0.1:6379.)
func Example() {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 5, Window: time.Second}},
	})
	defer srv.Close()

	newClient := func() (*http.Client, func()) {
		rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
		store := redisstore.New(rdb, "example:polite:")
		client := &http.Client{Transport: &polite.Transport{
			Budget: &polite.Budget{Store: store},
		}}
		return client, func() { store.Close(); rdb.Close() }
	}
	a, closeA := newClient()
	defer closeA()
	b, closeB := newClient()
	defer closeB()

	var wg sync.WaitGroup
	for _, client := range []*http.Client{a, b} {
		wg.Go(func() {
			for range 10 {
				resp, err := client.Get(srv.URL)
				if err != nil {
					fmt.Println(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	fmt.Println("refused:", srv.Handler.Stats().Refused)
}
