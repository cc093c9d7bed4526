package polite_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/politehttp/polite"
)

func ExampleRetryAfter() {
	// The client's clock runs 3 minutes ahead of the server's: the date in
	// Retry-After is measured from the response's Date, not from now.
	now := time.Date(2019, 8, 5, 9, 30, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Date", "Mon, 05 Aug 2019 09:27:00 GMT")
	h.Set("Retry-After", "Mon, 05 Aug 2019 09:27:05 GMT")
	d, ok := polite.RetryAfter(h, now)
	fmt.Println(d, ok)

	h.Set("Retry-After", "2.0")
	d, ok = polite.RetryAfter(h, now)
	fmt.Println(d, ok)

	h.Set("Retry-After-Ms", "1500")
	d, ok = polite.RetryAfter(h, now)
	fmt.Println(d, ok)
	// Output:
	// 5s true
	// 2s true
	// 1.5s true
}
