package polite_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/politehttp/polite"
)

// A server states its limits; the client wrapped by polite paces itself by
// them and never needs to be told twice.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"api";q=100;w=60`)
		w.Header().Set("RateLimit", `"api";r=99;t=60`)
		io.WriteString(w, "hello")
	}))
	defer srv.Close()

	client := polite.Wrap(&http.Client{Timeout: 10 * time.Second})
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(body))
	// Output: 200 OK hello
}

// Transports that share a Budget pace together, as one client; MaxRate and
// MaxConcurrency are local ceilings that no header can raise.
func ExampleTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()

	budget := &polite.Budget{}
	client := &http.Client{Transport: &polite.Transport{
		Budget:         budget,
		MaxRate:        50, // requests per second per origin, at most
		MaxConcurrency: 8,  // requests in flight per origin, at most
		MaxWait:        time.Minute,
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output: 200
}

// Wrap keeps the client's own transport, timeout, jar and redirect policy.
func ExampleWrap() {
	base := &http.Client{Timeout: 5 * time.Second, Transport: http.DefaultTransport}
	client := polite.Wrap(base)
	_, ok := client.Transport.(*polite.Transport)
	fmt.Println(ok, client.Timeout)
	// Output: true 5s
}
