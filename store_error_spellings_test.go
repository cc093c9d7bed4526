package polite_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// failingKeyStore fails every Update with the error fail makes of the
// key, as a driver's error may.
type failingKeyStore struct{ fail func(key string) error }

func (s failingKeyStore) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	return s.fail(key)
}

func (failingKeyStore) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	<-ctx.Done()
	return ctx.Err()
}

// storeDownWithKey sends one request with header value hv through a
// Transport whose custom Key returns that value and whose Store fails
// with fail(key); it returns the log and the texts of the events' Err.
func storeDownWithKey(t *testing.T, hv string, fail func(string) error) (logs string, errs []string) {
	var buf bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		tr := &polite.Transport{
			Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			}),
			Key:    func(r *http.Request) string { return r.Header.Get("Authorization") },
			Budget: &polite.Budget{Store: failingKeyStore{fail}},
			Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
			OnEvent: func(e polite.Event) {
				if e.Err != nil {
					errs = append(errs, fmt.Sprintf("%v | %+v | %#v", e.Err, e.Err, e.Err))
				}
			},
		}
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		req.Header.Set("Authorization", hv)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	if len(errs) == 0 {
		t.Fatal("no event with an error (want an EventStoreDown)")
	}
	return buf.String(), errs
}

// A Store reached over HTTP fails with a *url.Error whose URL holds the
// key path-escaped, as a URL writes it. Base's error is shown without the
// custom key escaped so (DESIGN.md §5); a Store's error hid the key only
// as it is or Go-quoted, and the escaped credential reached Event.Err and
// the log record.
func TestStoreErrorHidesEscapedCustomKey(t *testing.T) {
	const token = "sk/live+R3VIEW0123=="
	logs, errs := storeDownWithKey(t, "Bearer "+token, func(key string) error {
		return &url.Error{Op: "Post", URL: "http://store.internal/v1/keys/" + url.PathEscape(key), Err: errors.New("connection refused")}
	})
	escaped := url.PathEscape(token) // sk%2Flive+R3VIEW0123==
	for _, e := range errs {
		if strings.Contains(e, escaped) {
			t.Errorf("Event.Err shows the custom key escaped (%s): %s", escaped, e)
		}
	}
	if strings.Contains(logs, escaped) {
		t.Errorf("the log shows the custom key escaped (%s): %s", escaped, logs)
	}
}

// A short custom key (a plan tier, a tenant number) was replaced by its
// fingerprint wherever its letters occur in a Store's error: the Store's
// address was mangled ("dial tcp key-6b5736c00.0.0.key-6b5736c0:6379"),
// and the places the fingerprint took spelled the key out. Base's error
// leaves a key under 6 bytes alone for that reason (minCredential,
// DESIGN.md §5), and a Store's error does too.
func TestStoreErrorLeavesShortCustomKey(t *testing.T) {
	const addr = "10.0.0.1:6379"
	logs, errs := storeDownWithKey(t, "1", func(key string) error {
		return errors.New("redisstore: update: dial tcp " + addr + ": connect: connection refused")
	})
	for _, e := range errs {
		if !strings.Contains(e, addr) {
			t.Errorf("Event.Err lost the Store's address %s: %s", addr, e)
		}
	}
	if !strings.Contains(logs, addr) {
		t.Errorf("the log lost the Store's address %s: %s", addr, logs)
	}
}
