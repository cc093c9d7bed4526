package control

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// A first measurement counts from the latest lull at least as long as the
// window it measures, not from the cycle's first start (see lull): a
// caller that sent a request every few seconds, then ten at once, is
// measured by the ten. Counted from the cycle's first start, the first
// case below was learned as 22 per 1m1.11s, and the third as 11 per 1m5.1s
// (see TestLearnedAfterTrickle for what that cost a caller).
func TestFirstMeasurementFromLull(t *testing.T) {
	type step struct {
		at     time.Duration
		idle   time.Duration // since the key was last asked for a request
		epoch  uint64
		answer time.Duration // after at; 0: none (still in flight at the end)
		ok     bool
	}
	trickle := func(from, every time.Duration, n int) []step {
		var s []step
		for i := range n {
			idle := every - 50*time.Millisecond
			if i == 0 {
				idle = 0
			}
			s = append(s, step{at: from + time.Duration(i)*every, idle: idle, epoch: 1, answer: 50 * time.Millisecond, ok: true})
		}
		return s
	}
	burst := func(at time.Duration, idle time.Duration, n int) []step {
		s := []step{{at: at, idle: idle, epoch: 1, answer: 50 * time.Millisecond, ok: true}}
		for i := 1; i <= n; i++ {
			s = append(s, step{at: at + time.Duration(i)*time.Millisecond, epoch: 1, answer: 50 * time.Millisecond, ok: i < n})
		}
		return s
	}
	cat := func(ss ...[]step) []step {
		var all []step
		for _, s := range ss {
			all = append(all, s...)
		}
		return all
	}
	for _, c := range []struct {
		name  string
		steps []step
		q     int64
		w     time.Duration
	}{
		{
			// The probe a second after the refusal is accepted: the
			// window, 1.05 s from the lull of 4.95 s, is within it.
			name: "window within the lull",
			steps: cat(trickle(0, 5*time.Second, 12), burst(60*time.Second, 4950*time.Millisecond, 10),
				[]step{{at: 61060 * time.Millisecond, epoch: 2, answer: 50 * time.Millisecond, ok: true}}),
			q: 10, w: 1110 * time.Millisecond,
		},
		{
			// Probes refused until 10 s after the burst: a window longer
			// than the lull, which may have counted the requests before
			// it. Measured from the cycle's first start, as before.
			name: "window beyond the lull",
			steps: cat(trickle(0, 5*time.Second, 12), burst(60*time.Second, 4950*time.Millisecond, 10),
				[]step{
					{at: 61060 * time.Millisecond, epoch: 2, answer: 50 * time.Millisecond},
					{at: 63060 * time.Millisecond, epoch: 3, answer: 50 * time.Millisecond},
					{at: 67060 * time.Millisecond, epoch: 4, answer: 50 * time.Millisecond},
					{at: 70060 * time.Millisecond, epoch: 5, answer: 50 * time.Millisecond, ok: true},
				}),
			q: 12 + 10, w: 70110 * time.Millisecond,
		},
		{
			// Two lulls: 30 s before 60 s, then 2 s before 62.2 s. The
			// window, 2.9 s from the later, is beyond it; from the
			// earlier, 5.1 s, within it: measured from 60 s.
			name: "the latest lull long enough",
			steps: cat(trickle(0, 30*time.Second, 2), burst(60*time.Second, 29950*time.Millisecond, 5)[:5],
				burst(62200*time.Millisecond, 2*time.Second, 4),
				[]step{{at: 65*time.Second + 50*time.Millisecond, epoch: 2, answer: 50 * time.Millisecond, ok: true}}),
			q: 5 + 4, w: 5100 * time.Millisecond,
		},
		{
			// Lulls shorter than the refusal floor are none: a caller
			// pausing half a second is measured from the first start.
			name: "pauses shorter than the floor",
			steps: cat(trickle(0, 500*time.Millisecond, 10), burst(5*time.Second, 450*time.Millisecond, 10),
				[]step{{at: 6060 * time.Millisecond, epoch: 2, answer: 50 * time.Millisecond, ok: true}}),
			q: 10 + 10, w: 6110 * time.Millisecond,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := instant(t0)
			var l learner
			type answer struct {
				at int64
				g  Lease
				ok bool
			}
			var answers []answer
			var seq uint64
			for _, s := range c.steps {
				now := base + int64(s.at)
				// The answers due by now come first, in order.
				for len(answers) > 0 {
					i := 0
					for j := range answers {
						if answers[j].at < answers[i].at {
							i = j
						}
					}
					a := answers[i]
					if a.at > now {
						break
					}
					answers = append(answers[:i], answers[i+1:]...)
					if a.ok {
						l.accepted(&a.g, int64(len(answers)), a.at)
					} else {
						l.refused(&a.g, seq, a.g.epoch, a.at, false, false)
					}
				}
				seq++
				l.idle = int64(s.idle)
				g := Lease{seq: seq, epoch: s.epoch, start: now}
				g.cycle = l.started(s.epoch, now)
				if s.answer > 0 {
					answers = append(answers, answer{at: now + int64(s.answer), g: g, ok: s.ok})
				}
			}
			for _, a := range answers {
				if a.ok {
					l.accepted(&a.g, 0, a.at)
				} else {
					l.refused(&a.g, seq, a.g.epoch, a.at, false, false)
				}
			}
			q := l.quota
			if q == nil {
				t.Fatalf("nothing learned")
			}
			if q.q != c.q || q.w != int64(c.w) {
				t.Errorf("learned %d per %v, want %d per %v", q.q, time.Duration(q.w), c.q, c.w)
			}
			if l.nLulls != 0 {
				t.Errorf("%d lulls kept once measured", l.nLulls)
			}
		})
	}
}

// The lulls a key keeps are bounded and each twice the next: a longer one
// drops those before it not twice as long; the oldest goes when all are
// kept; a lull at or before a start already kept (a clock stepped back)
// drops the later ones, and one before the cycle's start is none.
func TestLullsKept(t *testing.T) {
	base := instant(t0)
	sec := int64(time.Second)
	gaps := func(l *learner) []int64 {
		var g []int64
		for _, u := range l.lulls[:l.nLulls] {
			g = append(g, u.gap/sec)
		}
		return g
	}
	for _, c := range []struct {
		name string
		gaps []int64 // seconds, one lull a second apart
		want []int64
	}{
		{"longer drops shorter", []int64{8, 1, 3}, []int64{8, 3}},
		{"growing", []int64{1, 2, 4, 8, 16}, []int64{16}},
		{"not twice", []int64{10, 6}, []int64{6}},
		{"oldest goes", []int64{16, 8, 4, 2, 1}, []int64{8, 4, 2, 1}},
	} {
		var l learner
		l.cycleStart = base
		for i, g := range c.gaps {
			l.addLull(base+int64(i+1)*sec, g*sec)
		}
		if got := gaps(&l); !slices.Equal(got, c.want) {
			t.Errorf("%s: gaps %v kept %v, want %v", c.name, c.gaps, got, c.want)
		}
	}
	var l learner
	l.cycleStart = base
	l.addLull(base+10*sec, 8*sec)
	l.addLull(base+20*sec, 2*sec)
	l.addLull(base+15*sec, sec) // the clock went back 5 s
	if got := gaps(&l); !slices.Equal(got, []int64{8, 1}) || l.lulls[1].at != base+15*sec {
		t.Errorf("after a step back: %v at %v, want [8 1], the later at 15s", got, time.Duration(l.lulls[l.nLulls-1].at-base))
	}
	l.addLull(base, 4*sec) // back to the cycle's start
	if l.nLulls != 2 {
		t.Errorf("a lull at the cycle's start kept: %d lulls", l.nLulls)
	}
}

// The lulls travel in the binary form (tail 19): a state with a lull
// reads back with it, one without reads none, and a tail the encoder
// never writes is rejected.
func TestLullsBinary(t *testing.T) {
	cfg := Config{Lease: time.Minute}
	var s State
	for i := range 3 { // one request every 5 s
		var l Lease
		now := t0.Add(time.Duration(i) * 5 * time.Second)
		if _, ok := s.Acquire(now, &cfg, Ask{}, &l); !ok {
			t.Fatalf("setup: request %d held", i)
		}
		s.Release(now.Add(50*time.Millisecond), &cfg, &l, &Outcome{First: true, Bytes: -1})
	}
	if s.learn.nLulls != 1 || s.learn.lulls[0].gap != int64(5*time.Second) || s.learn.lulls[0].ok != 1 {
		t.Fatalf("setup: lulls %+v", s.learn.lulls[:s.learn.nLulls])
	}
	b, _ := s.MarshalBinary()
	var back State
	if err := back.UnmarshalBinary(b); err != nil || back.learn.nLulls != 1 || back.learn.lulls[0] != s.learn.lulls[0] {
		t.Errorf("read back as %+v (%v), want %+v", back.learn.lulls[:back.learn.nLulls], err, s.learn.lulls[:1])
	}
	// Measuring, the key's cycle is the probe's, after the lulls: they
	// are of the cycle measured.
	measuring := s
	measuring.learn.pending, measuring.learn.pendCycle, measuring.learn.pendFrom = true, s.learn.cycle, s.learn.cycleStart
	measuring.learn.cycle++
	measuring.learn.cycleStart = instant(t0.Add(20 * time.Second))
	mb, _ := measuring.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(mb); err != nil || back.learn.nLulls != 1 {
		t.Errorf("measuring, read back with %d lulls (%v), want 1", back.learn.nLulls, err)
	}
	// After a lift (see shed.go), the cycle is the probe's, and the lulls
	// are of the measurement the lift dropped, which a refusal may
	// restore.
	lifted := s
	lifted.epoch++
	lifted.shed = shed{lifted: true, epoch: s.epoch, ok: 3, pendCycle: s.learn.cycle, pendFrom: s.learn.cycleStart, pendQ: 3}
	lifted.learn.cycle++
	lifted.learn.cycleEpoch, lifted.learn.cycleStart = lifted.epoch, instant(t0.Add(20*time.Second))
	lfb, _ := lifted.MarshalBinary()
	back = State{}
	if err := back.UnmarshalBinary(lfb); err != nil || back.learn.nLulls != 1 {
		t.Errorf("lifted, read back with %d lulls (%v), want 1", back.learn.nLulls, err)
	}
	none := s
	none.learn.nLulls = 0
	plain, _ := none.MarshalBinary()
	if len(plain) >= len(b) || !bytes.Equal(plain, b[:len(plain)]) {
		t.Fatalf("setup: the form without lulls is not the one with them less its tail")
	}
	back = State{}
	if err := back.UnmarshalBinary(plain); err != nil || back.learn.nLulls != 0 {
		t.Errorf("a form without lulls read back with %d (%v)", back.learn.nLulls, err)
	}
	tail := func(ls ...lull) []byte {
		e := encoder{base: s.born, b: append(bytes.Clone(plain), tailLull)}
		e.uint(uint64(len(ls)))
		for _, u := range ls {
			e.at(u.at)
			e.uint(uint64(u.gap))
			e.uint(uint64(u.ok))
		}
		return e.b
	}
	at := func(d time.Duration) int64 { return instant(t0.Add(d)) }
	sec := int64(time.Second)
	if err := new(State).UnmarshalBinary(tail(lull{at(10 * time.Second), 8 * sec, 1}, lull{at(20 * time.Second), 4 * sec, 0})); err != nil {
		t.Errorf("two lulls, the later half as long: %v", err)
	}
	learned := s
	learned.learn.quota = &policy{unit: unitRequests, q: 1, w: sec}
	lb, _ := learned.MarshalBinary()
	for name, form := range map[string][]byte{
		"no lull":              tail(),
		"five":                 tail(lull{at(6 * time.Second), 32 * sec, 0}, lull{at(7 * time.Second), 16 * sec, 0}, lull{at(8 * time.Second), 8 * sec, 0}, lull{at(9 * time.Second), 4 * sec, 0}, lull{at(10 * time.Second), 2 * sec, 0}),
		"at no instant":        tail(lull{0, 8 * sec, 0}),
		"shorter than a floor": tail(lull{at(10 * time.Second), sec - 1, 0}),
		"out of order":         tail(lull{at(20 * time.Second), 8 * sec, 0}, lull{at(10 * time.Second), 4 * sec, 0}),
		"not half as long":     tail(lull{at(10 * time.Second), 8 * sec, 0}, lull{at(20 * time.Second), 4*sec + 1, 0}),
		"beyond MaxPause":      tail(lull{at(10 * time.Second), int64(MaxPause) + 1, 0}),
		"with a learned quota": append(lb, b[len(plain):]...),
	} {
		if err := new(State).UnmarshalBinary(form); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A lift (see shed.go) keeps the lulls of the measurement it dropped, of a
// cycle before the key's, which a refusal may restore; they stay once the
// lift is past undoing (shedRun acceptances, or a quota stated or
// learned), until the key's next cycle. Read as of the key's cycle, such
// a form did not read back, and a Store that cannot read a key's state
// starts it over.
func TestLullsAfterLiftPastUndoing(t *testing.T) {
	for _, fast := range []bool{true, false} {
		var cfg Config
		var s State
		now := instant(t0)
		accepted := Outcome{First: true, Bytes: -1}
		refused := Outcome{First: true, Bytes: -1, Refused: true, Refusal: Refusal{Backoff: time.Second, Retryable: true, MaxWait: time.Minute}}
		one := func(out Outcome) {
			var l Lease
			if _, ok := s.acquireAt(now, &cfg, &Ask{}, &l, fast); !ok {
				t.Fatalf("fast %v, at %v: held", fast, time.Duration(now-instant(t0)))
			}
			now += int64(5 * time.Millisecond)
			s.releaseAt(at(now), now, &cfg, &l, &out, fast)
		}
		for i := range 40 {
			if i == 20 {
				now += int64(5 * time.Second) // a lull
			}
			one(accepted)
		}
		// A bare refusal with another request in flight: a mark. That
		// one accepted, then the probe: a lift.
		var x, y Lease
		s.acquireAt(now, &cfg, &Ask{}, &x, fast)
		s.acquireAt(now, &cfg, &Ask{}, &y, fast)
		now += int64(time.Millisecond)
		s.releaseAt(at(now), now, &cfg, &x, &refused, fast)
		s.releaseAt(at(now), now, &cfg, &y, &accepted, fast)
		now = max(now, s.pauseUntil)
		one(accepted)
		if !s.shed.lifted || s.learn.pending || s.learn.nLulls == 0 {
			t.Fatalf("fast %v, setup: lifted %v, pending %v, %d lulls", fast, s.shed.lifted, s.learn.pending, s.learn.nLulls)
		}
		for i := range 2 * shedRun {
			b, _ := s.MarshalBinary()
			if err := new(State).UnmarshalBinary(b); err != nil {
				t.Fatalf("fast %v, %d acceptances after the lift (lifted %v, %d lulls): the form written does not read back: %v",
					fast, i, s.shed.lifted, s.learn.nLulls, err)
			}
			one(accepted)
		}
		if s.shed.lifted {
			t.Errorf("fast %v, setup: %d acceptances after the lift, still lifted", fast, 2*shedRun)
		}
	}
}

// A Store's state is used by processes whose clocks may differ by
// skewMax: the Acquires of two 3 s apart, neither of which paused, read
// as lulls of 3 s each time the one ahead followed the other. A Store's
// lull is one longer than twice skewMax.
func TestLullsSharedClocks(t *testing.T) {
	var cfg Config
	base := instant(t0)
	ask := func(s *State, now int64) {
		var l Lease
		if _, ok := s.acquireAt(now, &cfg, &Ask{Shared: true}, &l, true); !ok {
			t.Fatalf("held at %v", time.Duration(now-base))
		}
		s.releaseAt(at(now+int64(20*time.Millisecond)), now+int64(20*time.Millisecond), &cfg, &l, &Outcome{First: true, Bytes: -1}, true)
	}
	var s State
	for i := range 40 { // a request every 100 ms, every other one from a process 3 s ahead
		now := base + int64(i)*int64(100*time.Millisecond)
		if i%2 == 0 {
			now += int64(3 * time.Second)
		}
		ask(&s, now)
	}
	if s.learn.nLulls > 0 {
		t.Errorf("two processes 3 s apart that never paused: %d lulls, %+v", s.learn.nLulls, s.learn.lulls[:s.learn.nLulls])
	}
	// One request every 25 s: a Store's lulls.
	s = State{}
	for i := range 4 {
		ask(&s, base+int64(i)*int64(25*time.Second))
	}
	if s.learn.nLulls != 1 || s.learn.lulls[0].gap != int64(25*time.Second-2*skewMax) {
		t.Errorf("one request every 25 s through a Store: lulls %+v, want one of %v", s.learn.lulls[:s.learn.nLulls], 25*time.Second-2*skewMax)
	}
}
