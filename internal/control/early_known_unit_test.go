package control

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// estimatedCost is a cost as polite.EstimateCost declares it: Tokens,
// InputTokens and OutputTokens all set.
var estimatedCost = Cost{Tokens: 1000, InputTokens: 800, OutputTokens: 200}

// requestsAndTokens returns an OpenAI answer's quotas: requests, and tokens
// when tokens is set (OpenAI never states input-tokens or output-tokens).
func requestsAndTokens(tokens bool) []parse.Quota {
	qs := []parse.Quota{{Unit: "requests", Limit: 500, Remaining: 499, Reset: 120 * time.Millisecond, Dialect: "openai"}}
	if tokens {
		qs = append(qs, parse.Quota{Unit: "tokens", Limit: 30000, Remaining: 29000, Reset: 2 * time.Second, Dialect: "openai"})
	}
	return qs
}

// zeroTokenLimit returns qs with the limit of its tokens quota stated as 0.
func zeroTokenLimit(qs []parse.Quota) []parse.Quota {
	for i := range qs {
		if qs[i].Unit == "tokens" {
			qs[i].Limit = 0
		}
	}
	return qs
}

// inFlightForm returns the binary form of an OpenAI-shaped key after one
// estimated request was answered (stating tokens or not) and a second
// one is in flight: the state a Store holds between those two answers.
func inFlightForm(t *testing.T, tokens bool) []byte {
	t.Helper()
	var s State
	cfg := Config{}
	var a Lease
	a.SetCost(estimatedCost)
	if _, ok := s.Acquire(t0, &cfg, Ask{}, &a); !ok {
		t.Fatal("first request held")
	}
	s.Release(t0.Add(100*time.Millisecond), &cfg, &a, &Outcome{First: true, Served: true, Bytes: -1, Quotas: requestsAndTokens(tokens)})
	var b Lease
	b.SetCost(estimatedCost)
	if _, ok := s.Acquire(t0.Add(200*time.Millisecond), &cfg, Ask{}, &b); !ok {
		t.Fatal("second request held")
	}
	f, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A version before the reservations kept aside (tail 15) rejects any tail
// it does not know, and redisstore then starts the key over. A key that
// knows a unit of cost keeps nothing aside, and its form is the one that
// version writes for the same calls, and reads: reserved aside in the
// units OpenAI never states (its input and output tokens), as they first
// were, every request in flight wrote tail 15, and an older process
// sharing the key started it over at every read. (A key that knows no unit
// yet writes the tail while a priced request is in flight: that is what
// the reservations aside are for.)
func TestEarlyFormOnceUnitKnown(t *testing.T) {
	const common = "018080d0bccfafe1e331819cb0df8d258188debe010202000000000000010400000001819cb0df8d250100010000018184af5ff40300010001f303000000000000000000000100010100000000000000000000009a999999999901408184af5f00000080c2d72f00000000000000000000000000"
	for _, tc := range []struct {
		name   string
		tokens bool
		golden string // written before tail 15 for the same calls
	}{
		{"openai key stating tokens (input/output-tokens never stated)", true,
			"02" + common + "0106746f6b656e7301010100819cb0df8d25e80701000000038184af5fb1ea0100d8e3bb1dacc2a03ec8e2018184af5f81d4dbd20f010d00e807c801000e01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden, _ := hex.DecodeString(tc.golden)
			got := inFlightForm(t, tc.tokens)
			// The open ramp's probeEnd now holds its last answer or
			// grant (see ramp.stallAt), a field of the form that
			// version reads, and ignores while the ramp is open; it
			// wrote 0 there once the probe had answered.
			var s State
			if err := s.UnmarshalBinary(got); err != nil {
				t.Fatal(err)
			}
			s.ramp.probeEnd = 0
			got, _ = s.MarshalBinary()
			if !bytes.Equal(got, golden) {
				extra := ""
				if bytes.HasPrefix(got, golden) && len(got) > len(golden) {
					extra = ", the previous form followed by tail tag " + hex.EncodeToString(got[len(golden):len(golden)+1]) +
						" and " + hex.EncodeToString(got[len(golden)+1:])
				}
				t.Errorf("binary form: %d bytes%s; want the %d bytes a version before tail 15 writes and reads (it rejects an unknown tail with ErrBinary, and redisstore starts the key over)",
					len(got), extra, len(golden))
			}
		})
	}
}

// A priced request to an OpenAI key that states its tokens quota
// allocates nothing. Reserved aside in the units OpenAI never states, as
// it first was, each request allocated those reservations again after
// its release pruned them: 2 allocs a request, twice as long. (A key
// that states nothing keeps its priced requests aside, 3 allocs each.)
// Nor does one stating its tokens limit as 0 on every answer: the copy
// of the answer's quotas that reads the 0 as unknown (see
// unzeroCostLimits) was made on the heap, 1 alloc a request.
func TestPricedRequestAllocsOnceUnitKnown(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations under the race detector")
	}
	for _, tc := range []struct {
		name   string
		quotas []parse.Quota
	}{
		{"openai key stating tokens", requestsAndTokens(true)},
		{"openai key stating a tokens limit of 0", zeroTokenLimit(requestsAndTokens(true))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s State
			cfg := Config{}
			now := t0
			out := Outcome{First: true, Served: true, Bytes: 2, Quotas: tc.quotas}
			step := func() {
				var l Lease
				l.SetCost(estimatedCost)
				if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
					t.Fatal("held")
				}
				now = now.Add(time.Microsecond)
				s.Release(now, &cfg, &l, &out)
			}
			for range 10 {
				step() // warm: units known, slices grown
			}
			if n := testing.AllocsPerRun(100, step); n != 0 {
				t.Errorf("a priced request, one at a time: %v allocs each; want 0", n)
			}
		})
	}
}
