package ratelimittest_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/parse"
	"github.com/politehttp/polite/ratelimittest"
)

// Draft06's RateLimit-Policy describes the limit RateLimit-Limit states:
// its item's quota is that limit, with the window a client learns from
// it. With the Policy's quota capped at 15 digits and RateLimit-Limit
// (and -Remaining) left exact, a quota over 15 digits (stated, or made so
// by Inflate) made the two disagree: a client could not join them, and
// polite's own parser read two quotas, the triplet's without a window and
// a phantom 999999999999999 per hour whose remaining was unknown. The
// triplet's fields are Structured Fields too, capped alike.
func TestDraft06PolicyMatchesLimit(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  ratelimittest.Config
	}{
		{"quota 1e16", ratelimittest.Config{Dialect: ratelimittest.Draft06, Policies: []ratelimittest.Policy{{Quota: 1e16, Window: time.Hour}}}},
		{"inflated", ratelimittest.Config{Dialect: ratelimittest.Draft06, Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Hour}}, Inflate: 1e15}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				resp, _ := send(t, client(ratelimittest.NewHandler(tt.cfg)), "")
				limit, policy := resp.Header.Get("RateLimit-Limit"), resp.Header.Get("RateLimit-Policy")
				if want := limit + ";w=3600"; policy != want {
					t.Errorf("RateLimit-Limit %q, RateLimit-Policy %q: the policy's quota is not the limit (want %q)", limit, policy, want)
				}
				qs := parse.Header(resp.Header, time.Now())
				if len(qs) != 1 || qs[0].Window != time.Hour || qs[0].Remaining < 0 {
					for _, q := range qs {
						t.Logf("parsed: %s %d of %d per %v", q.Dialect, q.Remaining, q.Limit, q.Window)
					}
					t.Errorf("parse.Header read %d quotas; want one, of a 1h window with its remaining", len(qs))
				}
			})
		})
	}
}
