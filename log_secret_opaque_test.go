package polite_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite"
)

// With Transport.Key set, an event's Err and a log record hide the path
// of the request, should Base's error quote its URL. net/http sends a
// URL's Opaque as its path (the documented way to send encoded slashes),
// and a request whose path was in Opaque had it shown: only Path and its
// escaped form were hidden.
func TestOpaquePathHiddenWithCustomKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []string
		tr := &polite.Transport{
			RetryTransient: true,
			MaxAttempts:    2,
			Key:            func(r *http.Request) string { return "tenant-account-key" },
			OnEvent: func(e polite.Event) {
				if e.Err != nil {
					got = append(got, e.Err.Error())
				}
			},
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, &opaqueTimeout{fmt.Sprintf("dial %s: i/o timeout", r.URL)}
			}),
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
		req.URL = &url.URL{Scheme: "http", Host: "api.test", Opaque: "//api.test/tenants/acme-secret/items"}
		resp, err := tr.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		_ = err
		if len(got) == 0 {
			t.Fatal("no event carried Base's error")
		}
		for _, s := range got {
			if strings.Contains(s, "acme-secret") {
				t.Errorf("event error shows the request's path with a custom Key: %q", s)
			}
		}
	})
}

type opaqueTimeout struct{ msg string }

func (e *opaqueTimeout) Error() string   { return e.msg }
func (e *opaqueTimeout) Timeout() bool   { return true }
func (e *opaqueTimeout) Temporary() bool { return true }
