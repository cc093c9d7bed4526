package polite_test

import (
	"net/http"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// forbidden403 sends one GET through a Transport of one attempt to a
// server answering a GitHub-style 403, its quota spent, its reset an epoch
// reset from now, with a Date its date makes of the server's (none when it
// returns ""); it returns the Transport, the 403 and the kinds of the
// events it emitted.
func forbidden403(t *testing.T, reset time.Duration, date func(string) string) (*polite.Transport, *http.Response, []polite.EventKind) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "60")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(reset).Unix(), 10))
		w.Header()["Date"] = nil // no Date sent (ratelimittest adds none when the key is set)
		if d := date(time.Now().UTC().Format(http.TimeFormat)); d != "" {
			w.Header()["Date"] = []string{d}
		}
		w.WriteHeader(http.StatusForbidden)
	})
	var kinds []polite.EventKind
	tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1,
		OnEvent: func(e polite.Event) { kinds = append(kinds, e.Kind) }}
	resp, err := (&http.Client{Transport: tr}).Get("http://api.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("status %d, Date %q", resp.StatusCode, resp.Header.Get("Date"))
	}
	return tr, resp, kinds
}

// A GitHub-style 403 with no Date field (X-RateLimit-Remaining: 0,
// X-RateLimit-Reset an epoch 3 s ahead) is read by the Transport as a
// refusal: it pauses the origin and hands the 403 back. RetryAt, asked once
// the reset has passed, still reports it a refusal, accepting at now: it
// judged the 403 anew at its own instant, found the reset past, and said
// "not a refusal" (with a Date the reset is measured from it, and the
// answer never changed).
func TestRetryAtForbiddenRefusalAfterReset(t *testing.T) {
	for _, date := range []func(string) string{
		func(string) string { return "" },
		// A Date parse does not read (a no-break space after it, which
		// it does not trim) is none.
		func(d string) string { return d + "\u00a0" },
	} {
		retryAtAfterReset(t, date)
	}
}

func retryAtAfterReset(t *testing.T, date func(string) string) {
	synctest.Test(t, func(t *testing.T) {
		present()
		tr, resp, kinds := forbidden403(t, 3*time.Second, date)
		if _, ok := tr.RetryAt(resp); !ok {
			t.Fatalf("RetryAt at once: false; the test proves nothing")
		}
		time.Sleep(5 * time.Second) // the caller does other work; the reset passes
		at, ok := tr.RetryAt(resp)
		if !ok {
			t.Fatalf("RetryAt of the 403 the Transport read as a refusal (events %v), asked 5s later: false (\"not a refusal\"); want true, at now", kinds)
		}
		if at.After(time.Now()) {
			t.Errorf("RetryAt %v, later than now", at)
		}
	})
}

// A 403 with a Date whose stated quota is spent with its reset already
// past when it arrived (X-RateLimit-Reset an epoch 10 s before the Date) is
// no refusal to the Transport, and none to RetryAt either: the Date tells
// the reset was past on arrival, also folded on one line ("D, D"), as
// parse reads it.
func TestRetryAtForbiddenPastResetWithDate(t *testing.T) {
	for _, date := range []func(string) string{
		func(d string) string { return d },
		func(d string) string { return d + ", " + d },
	} {
		synctest.Test(t, func(t *testing.T) {
			present()
			tr, resp, kinds := forbidden403(t, -10*time.Second, date)
			if slices.Contains(kinds, polite.EventGiveUp) || slices.Contains(kinds, polite.EventRetry) {
				t.Fatalf("the Transport read the 403 as a refusal (events %v): the test proves nothing", kinds)
			}
			if at, ok := tr.RetryAt(resp); ok {
				t.Errorf("RetryAt of a 403 the Transport did not read as a refusal (events %v; Date %q, reset past on arrival): %v, true; want false", kinds, resp.Header.Get("Date"), at)
			}
		})
	}
}
