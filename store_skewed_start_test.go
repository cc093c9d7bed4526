package polite_test

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// DESIGN.md §3: one bad write "holds the key, and keeps its stored state
// alive, no longer than a pause may" (MaxPause, 24 hours). A process whose
// clock runs 23 hours ahead makes one request to an origin stating 1 per
// 24 hours, and writes its start, 23 hours ahead, into the shared Store.
// Read a minute later, the start was kept as written, within MaxPause of
// now, and the quota's window counted from it: the key held for 47 hours.
// A start logged more than skewMax (10 s) ahead of the reader's clock is
// read as made now, so the hold ends a window from now, and the key is
// free a pause after that.
func TestStoreSkewedStartBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newBytesStore()
		seedState(t, store, "http://api.test", 23*time.Hour, control.Config{}, control.Outcome{First: true, Bytes: -1,
			Quotas: []parse.Quota{{Policy: "daily", Unit: "requests", Limit: 1, Window: 24 * time.Hour, Remaining: -1, Reset: -1}}})
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &polite.Transport{Base: base, Budget: &polite.Budget{Store: store}}
		time.Sleep(time.Minute)
		var we *polite.WaitError
		if err := getErr(tr, "http://api.test/"); !errors.As(err, &we) {
			t.Fatalf("a minute after the write: %v, want a WaitError (the day's request is spent)", err)
		} else if hold := time.Until(we.Until); hold > control.MaxPause {
			t.Errorf("held for %v, want at most MaxPause (%v)", hold, control.MaxPause)
		}
		time.Sleep(control.MaxPause + time.Hour)
		if err := getErr(tr, "http://api.test/"); err != nil {
			t.Errorf("a pause and an hour after the bad write: %v, want the request sent", err)
		}
	})
}
