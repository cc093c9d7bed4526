package control

import (
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// An answer stating one of two policies of the same quota and window
// renamed the other to its name (renamed was tried before the lookup by
// name), so that the other's observation of 2 left was lost: 6 requests
// were granted at once. A name the key has is its own policy's (DESIGN.md
// §3: a policy named afresh is "a name not stated before").
func TestAnswerStatingOnePolicyKeepsTheOther(t *testing.T) {
	d := &hostile{t: t}
	if n := oneOfTwoStated(t, d, "a", "b"); n > 2 {
		t.Errorf("%d granted at once with a stating 2 left", n)
	}
}

// oneOfTwoStated has d's key answer a request stating policies a (2 left)
// and b (90 left) of one quota and window, then one stating b alone. It
// checks that the key keeps two policies, and returns how many requests
// it then grants at once (at most 50).
func oneOfTwoStated(t *testing.T, d *hostile, a, b string) int {
	t.Helper()
	stated := func(name string, r int64) parse.Quota {
		return parse.Quota{Policy: name, Unit: "requests", Limit: 100, Window: time.Minute, Remaining: r, Reset: 50 * time.Second, Dialect: "ietf"}
	}
	answer := func(at time.Duration, qs ...parse.Quota) {
		l, _, ok := d.acq(at, Ask{}, Cost{})
		if !ok {
			t.Fatalf("request at %v held", at)
		}
		d.rel(at+100*time.Millisecond, &l, Outcome{First: true, Bytes: -1, Quotas: qs})
	}
	answer(0, stated(a, 2), stated(b, 90))
	answer(200*time.Millisecond, stated(b, 89))
	if p := d.s.policies; len(p) != 2 || p[0].name == p[1].name {
		t.Errorf("%d policies after an answer stating %q alone, want two of two names", len(p), b)
	}
	n := 0
	for ; n < 50; n++ {
		if _, _, ok := d.acq(400*time.Millisecond, Ask{}, Cost{}); !ok {
			break
		}
	}
	return n
}

// A content-bytes policy's expected cost was kept up to maxQuota while
// UnmarshalBinary accepts maxCost: after one 4 GiB response the state's
// own binary form did not read back (a Store then starts the key over).
func TestContentBytesCostRoundTrip(t *testing.T) {
	d := &hostile{t: t}
	l, _, ok := d.acq(0, Ask{}, Cost{})
	if !ok {
		t.Fatal("held")
	}
	d.rel(time.Second, &l, Outcome{First: true, Bytes: 4 << 30, Quotas: []parse.Quota{
		{Policy: "bytes", Unit: "content-bytes", Limit: 1 << 40, Window: time.Hour, Remaining: 1 << 39, Reset: time.Hour, Dialect: "ietf"},
	}})
	b, err := d.s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary(MarshalBinary()) after a 4 GiB response: %v", err)
	}
}
