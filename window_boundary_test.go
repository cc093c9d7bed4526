package polite_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// The answers a key reads a spent window's end from may be of two windows.
// A window whose reset is stated in whole seconds, rounded up, is stated
// up to a second late by each answer, and the earliest reset its answers
// state is the nearest its end: pausing a spent window there, rather than
// at the reset of the answer that spent it, was tried (DESIGN.md §5, "a
// window spent ends at the reset the answer that spent it states"). It
// took the first answers of a window for answers of the one before: a
// one-second window whose only request was answered at 0.5 s stated 1.5 s,
// the next one, spent by 1.06 s, stated 2.06 s, and the key probed at
// 1.5 s, refused. 63 of the 108 rows below were refused once: all those
// of epoch, HTTP-date and GitHub resets, half of those of delta resets
// (where that refusal marked the server a sliding-window counter), none of
// IETF and draft-06, whose stated window paces the key. An honest server
// refuses nothing.
func TestNextWindowNotReadAsTheOneBefore(t *testing.T) {
	for _, d := range []ratelimittest.Dialect{ratelimittest.XRateLimitDelta, ratelimittest.XRateLimitEpoch, ratelimittest.XRateLimitDate, ratelimittest.GitHub, ratelimittest.IETF, ratelimittest.Draft06} {
		for _, q := range []int64{2, 3, 10} {
			for _, w := range []time.Duration{time.Second, 1500 * time.Millisecond} {
				for _, lone := range []time.Duration{300 * time.Millisecond, 500 * time.Millisecond, 700 * time.Millisecond} {
					t.Run(fmt.Sprintf("%s/%d per %v/lone at %v", d, q, w, lone), func(t *testing.T) {
						synctest.Test(t, func(t *testing.T) {
							toNow()
							h := ratelimittest.NewHandler(ratelimittest.Config{
								Policies: []ratelimittest.Policy{{Name: "api", Quota: q, Window: w}},
								Dialect:  d, Latency: 5 * time.Millisecond,
							})
							cl, _ := politeOver(h)
							start := time.Now()
							time.Sleep(lone)
							runLongest(t, cl, "http://api.test/", 1, 1)
							time.Sleep(time.Until(start.Add(w + 50*time.Millisecond)))
							if st, _ := runLongest(t, cl, "http://api.test/", int(2*q), 4); st[http.StatusOK] != int(2*q) {
								t.Errorf("statuses %v, want %d ok", st, 2*q)
							}
							if s := h.Stats(); s.Refused > 0 {
								t.Errorf("%d refused by an honest server", s.Refused)
							}
						})
					})
				}
			}
		}
	}
}

// A sliding log states as its reset its oldest start plus its window: once
// that start leaves, the reset moves later, often by less than a second.
// Read as a window's answers rounded differently, the earliest of them
// paused the key before the next slot freed (see
// TestNextWindowNotReadAsTheOneBefore): with answers taking 0 to 400 ms,
// one run of 8 was refused twice. An honest sliding log refuses nothing.
func TestSlidingLogUnevenAnswers(t *testing.T) {
	for seed := range 8 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toNow()
				h := ratelimittest.NewHandler(ratelimittest.Config{
					Policies: []ratelimittest.Policy{{Name: "api", Algorithm: ratelimittest.SlidingLog, Quota: 20, Window: 4 * time.Second}},
					Dialect:  ratelimittest.XRateLimitDelta, Latency: 5 * time.Millisecond,
				})
				var n atomic.Uint64
				srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(&rewriter{ResponseWriter: w, fix: func(http.Header) {
						// A delay of 0 to 400 ms before the answer
						// goes back, the same in every run of a seed.
						x := (n.Add(1) + uint64(seed)*1000003) * 0x9E3779B97F4A7C15
						time.Sleep(time.Duration(x>>40%400) * time.Millisecond)
					}}, r)
				})
				cl, _ := politeOver(srv)
				if st, _ := runLongest(t, cl, "http://api.test/", 160, 4); st[http.StatusOK] != 160 {
					t.Errorf("statuses %v, want 160 ok", st)
				}
				if s := h.Stats(); s.Refused > 0 {
					t.Errorf("%d refused by an honest sliding log", s.Refused)
				}
			})
		})
	}
}
