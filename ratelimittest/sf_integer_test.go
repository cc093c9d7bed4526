package ratelimittest_test

import (
	"math"
	"regexp"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// sfNumber matches the numbers of the structured fields the Handler
// sends: an RFC 9651 Integer has at most 15 digits (§3.3.1), and a
// parser must fail on a longer one (§4.2.4).
var sfNumber = regexp.MustCompile(`-?[0-9]+`)

// The IETF, Draft06 and Draft07 fields are Structured Fields (draft-11:
// "RateLimit-Policy … is a List", q, r, t are Integers), but a quota over
// 15 digits, stated as is or made so by Inflate, was written verbatim:
// q=1000000000000000, r=999999999999999… and limit=9223372036854775807,
// which an RFC 9651 parser rejects, so that the whole field was dropped.
func TestStructuredFieldIntegersAtMost15Digits(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  ratelimittest.Config
	}{
		{"ietf quota 1e15", ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 1e15, Window: time.Hour}}}},
		{"ietf inflated", ratelimittest.Config{Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Hour}}, Inflate: math.MaxInt64}},
		{"draft-07 quota 1e15", ratelimittest.Config{Dialect: ratelimittest.Draft07, Policies: []ratelimittest.Policy{{Quota: 1e15, Window: time.Hour}}}},
		{"draft-06 inflated", ratelimittest.Config{Dialect: ratelimittest.Draft06, Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Hour}}, Inflate: 1e15}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				resp, _ := send(t, client(ratelimittest.NewHandler(tt.cfg)), "")
				// The fields that hold a policy; Draft06 caps the rest alike.
				for _, name := range []string{"RateLimit", "RateLimit-Policy"} {
					v := resp.Header.Get(name)
					if v == "" {
						continue
					}
					for _, n := range sfNumber.FindAllString(v, -1) {
						if len(n) > 15 {
							t.Errorf("%s: %s: %s holds the integer %s, over RFC 9651's 15 digits", tt.name, name, v, n)
						}
					}
				}
			})
		})
	}
}
