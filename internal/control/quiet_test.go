package control

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// differential drives two States through the same events, read from next:
// one allowed the quiet path, one held to the full path. Every result and,
// after every step, both States (their binary forms and their values) must
// be identical. It returns how many calls the quiet path could take.
func differential(t *testing.T, next func() byte, steps int) (quiet int) {
	t.Helper()
	quiet, _ = drive(t, next, steps, outcome)
	return quiet
}

// drive is differential with the outcomes drawn by draw; it also returns
// how many Acquires the paced path could take.
func drive(t *testing.T, next func() byte, steps int, draw func(next func() byte, b byte, calm bool) Outcome) (quiet, paced int) {
	t.Helper()
	word := func() int64 { return int64(next())<<8 | int64(next()) }
	var cfg Config
	switch next() % 6 {
	case 1:
		cfg.MaxRate = float64(1 + next()%50)
	case 2:
		cfg.MaxConcurrency = int(1 + next()%8)
	case 3:
		cfg.Lease = time.Duration(1+next()%30) * time.Second
	case 4:
		cfg.IdleTTL = time.Duration(1+next()%30) * time.Second
	}
	calm := next()%2 == 0 // mostly answers with nothing to learn, as most servers send
	var fast, full State
	type pair struct{ fast, full Lease }
	var out, kept []pair // granted and not released; released with Keep and not ended
	now := instant(t0)
	for step := range steps {
		switch next() % 4 {
		case 0:
		case 1:
			now += word() * int64(time.Microsecond)
		case 2:
			now += word() * int64(time.Millisecond)
		default:
			d := int64(next()) * int64(time.Second)
			if next() < 16 {
				d = -d / 4 // now and then the clock steps back (an NTP step), up to a minute
			}
			now += d
		}
		b := next()
		switch op := b % 8; {
		case op < 4: // Acquire
			var ask Ask
			ask.Custom, ask.Turns = b&8 != 0, b&128 != 0
			if b&16 != 0 {
				ask.Until = at(now + (int64(next())-32)*int64(time.Second))
			}
			if b&32 != 0 && next()%4 == 0 {
				ask.After, ask.AfterReason = at(now+(int64(next())-64)*int64(10*time.Millisecond)), Reason(next()%12)
			}
			var p pair
			if b&64 != 0 && next()%8 == 0 {
				c := Cost{Tokens: int64(next()), Unit: "points", Amount: int64(next() % 4)}
				p.fast.SetCost(c)
				p.full.SetCost(c)
			}
			if fast.quiet(now, &cfg) && ask.After.IsZero() {
				quiet++
			} else if ask.After.IsZero() && fast.paced(now, &cfg) != nil {
				paced++
			}
			h1, ok1 := fast.acquireAt(now, &cfg, &ask, &p.fast, true)
			h2, ok2 := full.acquireAt(now, &cfg, &ask, &p.full, false)
			if ok1 != ok2 || h1 != h2 || !reflect.DeepEqual(p.fast, p.full) {
				t.Fatalf("step %d: Acquire at %d: quiet path (%+v, %v, %+v), full path (%+v, %v, %+v)", step, now, h1, ok1, p.fast, h2, ok2, p.full)
			}
			if ok1 {
				out = append(out, p)
			}
		case op < 7 && len(out) > 0: // Release
			i := int(next()) % len(out)
			p := out[i]
			out = append(out[:i], out[i+1:]...)
			o := draw(next, b, calm)
			o2 := o
			o2.Quotas = append([]parse.Quota(nil), o.Quotas...)
			var plan1 Plan
			if fast.ReleasesQuietly(now, &p.fast, &o) {
				quiet++
				if b&16 != 0 {
					// As the in-memory store releases an accepted
					// answer: the quiet path called directly.
					fast.ReleaseQuiet(now, &cfg, &p.fast, &o)
				} else {
					plan1 = fast.releaseAt(at(now), now, &cfg, &p.fast, &o, true)
				}
			} else {
				plan1 = fast.releaseAt(at(now), now, &cfg, &p.fast, &o, true)
			}
			plan2 := full.releaseAt(at(now), now, &cfg, &p.full, &o2, false)
			if plan1 != plan2 {
				t.Fatalf("step %d: Release at %d of %+v: quiet path %+v, full path %+v", step, now, o, plan1, plan2)
			}
			if o.Keep {
				kept = append(kept, p)
			}
		case len(kept) > 0: // End
			i := int(next()) % len(kept)
			p := kept[i]
			kept = append(kept[:i], kept[i+1:]...)
			fast.EndInstant(now, &cfg, &p.fast)
			full.EndInstant(now, &cfg, &p.full)
		}
		b1, err1 := fast.MarshalBinary()
		b2, err2 := full.MarshalBinary()
		if err1 != nil || err2 != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("step %d: binary forms differ (errors %v, %v):\nquiet %x\nfull  %x", step, err1, err2, b1, b2)
		}
		// Every form written reads back, and is written again the same.
		var back State
		if err := back.UnmarshalBinary(b1); err != nil {
			t.Fatalf("step %d: the form written does not read back (%v):\n%x", step, err, b1)
		}
		if b3, _ := back.MarshalBinary(); !bytes.Equal(b3, b1) {
			t.Fatalf("step %d: the form read back is written as\n%x\nwant\n%x", step, b3, b1)
		}
		if !reflect.DeepEqual(fast, full) {
			t.Fatalf("step %d: states differ:\nquiet %+v\nfull  %+v", step, fast, full)
		}
	}
	return quiet, paced
}

// outcome draws an outcome from next: none, quotas of several dialects and
// units (some spent), a refusal with or without a wait, a failure, a
// transient failure, a body kept in flight; when calm, mostly none.
func outcome(next func() byte, b byte, calm bool) Outcome {
	o := Outcome{First: b&8 != 0, Bytes: int64(next()) - 1, Rand: uint64(next()) << 40}
	if next()%4 == 0 {
		o.Dated, o.Skew = true, time.Duration(int64(next())-128)*time.Duration(10*time.Millisecond)
	}
	kind := next() % 10
	if calm && next()%16 != 0 {
		kind %= 4
	}
	switch kind {
	case 0, 1, 2: // nothing to learn
	case 3:
		o.Keep = true
	case 4, 5:
		n := 1 + int(next()%3)
		for range n {
			q := parse.Quota{Policy: string(rune('a' + next()%3)), Dialect: "ietf", Limit: int64(next() % 20), Window: time.Duration(next()%4) * time.Second,
				Remaining: int64(next()%6) - 1, Reset: time.Duration(int64(next()%8)-1) * time.Second}
			switch next() % 6 {
			case 0:
				q.Unit = "tokens"
			case 1:
				q.Unit = "content-bytes"
			case 2:
				q.Unit = "concurrent-requests"
			case 3:
				q.Dialect = "github"
			}
			o.Quotas = append(o.Quotas, q)
		}
	case 6, 7:
		o.Refused = true
		o.Refusal = Refusal{Given: next()%2 == 0, Wait: time.Duration(next()) * 10 * time.Millisecond, Reason: ReasonRetryAfter,
			Backoff: time.Duration(next()) * 10 * time.Millisecond, Retryable: next()%2 == 0, MaxWait: time.Minute}
		if next()%4 == 0 {
			o.Refusal.Violated = []string{"a"}
		}
	case 8:
		o.Failed = true
		o.Transient = next()%2 == 0
	case 9:
		o.Transient = true
		o.Refusal = Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}
	}
	return o
}

// TestQuietPathMatchesFull runs the differential drive over seeded random
// event sequences, and checks that the quiet path was taken often.
func TestQuietPathMatchesFull(t *testing.T) {
	total, quiet := 0, 0
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		next := func() byte { return byte(r.Uint32()) }
		steps := 400
		quiet += differential(t, next, steps)
		total += steps
	}
	t.Logf("quiet path eligible in %d of %d steps", quiet, total)
	if quiet < total/10 {
		t.Fatalf("quiet path eligible in %d of %d steps, want at least a tenth: the test no longer exercises it", quiet, total)
	}
}

// FuzzQuietPath runs the differential drive on any bytes: the quiet path
// and the full path must leave identical States and give identical
// results.
func FuzzQuietPath(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 9})
	addRandomSeeds(f, 1, 2)
	f.Fuzz(func(t *testing.T, data []byte) {
		differential(t, byteReader(data), min(len(data), 2000))
	})
}

// addRandomSeeds adds four seeds of 512 random bytes, drawn from a PCG
// seeded with seed1 and seed2, to a fuzz target that reads bytes.
func addRandomSeeds(f *testing.F, seed1, seed2 uint64) {
	r := rand.New(rand.NewPCG(seed1, seed2))
	for range 4 {
		b := make([]byte, 512)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		f.Add(b)
	}
}

// byteReader returns the bytes of data one by one, then zeros.
func byteReader(data []byte) func() byte {
	i := 0
	return func() byte {
		if i >= len(data) {
			return 0
		}
		i++
		return data[i-1]
	}
}
