package polite_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/politehttp/polite"
)

// An Event logged by a handler of the caller's own, from OnEvent: the
// same attributes the Transport's Logger records, never the request's
// query or credentials.
func ExampleEvent_LogValue() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a steady output for the example
			}
			return a
		},
	}))
	tr := &polite.Transport{
		OnEvent: func(e polite.Event) {
			if e.Kind == polite.EventRetry {
				logger.Info("retrying", "event", e)
			}
		},
	}
	_ = tr // used as an http.Client's Transport

	// What OnEvent is given when a 429 says Retry-After: 2.
	req, _ := http.NewRequest(http.MethodGet, "https://api.example/v1/items?api_key=sekrit", nil)
	tr.OnEvent(polite.Event{Kind: polite.EventRetry, Key: "https://api.example", Request: req, Attempt: 1, Status: 429, Wait: 2 * time.Second, Reason: polite.ReasonRetryAfter})
	fmt.Println("done")
	// Output:
	// {"level":"INFO","msg":"retrying","event":{"kind":"retry","key":"https://api.example","method":"GET","path":"/v1/items","attempt":1,"status":429,"wait":2000000000,"reason":"retry-after"}}
	// done
}
