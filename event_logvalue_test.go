package polite_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// An Event a caller logs with a handler of its own (slog.Any) is the group
// of what the Transport's Logger records: to a JSON handler it failed to
// encode ("!ERROR:json: unsupported type"), and a text handler printed its
// Request whole, query and Authorization included.
func TestEventLogValue(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "https://api.example/v1/items?api_key=sekrit123", nil)
	req.Header.Set("Authorization", "Bearer tok-0123456789")
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		e        polite.Event
		want     map[string]any
		wantPath bool
	}{
		{"origin key", polite.Event{Kind: polite.EventRetry, Time: at, Key: "https://api.example", Request: req, Attempt: 2, Status: 429, Wait: 1500 * time.Millisecond, Reason: polite.ReasonRetryAfter},
			map[string]any{"kind": "retry", "key": "https://api.example", "method": "POST", "attempt": 2.0, "status": 429.0, "reason": "retry-after"}, true},
		{"custom key", polite.Event{Kind: polite.EventGiveUp, Time: at, Key: "key-0123abcd", Request: req, Attempt: 1, Status: 503, Err: errors.New(`Post "https://api.example/v1/items?api_key=sekrit123": Bearer tok-0123456789 refused`)},
			map[string]any{"kind": "give-up", "key": "key-0123abcd", "method": "POST", "status": 503.0}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			slog.New(slog.NewJSONHandler(&buf, nil)).Info("polite", "event", tt.e)
			out := buf.String()
			if strings.Contains(out, "!ERROR") {
				t.Fatalf("the event did not encode: %s", out)
			}
			for _, secret := range []string{"sekrit123", "tok-0123456789"} {
				if strings.Contains(out, secret) {
					t.Errorf("the record shows %q: %s", secret, out)
				}
			}
			var rec struct{ Event map[string]any }
			if err := json.Unmarshal([]byte(out), &rec); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for k, v := range tt.want {
				if rec.Event[k] != v {
					t.Errorf("event.%s = %v, want %v (%s)", k, rec.Event[k], v, out)
				}
			}
			if _, ok := rec.Event["path"]; ok != tt.wantPath {
				t.Errorf("event has a path: %v, want %v (%s)", ok, tt.wantPath, out)
			}
			if tt.wantPath && rec.Event["path"] != "/v1/items" {
				t.Errorf("event.path = %v, want /v1/items", rec.Event["path"])
			}
			buf.Reset()
			slog.New(slog.NewTextHandler(&buf, nil)).Info("polite", "event", tt.e)
			for _, secret := range []string{"sekrit123", "tok-0123456789"} {
				if strings.Contains(buf.String(), secret) {
					t.Errorf("the text record shows %q: %s", secret, buf.String())
				}
			}
		})
	}
}

// An Event whose Err is a typed nil *WaitError (an Err that is not nil, as
// an interface holding a nil pointer) must log as any other error does:
// logError prints a typed nil's text through fmt, which recovers a panicking
// Error method, but attrs dereferenced a *WaitError without looking.
func TestEventLogValueTypedNilWaitError(t *testing.T) {
	for _, kind := range []polite.EventKind{"", polite.EventWaitError, polite.EventGiveUp, polite.EventStoreDown} {
		e := polite.Event{Kind: kind, Key: "http://api.test", Err: (*polite.WaitError)(nil)}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("Event{Kind: %q, Err: (*WaitError)(nil)}.LogValue() panicked: %v", kind, p)
				}
			}()
			_ = e.LogValue()
		}()
	}
}
