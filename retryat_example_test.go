package polite_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/politehttp/polite"
)

// One answer to "when may I retry": a refusal that polite gives back (its
// wait is longer than MaxWait) and the *WaitError of the next request name
// the same instant.
func ExampleTransport_RetryAt() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()

	t := &polite.Transport{MaxWait: time.Minute}
	client := &http.Client{Transport: t}

	resp, err := client.Get(srv.URL + "/first")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	at, ok := t.RetryAt(resp)
	fmt.Println(resp.StatusCode, ok, time.Until(at).Round(time.Minute))

	_, err = client.Get(srv.URL + "/second")
	var werr *polite.WaitError
	if errors.As(err, &werr) {
		fmt.Println(werr.Until.Equal(at), werr.Limit)
	}
	// Output:
	// 429 true 1h0m0s
	// true 1m0s
}
