package control

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

// A small simulator of workers over one State: each has a task at all
// times, a fixed round trip, and a scripted server; a held worker asks
// again at its hold's instant, or when the state's generation moves on,
// as Store.Wait wakes it. The table tests answer at the instant of the
// request; these show what only answers that arrive later can.

// simAnswer is what a simulated server answers a request that reaches it
// at an instant.
type simAnswer struct {
	ok     bool
	wait   time.Duration // Retry-After, when given
	given  bool
	quotas []parse.Quota
}

type simWorker struct {
	ready    time.Duration
	waiting  bool // for a change (no instant)
	busy     bool
	after    time.Duration // Ask.After, since ht0; 0: none
	why      Reason
	attempt  int
	since    time.Duration
	claimed  bool // its last hold counted it in its place's claim (Ask.Claimed)
	gen      uint64
	held     bool
	refAt    time.Duration // the refusal this retry follows; 0: none
	refShort bool
}

type simRelease struct {
	at    time.Duration
	w     int
	l     Lease
	start time.Duration
}

type simRefusal struct {
	at, retryAt time.Duration
	plan        Plan
}

type sim struct {
	t        *testing.T
	s        State
	cfg      Config
	lat      time.Duration
	server   func(at time.Duration) simAnswer
	rng      *rand.Rand
	refused  []simRefusal
	accepted []time.Duration
	maxAtt   int
	onRefuse func(now time.Duration, p Plan)
	every    func(now time.Duration)
	check    bool // look for breaches of the safety rules, into bad
	bad      []string
	probeOut bool
	probeSeq uint64
	probeAt  time.Duration
	pauseEnd time.Duration // the latest pause seen, not yet followed by a grant
}

func (m *sim) fail(f string, args ...any) {
	if len(m.bad) < 20 {
		m.bad = append(m.bad, fmt.Sprintf(f, args...))
	}
}

// run drives workers until end; each worker always has a task.
func (m *sim) run(workers int, end time.Duration) {
	ws := make([]simWorker, workers)
	for i := range ws {
		ws[i].attempt = 1
	}
	var rels []simRelease
	if m.maxAtt == 0 {
		m.maxAtt = 100
	}
	for {
		// Next event: the earliest release, or the earliest ready worker.
		sort.Slice(rels, func(i, j int) bool { return rels[i].at < rels[j].at })
		next := time.Duration(1 << 62)
		wi := -1
		for i := range ws {
			if !ws[i].busy && !ws[i].waiting && ws[i].ready < next {
				next, wi = ws[i].ready, i
			}
		}
		if len(rels) > 0 && rels[0].at <= next {
			r := rels[0]
			if m.every != nil {
				m.every(r.at)
			}
			rels = rels[1:]
			if r.at > end {
				return
			}
			m.release(r, &ws[r.w])
			m.wake(ws, r.at)
			continue
		}
		if wi < 0 || next > end {
			return
		}
		w := &ws[wi]
		ask := Ask{Turns: true}
		if w.after > 0 {
			ask.After, ask.AfterReason = ht0.Add(w.after), w.why
		}
		if w.since != 0 {
			ask.Since, ask.Claimed = ht0.Add(w.since), w.claimed
		}
		var l Lease
		h, ok := m.s.Acquire(ht0.Add(next), &m.cfg, ask, &l)
		w.claimed = h.Claimed()
		if !ok {
			if w.since == 0 {
				w.since = next
			}
			w.held, w.gen = true, h.Gen
			switch {
			case !h.Until().IsZero():
				w.ready = max(h.Until().Sub(ht0), next)
				if !h.Wake().IsZero() {
					w.ready = min(w.ready, h.Wake().Sub(ht0))
				}
				if w.ready <= next {
					w.ready = next + time.Millisecond // guard
				}
			case !h.Wake().IsZero():
				w.ready = max(h.Wake().Sub(ht0), next+time.Millisecond)
				// also wake on change
				w.waiting = false
			default:
				w.waiting = true
			}
			continue
		}
		if m.check {
			if w.refAt != 0 && next-w.refAt < RefusalFloor && !w.refShort {
				m.fail("retry at %v of a refusal at %v: %v after it", next, w.refAt, next-w.refAt)
			}
			if m.pauseEnd != 0 {
				if !l.Probe() {
					m.fail("first grant at %v after the pause ending %v is not a probe", next, m.pauseEnd)
				}
				m.pauseEnd = 0
			}
			if m.probeOut && next-m.probeAt < 3*time.Second && next > m.probeAt {
				m.fail("grant at %v (probe %v) while the probe granted at %v awaits its answer", next, l.Probe(), m.probeAt)
			}
			if l.Probe() {
				m.probeOut, m.probeSeq, m.probeAt = true, l.seq, next
			}
		}
		w.refAt = 0
		w.since = 0
		w.held = false
		w.busy = true
		m.wake(ws, next)
		rels = append(rels, simRelease{at: next + m.lat, w: wi, l: l, start: next})
	}
}

// wake makes the held workers whose hold's generation has passed ask
// again at now, as Store.Wait returns on a change.
func (m *sim) wake(ws []simWorker, now time.Duration) {
	g := m.s.Generation()
	for i := range ws {
		if w := &ws[i]; w.held && !w.busy && w.gen < g {
			w.waiting = false
			w.held = false
			w.ready = now
		}
	}
}

func (m *sim) release(r simRelease, w *simWorker) {
	a := m.server(r.start + m.lat/2)
	out := Outcome{First: w.attempt == 1, Bytes: -1, Quotas: a.quotas, Rand: m.rng.Uint64()}
	if !a.ok {
		out.Refused = true
		out.Refusal = Refusal{Wait: a.wait, Given: a.given, Reason: ReasonRetryAfter,
			Backoff: time.Duration(1+m.rng.IntN(2)) * time.Second, Retryable: w.attempt < m.maxAtt, MaxWait: 10 * time.Minute}
		if !a.given {
			out.Refusal.Reason = 0
		}
	}
	p := m.s.Release(ht0.Add(r.at), &m.cfg, &r.l, &out)
	if m.check {
		if m.probeOut && r.l.seq == m.probeSeq {
			m.probeOut = false
		}
		if pu, _ := m.s.Paused(ht0.Add(r.at)); !pu.IsZero() && pu.Sub(ht0) != m.pauseEnd {
			m.pauseEnd = pu.Sub(ht0)
			m.probeOut = false
		}
	}
	w.busy = false
	w.ready = r.at
	if !out.Refused {
		m.accepted = append(m.accepted, r.start)
		w.attempt, w.after = 1, 0
		return
	}
	if m.onRefuse != nil {
		m.onRefuse(r.at, p)
	}
	if !p.Retry {
		w.attempt, w.after = 1, 0
		m.refused = append(m.refused, simRefusal{at: r.at, plan: p})
		return
	}
	w.attempt++
	w.after = 0
	w.refAt, w.refShort = r.at, a.given && a.wait > 0 && a.wait < RefusalFloor
	if p.Reason == ReasonRetryBudget || p.Pause < p.Wait {
		w.after, w.why = r.at+p.Wait, p.Reason
	}
	m.refused = append(m.refused, simRefusal{at: r.at, plan: p, retryAt: r.at + p.Wait})
}

// count returns the number of accepted starts in [from, to).
func (m *sim) count(from, to time.Duration) int {
	n := 0
	for _, a := range m.accepted {
		if a >= from && a < to {
			n++
		}
	}
	return n
}

func (m *sim) refusedIn(from, to time.Duration) int {
	n := 0
	for _, r := range m.refused {
		if r.at >= from && r.at < to {
			n++
		}
	}
	return n
}

// fixedWindow accepts q per window of w, aligned at 0, and states
// nothing; ra gives a refusal's Retry-After.
func fixedWindow(q int, w time.Duration, ra func() (time.Duration, bool)) func(time.Duration) simAnswer {
	return fixedWindowH(q, w, 0, 0, ra, 0)
}

func noRA() (time.Duration, bool) { return 0, false }

// A fixed window of 30 per 2 s, no headers, no Retry-After; 4 workers,
// 50 ms round trip. A burst step to 31 is judged to hold (its burst fell
// across two of the server's windows); from then on each learned burst of
// 31 that falls in one window has its 31st refused. Refused again after a
// cut of the rate, the rest of it accepted, the burst is cut by one (see
// learner.cutBurst). Before, every such refusal cut the rate again (w
// grew by a third each time, q stayed 31): after an hour the key sent 30
// requests in 10 minutes to a server that takes 9000.
func TestLearnedBurstCutNotItsRate(t *testing.T) {
	m := &sim{t: t, lat: 50 * time.Millisecond, rng: rand.New(rand.NewPCG(1, 2))}
	m.server = fixedWindow(30, 2*time.Second, noRA)
	end := 60 * time.Minute
	m.run(4, end)
	for at := time.Duration(0); at < end; at += 10 * time.Minute {
		t.Logf("%v: accepted %d refused %d", at, m.count(at, at+10*time.Minute), m.refusedIn(at, at+10*time.Minute))
	}
	v := m.s.View(ht0.Add(end)).Learned
	t.Logf("learned at the end: %d per %v (the server: 30 per 2s)", v.Quota, v.Window)
	last := m.count(end-10*time.Minute, end)
	if v.Window > 10*time.Second || last < 900 {
		t.Fatalf("learned %d per %v; %d accepted in the last 10 minutes (the server takes 9000); refusals went on (%d in the last 30 min) while the rate was cut without bound",
			v.Quota, v.Window, last, m.refusedIn(end-30*time.Minute, end))
	}
}

// DESIGN.md §5: Retry-After: 0 waits the floor, doubled for each such
// refusal in a row; the refusals of requests in flight together count
// once. A flight was told apart by the key's epoch, which only a pause
// moves: the refusals of an overdraw the learner undid without a pause all
// counted, up to 9 at one instant (fixed window 10 per 2 s, Retry-After:
// 0, 32 workers, 250 ms round trip). Against a server whose headers
// overstate its quota, 22 refusals of one flight sent the next refusal's
// wait, and the key's pause, to a minute. Those granted before the
// undoing (learner.revertSeq) are now of the same flight.
func TestFlightOfOverdrawsCountsOnce(t *testing.T) {
	m := &sim{t: t, lat: 250 * time.Millisecond, rng: rand.New(rand.NewPCG(1, 2))}
	m.server = fixedWindow(10, 2*time.Second, func() (time.Duration, bool) { return 0, true })
	var lastAt time.Duration
	var base, worst int32
	var worstAt time.Duration
	m.onRefuse = func(now time.Duration, p Plan) {
		if now != lastAt {
			lastAt, base = now, m.s.retry.streak-1
		}
		if d := m.s.retry.streak - base; d > worst {
			worst, worstAt = d, now
		}
	}
	m.run(32, 5*time.Minute)
	if worst > 1 {
		t.Errorf("refusals arriving together at %v (one flight) counted %d short waits in a row, not one", worstAt, worst)
	}

	// The consequence, against a server whose headers overstate its quota
	// (q=110, r counting down from 109, while it keeps 10 per 2 s).
	m = &sim{t: t, lat: 50 * time.Millisecond, rng: rand.New(rand.NewPCG(1, 2))}
	m.server = fixedWindowH(10, 2*time.Second, time.Minute, 3*time.Minute, func() (time.Duration, bool) { return 0, true }, 100)
	var longest Plan
	var longestAt time.Duration
	m.onRefuse = func(now time.Duration, p Plan) {
		if p.Wait > longest.Wait {
			longest, longestAt = p, now
		}
	}
	m.run(32, 3*time.Minute)
	if longest.Wait > 8*time.Second {
		t.Errorf("a Retry-After: 0 refusal at %v waits %v (pause %v): the floor doubled once per refusal of one flight", longestAt, longest.Wait, longest.Pause)
	}
}

// fixedWindowH is a fixed window of q per w that states itself (ietf
// RateLimit, q+lie and r overstated by lie) between from and to.
func fixedWindowH(q int, w time.Duration, from, to time.Duration, ra func() (time.Duration, bool), lie int) func(time.Duration) simAnswer {
	cur, n := time.Duration(-1), 0
	return func(at time.Duration) simAnswer {
		win := at / w
		if win != cur {
			cur, n = win, 0
		}
		n++
		var qs []parse.Quota
		if at >= from && at < to {
			rem := int64(max(q-n, 0)) + int64(lie)
			reset := (win+1)*w - at
			qs = []parse.Quota{{Policy: "default", Unit: "requests", Limit: int64(q + lie), Window: w, Remaining: rem, Reset: reset.Round(time.Second), Dialect: "ietf"}}
		}
		if n <= q {
			return simAnswer{ok: true, quotas: qs}
		}
		d, g := ra()
		return simAnswer{wait: d, given: g, quotas: qs}
	}
}

// TestSimSafety runs the simulator against servers that state nothing,
// with and without Retry-After: 0, and checks the safety rules at every
// grant: a refused request is not resent within the refusal floor (but a
// short wait honoured once), the first grant after a pause is a lone
// probe, and nothing else goes while the probe awaits its answer (3s at
// most).
func TestSimSafety(t *testing.T) {
	zero := func() (time.Duration, bool) { return 0, true }
	one := func() (time.Duration, bool) { return time.Second, true }
	for _, srv := range []struct {
		name string
		new  func() func(time.Duration) simAnswer
	}{
		{"10 per 2s, no wait", func() func(time.Duration) simAnswer { return fixedWindow(10, 2*time.Second, noRA) }},
		{"10 per 2s, Retry-After: 0", func() func(time.Duration) simAnswer { return fixedWindow(10, 2*time.Second, zero) }},
		{"20 per 4s, Retry-After: 1", func() func(time.Duration) simAnswer { return fixedWindow(20, 4*time.Second, one) }},
	} {
		for _, lat := range []time.Duration{50 * time.Millisecond, 250 * time.Millisecond} {
			for _, workers := range []int{4, 32} {
				t.Run(fmt.Sprintf("%s/%v/%d", srv.name, lat, workers), func(t *testing.T) {
					m := &sim{t: t, lat: lat, rng: rand.New(rand.NewPCG(1, 2)), server: srv.new(), check: true}
					m.run(workers, 3*time.Minute)
					if len(m.bad) > 0 {
						t.Errorf("%d breaches, the first: %q", len(m.bad), m.bad)
					}
				})
			}
		}
	}
}

// A server of 5 per second that stops limiting at 2 minutes; 16 workers,
// 50 ms round trip. The learned quota grows while it holds requests back
// without a refusal, a step on trial holding once a whole cycle begun
// after it was accepted. With a learned window (243.75 ms) shorter than
// a cycle's paced starts and a round trip, the last answer of each cycle
// came after the next began and was not counted (only answers of the
// current cycle were): the step never held, and the key ran at about 37
// requests a second for the rest of the hour, with no refusal (22,155 in
// the last 10 of 20 minutes). The answers of the cycle before count too.
func TestLearnedStepHoldsWhenAnswersLate(t *testing.T) {
	var lim func(time.Duration) simAnswer = fixedWindow(5, time.Second, noRA)
	m := &sim{t: t, lat: 50 * time.Millisecond, rng: rand.New(rand.NewPCG(1, 2))}
	m.server = func(at time.Duration) simAnswer {
		if at < 2*time.Minute {
			return lim(at)
		}
		return simAnswer{ok: true}
	}
	end := 20 * time.Minute
	m.run(16, end)
	v := *m.s.View(ht0.Add(end)).Learned
	// 16 workers, one request each per round trip: 192,000 in 10 minutes.
	if last := m.count(end-10*time.Minute, end); last < 150000 {
		t.Errorf("%d accepted in the last 10 minutes, want at least 150,000 of the 192,000 the workers can send: the learned quota, %d per %v, held the key back", last, v.Quota, v.Window)
	}
}
