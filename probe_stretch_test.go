package polite_test

import (
	"math"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/ratelimittest"
)

// A lone caller against 10 a minute that states nothing (bare 429s),
// MaxAttempts 1 so that each refusal comes back to it. It sends 11 (the
// 11th refused: the learner measures), two more a little later (refused:
// the window had not ended at their starts), then stops for 5 minutes, an
// honest lull. The acceptance after it says the window is 5 minutes at
// most, nothing of a window as short as half again the last refused: the
// window measured is taken whole, as before, and none of the 30 requests
// after it is refused. The bound of a probe whose wait was lengthened
// (DESIGN.md §6), once applied to any late acceptance, learned a few
// seconds, and the server refused 10 of the 30.
func TestLearnedWindowAfterLull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: time.Minute}},
			Dialect:  ratelimittest.Bare429,
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 1}
		c := &http.Client{Transport: tr}
		get := func() int {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.test/", nil)
			code, err := statusOf(c, req)
			if err != nil {
				t.Logf("Do: %v", err)
			}
			return code
		}
		for range 13 {
			get()
		}
		before := h.Stats()
		t.Logf("before the lull: admitted %d, refused %d", before.Admitted, before.Refused)
		time.Sleep(5 * time.Minute) // the caller has nothing to send
		h.Reset()
		start := time.Now()
		codes := map[int]int{}
		for range 30 {
			codes[get()]++
		}
		st := h.Stats()
		t.Logf("after the lull: %v in %v; server admitted %d, refused %d", codes, time.Since(start), st.Admitted, st.Refused)
		if st.Refused > 0 || codes[http.StatusTooManyRequests] > 0 {
			t.Errorf("after an honest 5-minute lull, the server refused %d request(s) (%d 429s returned to the caller): the window was learned far shorter than the minute it is", st.Refused, codes[http.StatusTooManyRequests])
		}
	})
}

// MaxWait math.MaxInt64 ("wait as long as the server asks"), a lone
// caller, against 10 a minute that states nothing: a probe's waits, spread
// over its attempts left up to MaxWait, grew by 26 times each, and a task
// took 35 minutes. Each wait is now twice the time measured at most.
func TestProbeHugeMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: time.Minute}},
			Dialect:  ratelimittest.Bare429,
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxWait: math.MaxInt64}
		start := time.Now()
		statuses, longest := runLongest(t, &http.Client{Transport: tr}, "http://api.test/", 40, 1)
		took := time.Since(start)
		t.Logf("%v in %v, longest task %v; server refused %d", statuses, took, longest, h.Stats().Refused)
		if longest > 5*time.Minute {
			t.Errorf("a task took %v against a window of a minute (40 tasks in %v); want a few minutes at most", longest, took)
		}
	})
}

// MaxAttempts 3, a lone caller, against 10 per 2 s that states nothing:
// the 11th request is refused (the learner measures), its second attempt,
// a probe, a second later, and its last waited all of MaxWait, 10 minutes,
// for a window of 2 s. Each wait is now twice the time measured at most:
// its last goes 2 s after, and is accepted.
func TestProbeFewAttemptsShortWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.FixedWindow, Quota: 10, Window: 2 * time.Second}},
			Dialect:  ratelimittest.Bare429,
		})
		tr := &polite.Transport{Base: &ratelimittest.Transport{Handler: h}, MaxAttempts: 3}
		start := time.Now()
		statuses, longest := runLongest(t, &http.Client{Transport: tr}, "http://api.test/", 30, 1)
		took := time.Since(start)
		st := h.Stats()
		t.Logf("%v in %v, longest task %v; server refused %d", statuses, took, longest, st.Refused)
		// 30 tasks at 10 per 2 s: 3 windows, the first measured.
		if longest > 30*time.Second {
			t.Errorf("a task took %v against a window of 2 s (30 tasks in %v); want well under 30 s", longest, took)
		}
	})
}
