package control

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/politehttp/polite/parse"
)

// Cost is what a request will cost against the quotas of its key, per
// unit: package polite's Cost, field for field.
type Cost struct {
	Tokens, InputTokens, OutputTokens int64
	Unit                              string
	Amount                            int64
}

// In reports what c costs against a quota counting unit: 1 for "requests"
// and "concurrent-requests", the field of c for a token unit, 0 for
// "content-bytes", Amount for Unit, and 0 for any other unit. Negative
// amounts count as zero.
func (c *Cost) In(unit string) int64 {
	switch unit {
	case "requests", "concurrent-requests":
		return 1
	case "tokens":
		if c.Tokens > 0 {
			return c.Tokens
		}
		// Zero, or negative, which counts as zero: the input and output.
		in, out := max(c.InputTokens, 0), max(c.OutputTokens, 0)
		if in > math.MaxInt64-out {
			return math.MaxInt64
		}
		return in + out
	case "input-tokens":
		return max(c.InputTokens, 0)
	case "output-tokens":
		return max(c.OutputTokens, 0)
	case "content-bytes":
		return 0 // paced by the responses' content (see Outcome.Bytes), never charged
	}
	if unit == c.Unit && unit != "" {
		return max(c.Amount, 0)
	}
	return 0
}

// free reports whether c costs nothing in every unit a cost quota counts
// (In returns 0 for every unit but those of requests).
func (c *Cost) free() bool {
	return c.Tokens <= 0 && c.InputTokens <= 0 && c.OutputTokens <= 0 && c.Amount <= 0
}

// SetCost declares what the request will cost against the key's quotas in
// units other than requests, before Acquire. (It travels in the Lease
// rather than in Ask, which stays small on every request's path.)
func (l *Lease) SetCost(c Cost) { l.want = c }

// Cost returns what SetCost declared.
func (l *Lease) Cost() Cost { return l.want }

// Priced reports whether SetCost declared a cost in some unit other than
// requests.
func (l *Lease) Priced() bool { return !l.want.free() }

// Excess reports a request that can never start: its cost in Unit is more
// than the whole quota, Limit.
type Excess struct {
	Unit        string
	Cost, Limit int64
}

// costs keeps one invariant: a request starts only when every quota of a
// unit its cost names (tokens, input-tokens, output-tokens, or any other
// unit that is not requests, content-bytes or concurrent-requests) has room
// for it, after the reservations of the requests in flight granted after
// the request whose answer is the quota's latest observation. The server
// charges a request when it arrives, so an answer's remaining counts the
// requests sent before its own (they reached the server first); those
// sent after it may or may not be counted yet, and their reservations are
// subtracted from it, as requests in flight are from r.
//
// A quota is replenished either whole at the end of its effective window
// (RateLimit's r within t), or continuously, its reset the time until it is
// whole again (OpenAI and Anthropic, told by the dialect). A quota of the
// second kind refills at (limit - remaining) / reset, and a request that
// does not fit waits only for the tokens it lacks, not for the reset.
//
// Reservations are kept per unit in the order of the grants, the oldest
// merged when there are too many, so that they are bounded however many
// requests are in flight; they end with their lease when a request never
// ends. An observation of a unit's quota drops those of the requests
// granted before the one it answers: they are counted in it.
//
// A request granted before any answer stated a unit its cost names
// reserves in it all the same, in early: the answer that first states the
// unit may have been written before the request arrived, and the unit
// takes those reservations as its own (see unitOf).
type costs struct {
	units  []costUnit  // at most maxCostUnits; kept for the state's life
	quotas []costQuota // at most maxCostQuotas
	early  []costUnit  // units no answer has stated yet, with reservations only, added while units is empty; at most maxCostUnits others and the token units
}

const (
	maxCostUnits  = 4 // units tracked per key: tokens, input-tokens, output-tokens and one more
	maxCostQuotas = 8
)

// tokenUnit reports whether unit is one of the three a Cost names by its
// own fields.
func tokenUnit(unit string) bool {
	return unit == "tokens" || unit == "input-tokens" || unit == "output-tokens"
}

// costUnit is a unit some quota of the key counts, with the reservations
// of the requests in flight in it.
type costUnit struct {
	name  string
	mark  uint64        // the grant whose answer is the unit's latest observation
	res   []reservation // what the requests granted after it reserve, by grant
	n     int64         // their sum
	scale int64         // thousandths the server counts beyond a cost declared: see need
	since int64         // what the requests granted since the latest observation reserved
	fixed int64         // the part of since that scale does not apply to: see split
	fits  int64         // the largest cost declared that the server accepted: see excess
	from  uint64        // the latest grant when since last started over: one after it is counted in since

	declared bool // a request of this process declared a cost in it: see unitOf
}

// held returns the thousandths beyond a cost declared that the key's
// quotas hold: the scale and a quarter more. The scale is what the server
// was seen to count on average; a request counted more than the average
// is refused when admitted at the edge of the level, and the quarter more
// is its margin. It costs no throughput while the quota binds: the
// tokens a request waited for and did not use stay in the quota for the
// next.
func (u *costUnit) held() int64 { return u.scale + u.scale/4 }

// maxScale bounds costUnit.scale: the server counts at most four times
// what a request declares before the key's quotas hold it so.
const maxScale = 3000

// need returns what want costs in u as the key's quotas hold it: its cost
// declared, and the share the server was seen to count beyond declared
// costs of what the scale applies to (see split and costs.learn). It is
// at most maxQuota.
func (u *costUnit) need(want *Cost) int64 {
	n, _ := u.split(want)
	return n
}

// split returns need and the part of it the scale does not apply to:
// the tokens of a cost beyond its input tokens, when it declares them. An output bound is what the server counts (max_tokens);
// the prompt is estimated, and the estimate is what a server's tokenizer
// counts otherwise.
func (u *costUnit) split(want *Cost) (n, fixed int64) {
	n = min(want.In(u.name), maxQuota)
	if n <= 0 {
		return 0, 0
	}
	s := n
	if u.name == "tokens" && want.InputTokens > 0 {
		s = min(want.InputTokens, n)
	}
	fixed = n - s
	if e := u.held(); e > 0 {
		n = min(n+s/1000*e+(s%1000*e+999)/1000, maxQuota) // rounded up
	}
	return n, fixed
}

// after returns what the requests granted after seq and still in flight
// reserve: the whole of a reservation granted after it, and of one merged
// across it, the share of its grants after seq.
func (u *costUnit) after(seq uint64) int64 {
	var n int64
	for _, r := range u.res {
		switch {
		case r.lo > seq:
			n += r.n
		case r.hi > seq:
			n += int64(float64(r.n) * float64(r.hi-seq) / float64(r.hi-r.lo+1))
		}
	}
	return min(n, maxQuota)
}

// reservation is what the requests granted lo to hi (by Lease.seq)
// reserve, until end at the latest.
type reservation struct {
	lo, hi uint64
	end, n int64
}

// maxReservations bounds the reservations of a unit: beyond, the two
// oldest merge.
const maxReservations = 64

// costQuota is one quota in a cost unit.
type costQuota struct {
	name, pk string
	unit     uint8 // index in costs.units
	refill   bool  // replenished continuously; its reset is the time until it is whole
	seen     int64

	q    int64   // the limit; -1 when unknown
	w    int64   // the window, when stated; 0 when unknown
	cut  bool    // w is MaxPause, and the window stated may have been longer: see redundant
	dead bool    // of a unit replaced in this observe, dropped at its end: see unitOf
	rate float64 // refill, per nanosecond, when refill; 0 when unknown

	// The live observation: r remaining at the instant at; for a quota
	// restored whole, until deadline (0: no reset given); mark is the
	// grant whose answer it is.
	live     bool
	r        int64
	at       int64
	deadline int64
	mark     uint64
	// renewed reports that the window in force was renewed on trust (see
	// renew), not stated by an answer; due, that a window an answer
	// stated has ended since, and the key is to probe the quota (see
	// staled).
	renewed, due bool
	// floored reports that a refusal showed the refill rate estimated
	// too high: the server rounds its resets down, or to the nearest,
	// and each estimate since reads the reset its grain longer (see
	// apply).
	floored bool
	// probe is the grant that probes it, its deadline moved (see
	// reserve), until that request ends; 0: none. It is not in the
	// binary form: a state read from a Store waits for a probe that
	// ends without telling until its deadline, probeFor at most.
	probe uint64
}

func (c *costs) isZero() bool { return len(c.units) == 0 && len(c.quotas) == 0 }

// isCostUnit reports whether a quota in unit counts what requests cost:
// every unit but those of requests, which the policies pace.
func isCostUnit(unit string) bool {
	switch unit {
	case "", "request", "requests", "content-bytes", "concurrent-requests":
		return false
	}
	return true
}

// wholeAt returns a copy of a quota of requests whose reset is the time
// until it is whole again, with its reset unknown: r requests are left
// until a fresh answer says otherwise, and since r only grows while no
// request starts, the observation is not stale when the reset passes.
// (A spent quota keeps its reset: the key pauses until it is whole.)
func wholeAt(q *parse.Quota) *parse.Quota {
	c := *q
	c.Reset = -1
	return &c
}

// refills reports whether a dialect's reset is the time until the quota
// is whole again, replenished continuously.
func refills(dialect string) bool { return dialect == "openai" || dialect == "anthropic" }

// rounding returns how far q's remaining may be from the count the server
// holds: Anthropic rounds its counts of tokens to the nearest thousand
// (https://docs.anthropic.com/en/api/rate-limits#response-headers), and
// a multiple of 1000 of them stands for any count up to 500 either side
// (0, for up to 499). Any other count was not so rounded.
func rounding(q *parse.Quota) int64 {
	if q.Dialect == "anthropic" && q.Unit != "requests" && q.Remaining >= 0 && q.Remaining%1000 == 0 {
		return 500
	}
	return 0
}

// unitOf returns the index of unit, adding it if there is room; -1 if
// there is none. A unit added takes what early holds of it: the
// reservations of the requests granted before, still in flight.
//
// With maxCostUnits kept, a unit needed (see need) takes the place of a
// spare one (see spare), whose quotas are marked dead and dropped at the
// end of observe. (A server that stated quotas of points, credits, images
// and seconds before its tokens quota, all four kept, left the tokens
// quota unread, and a request it could not pay for was sent.) A unit not
// needed is not tracked then, nor one needed when no unit is spare. A unit
// added needed is kept as declared, never spare, even once its quotas
// refill: two units spent in turn evicted each other on every answer.
func (c *costs) unitOf(name string, need bool) int {
	if len(name) > maxKeyLen {
		name = name[:maxKeyLen]
	}
	for i := range c.units {
		if c.units[i].name == name {
			return i
		}
	}
	if len(c.units) >= maxCostUnits {
		if !need {
			return -1
		}
		i := slices.IndexFunc(c.units, c.spare)
		if i < 0 {
			return -1
		}
		c.units[i] = costUnit{name: strings.Clone(name), declared: true} // needed: never spare
		for j := range c.quotas {
			if c.quotas[j].unit == uint8(i) {
				c.quotas[j] = costQuota{unit: uint8(i), q: -1, dead: true} // dropped at the end of observe
			}
		}
		return i
	}
	u := costUnit{name: strings.Clone(name), declared: need} // a copy: see State.addPolicy
	for i := range c.early {
		if c.early[i].name == name {
			u.res, u.n, u.declared = c.early[i].res, c.early[i].n, true
			c.early = slices.Delete(c.early, i, i+1)
			break
		}
	}
	c.units = append(c.units, u)
	if len(c.units) == maxCostUnits {
		c.early = nil // units that can no longer be tracked
	}
	return len(c.units) - 1
}

// known returns the cost quota with that identity, as quota does, when it
// is the first and its name, pk and unit are no longer than a quota keeps
// (nil otherwise): most keys have one, and its lookup is inline.
func (c *costs) known(name string, pk []byte, unit string) *costQuota {
	if len(c.quotas) > 0 {
		if q := &c.quotas[0]; len(pk) == 0 && len(q.pk) == 0 && q.name == name && !q.dead && c.units[q.unit].name == unit {
			return q
		}
	}
	return nil
}

// quota returns the quota with that identity, adding it if there is room;
// nil if there is none. pq is what the answer states of it, among answer;
// need, whether its unit is needed (see unitOf). With maxCostQuotas kept,
// the one heard of least recently goes if it binds nothing now (not live
// within the minute) and the answer does not state it (read in the
// answer's order, after a pause all alike, a loose quota stated first
// replaced the tight one stated after it, which then found no room);
// else one of the same unit and partition that the new one makes
// redundant (see redundant), as a policy of requests does (DESIGN.md §3):
// a tight quota of tokens stated ninth, after eight loose ones, was
// ignored, and requests it could not pay for were sent.
func (c *costs) quota(pq *parse.Quota, answer []parse.Quota, now int64, l *Lease) *costQuota {
	name, pk, unit := pq.Policy, pq.Partition, pq.Unit
	declared := l.want.In(unit) > 0
	name = policyName(name)
	pk = partition(pk)
	if len(unit) > maxKeyLen {
		unit = unit[:maxKeyLen]
	}
	for i := range c.quotas {
		if q := &c.quotas[i]; q.name == name && q.pk == string(pk) && !q.dead && c.units[q.unit].name == unit {
			return q
		}
	}
	if len(c.quotas) >= maxCostQuotas {
		old := -1
		for i := range c.quotas {
			if o := &c.quotas[i]; (!o.live || o.seen < now-int64(time.Minute)) && (old < 0 || o.seen < c.quotas[old].seen) && !c.stated(o, answer) {
				old = i
			}
		}
		if i := slices.IndexFunc(c.units, func(u costUnit) bool { return u.name == unit }); i >= 0 && c.units[i].declared {
			declared = true
		}
		if old < 0 && declared {
			old = c.idle()
		}
		if old < 0 {
			if old = c.redundant(pk, unit, pq.Limit, int64(pq.Window)); old < 0 {
				return nil
			}
		}
		u := c.unitOf(unit, need(pq, l))
		if u < 0 {
			return nil
		}
		c.quotas[old] = costQuota{name: strings.Clone(name), pk: string(pk), unit: uint8(u), q: -1}
		return &c.quotas[old] // in place: the others keep their index
	}
	u := c.unitOf(unit, need(pq, l))
	if u < 0 {
		return nil
	}
	c.quotas = append(c.quotas, costQuota{name: strings.Clone(name), pk: string(pk), unit: uint8(u), q: -1})
	return &c.quotas[len(c.quotas)-1]
}

// full reports whether c keeps maxCostUnits units or maxCostQuotas quotas,
// where what flags returns is read.
func (c *costs) full() bool {
	return len(c.units) >= maxCostUnits || len(c.quotas) >= maxCostQuotas
}

// flags returns a bit for each unit declared, and one for each quota
// whose window is MaxPause and not cut, as the binary form keeps them (see
// setFlags). maxCostUnits and maxCostQuotas are at most 8.
func (c *costs) flags() (declared, exact byte) {
	for i := range c.units {
		if c.units[i].declared {
			declared |= 1 << i
		}
	}
	for i := range c.quotas {
		if q := &c.quotas[i]; q.w == int64(MaxPause) && !q.cut {
			exact |= 1 << i
		}
	}
	return declared, exact
}

// setFlags sets what flags returned, on a state decoded without them,
// whose quotas of a window of MaxPause are read as cut; it reports false
// if they name a unit or quota c does not have, or a quota whose window is
// not MaxPause (never written).
func (c *costs) setFlags(declared, exact byte) bool {
	if declared>>len(c.units) != 0 || exact>>len(c.quotas) != 0 {
		return false
	}
	for i := range c.units {
		c.units[i].declared = declared&(1<<i) != 0
	}
	for i := range c.quotas {
		if exact&(1<<i) != 0 {
			if q := &c.quotas[i]; q.w != int64(MaxPause) {
				return false
			}
			c.quotas[i].cut = false
		}
	}
	return true
}

// idle returns the index of the quota heard of least recently among those
// of a spare unit (see spare), which bind no request; -1 if none.
func (c *costs) idle() int {
	old := -1
	for i := range c.quotas {
		if o := &c.quotas[i]; !o.dead && c.spare(c.units[o.unit]) && (old < 0 || o.seen < c.quotas[old].seen) {
			old = i
		}
	}
	return old
}

// need reports whether the unit of pq, a quota an answer to l states, is
// worth a unit's place: l declared a cost in it, or pq is spent from (less
// than its limit left, or none left of a limit unknown), so that someone
// spends the unit and a request of it may come. (A tokens quota with none left, stated to a
// request of points after four other units, went unread, and the next
// request of tokens was sent into it.)
func need(pq *parse.Quota, l *Lease) bool {
	if l.want.In(pq.Unit) > 0 {
		return true
	}
	// A remaining without its limit (OpenAI's and Anthropic's fields
	// may come so) is spent from when none is left.
	return pq.Remaining >= 0 && (pq.Limit > 0 && pq.Remaining < pq.Limit || pq.Limit < 0 && pq.Remaining == 0)
}

// spare reports whether no request of this process declared a cost in u,
// nothing is reserved in it, and none of its quotas has been spent from
// (not live, or with all its limit left): its quotas bind no request, and
// no other client spends the unit either. (A quota of images with none
// left, stated before any request of images, gave way to a loose quota of
// tokens, and requests of images were sent into it.)
func (c *costs) spare(u costUnit) bool {
	if u.declared || u.n != 0 || len(u.res) != 0 {
		return false
	}
	for i := range c.quotas {
		if q := &c.quotas[i]; !q.dead && c.units[q.unit].name == u.name && q.live && (q.q < 0 || q.r < q.q) {
			return false
		}
	}
	return true
}

// stated reports whether answer states o.
func (c *costs) stated(o *costQuota, answer []parse.Quota) bool {
	if o.dead {
		return false
	}
	unit := c.units[o.unit].name
	for i := range answer {
		a := &answer[i]
		u := a.Unit
		if len(u) > maxKeyLen {
			u = u[:maxKeyLen]
		}
		if u == unit && policyName(a.Policy) == o.name && string(partition(a.Partition)) == o.pk {
			return true
		}
	}
	return false
}

// redundant returns the index of a quota of unit and partition pk that a
// new one of q per w makes redundant and that does not make the new one
// redundant in turn, as State.redundant finds a policy; -1 if none. A cost
// quota is restored whole at the end of its window, which need not fall
// with the old one's: within one window of the old quota, the new one
// allows what one more of its windows does, q·(⌈w'/w⌉+1) in all, and an
// old quota with less left than that binds (taken as q·⌈w'/w⌉, a minute's
// quota with 600 of 1000 left gave way to one of 600 a minute, which
// renewed within it: 1000 went against the 600). A quota refilled
// continuously, whose window is unknown, is never redundant, nor one whose
// window was cut to MaxPause, longer than it says (a week's quota read as
// a day's gave way to a day's of half its size).
func (c *costs) redundant(pk []byte, unit string, q, w int64) int {
	for i := range c.quotas {
		o := &c.quotas[i]
		if c.units[o.unit].name != unit || o.pk != string(pk) || o.w <= 0 || o.cut || w <= 0 ||
			!implies(q, w, o.q, o.w) || implies(o.q, o.w, q, w) {
			continue
		}
		if n := o.w/w + min(o.w%w, 1) + 1; o.q/n >= q && (!o.live || o.r/n >= q) {
			return i
		}
	}
	return -1
}

// level returns what q's observation says is left at now, before the
// reservations: for a quota refilled continuously, the remaining plus what
// has flowed in since, up to the limit; for one restored whole, the
// remaining until its deadline, then the limit (math.MaxInt64 when it is
// unknown). It reports false when nothing is known.
func (q *costQuota) level(now int64) (int64, bool) {
	if !q.live {
		return 0, false
	}
	if q.refill {
		v := float64(q.r)
		if q.rate > 0 && now > q.at {
			v += q.rate * float64(now-q.at)
		}
		if q.q >= 0 {
			v = min(v, float64(q.q))
		}
		return int64(min(v, float64(maxQuota))), true
	}
	if q.deadline == 0 || now < q.deadline {
		return q.r, true
	}
	if q.q >= 0 {
		return q.q, true
	}
	return math.MaxInt64, true
}

// probes reports whether a request granted at now probes q: a quota
// refilled continuously at a rate not known (its remaining stated without
// its limit, or at it), whose reset, when it is whole again, has passed,
// and which no request granted since has probed, or whose probe has been
// out for as long as the key's probes wait (see reserve, ramp.slowAfter).
// Any request of its unit granted then probes it, one that fits the
// remaining too. Its level stays at the remaining stated, less what is
// charged since: whole, it may be no more (every request held going at
// the reset, a bucket refused half of them).
func (q *costQuota) probes(now int64) bool {
	return q.live && q.refill && q.rate <= 0 && q.deadline != 0 && now >= q.deadline
}

// staled renews, at now, each quota restored whole whose effective window
// has passed (see renew), and reports whether one of those windows was
// stated by the server: the caller probes it. Such a quota is not taken
// for whole again on trust (draft-11 §4.1.2: the client MUST NOT assume
// so; a token bucket's or a sliding window's t is when some of it is
// back, not all of it): as a stale quota of requests is, it is probed, one
// request going until its answer tells what is left. An answer that does
// not state it charges the window renewed, as before.
func (c *costs) staled(now int64) bool {
	probe := false
	for i := range c.quotas {
		q := &c.quotas[i]
		if q.stale(now) {
			q.renew(now)
		}
		// Only a window the server stated is probed (renew marks it
		// due, whoever renews it: a charge too): one renewed on trust,
		// the quota's remaining stated no more since, has nothing to
		// refresh, and a probe at each of its ends would slow the key
		// for good.
		if q.due {
			probe, q.due = true, false
		}
	}
	return probe
}

// anyStale reports whether staled would change a quota at now.
func (c *costs) anyStale(now int64) bool {
	for i := range c.quotas {
		if q := &c.quotas[i]; q.due || q.stale(now) {
			return true
		}
	}
	return false
}

// stale reports whether q, a quota restored whole of a known limit, is
// past its effective window at now.
func (q *costQuota) stale(now int64) bool {
	return q.live && !q.refill && q.deadline != 0 && now >= q.deadline && q.q >= 0
}

// renew starts, at now, the window of q, a quota restored whole, that
// follows its observation's, whose reset (deadline) has passed: its
// remaining is the limit, and it ends a whole number of windows after the
// deadline. The window is the one stated, or else the span from the
// observation to its reset, which it is no shorter than: the window
// computed may end before the server's, never after.
func (q *costQuota) renew(now int64) {
	q.due = q.due || !q.renewed // the window that ended was stated: probe it
	q.renewed = true
	q.r = q.q
	w := q.w
	if w <= 0 {
		w = q.deadline - q.at
	}
	if w <= 0 {
		q.deadline = 0 // unknown
		return
	}
	start := q.deadline + (now-q.deadline)/w*w // at most now
	q.at, q.deadline = start, addSat(start, w)
}

// full returns when q is whole again, by its observation; zero when
// unknown.
func (q *costQuota) full() int64 {
	switch {
	case !q.live:
		return 0
	case !q.refill:
		return q.deadline
	case q.q >= 0 && q.r >= q.q:
		return q.at
	case q.q >= 0 && q.rate > 0:
		return addSat(q.at, int64(math.Ceil(float64(q.q-q.r)/q.rate)))
	}
	return q.deadline
}

// spentUntil returns when q, spent from by its observation, is whole
// again, at most MaxPause after that observation; zero when it is whole,
// or nothing is known.
func (q *costQuota) spentUntil() int64 {
	if !q.live || q.q >= 0 && q.r >= q.q {
		return 0
	}
	return min(q.full(), addSat(q.at, int64(MaxPause)))
}

// CostLimitFresh is how long after an answer states a cost quota, or for
// its window when longer, its limit fails a request that costs more (see
// costs.excess).
const CostLimitFresh = time.Minute

// MaxQuota is the largest limit, level or cost a key keeps, in its unit:
// one stated or declared larger is read as this.
const MaxQuota = maxQuota

// excess reports a cost beyond a whole quota of the key: a request that
// can never start. A limit last heard of at least costLimitFresh ago, or
// its window when longer, is not held against a request at now: the
// server may have raised it, and only a request that goes can tell (its
// answer states the limit again). At now 0, every limit counts, however
// old.
func (c *costs) excess(now int64, want *Cost) Excess {
	if want.free() {
		return Excess{} // as most requests: no unit of c is one of requests
	}
	for i := range c.quotas {
		q := &c.quotas[i]
		name := c.units[q.unit].name
		if now != 0 && now-q.seen >= max(q.w, costLimitFresh) {
			continue
		}
		// A cost beyond maxQuota is read as it, as a limit beyond it
		// is: a quota stated larger holds it.
		if n := want.In(name); q.q >= 0 && min(n, maxQuota) > max(q.q, c.units[q.unit].fits) {
			return Excess{Unit: name, Cost: n, Limit: q.q}
		}
	}
	return Excess{}
}

// admit reports whether a request costing want may start at now, with
// inflight requests in flight. When it may not, it returns when to look
// again at the earliest (until; zero when only a request in flight ending
// can make room) and whether a request in flight ending may make room
// sooner (waitInflight); with it, by is when to look again at the latest
// (0: none), the reset of a quota whole then (see probes).
//
// whole is the longest time a quota that holds the request takes to be
// whole again, from empty: its limit over its refill rate, or its window;
// 0 when none says.
func (c *costs) admit(now int64, want *Cost, grow uint8, inflight int64) (until int64, waitInflight bool, by int64, held bool, whole int64) {
	if want.free() {
		return 0, false, 0, false, 0
	}
	for i := range c.quotas {
		q := &c.quotas[i]
		u := &c.units[q.unit]
		if n := min(want.In(u.name), maxQuota); n <= 0 || q.q >= 0 && n > q.q && n > u.fits {
			// Nothing, or beyond a limit heard of too long ago to
			// fail the request (see excess): it goes, and its answer
			// tells the limit. (A cost the server accepted before
			// beyond the limit waits for the whole quota.)
			continue
		}
		need := u.need(want)
		if q.q >= 0 {
			need = min(need, q.q) // a scale never makes a request that fits one that never does
		}
		if grow > 0 {
			// More room, but never more than the quota can have beside
			// the requests in flight (its level stops at its limit):
			// capped at the limit alone, a retry asking for it waited
			// for every request in flight to end.
			room := need << min(grow, maxGrow) // need ≤ maxQuota: no overflow
			if q.q >= 0 {
				room = min(room, q.q-u.n)
			}
			need = max(need, room)
		}
		level, ok := q.level(now)
		if !ok || level == math.MaxInt64 {
			continue
		}
		avail := level - u.n
		if avail >= need {
			continue
		}
		switch {
		case q.refill && q.rate > 0 && q.q > 0:
			whole = max(whole, int64(min(math.Ceil(float64(q.q)/q.rate), float64(MaxPause))))
		case !q.refill && q.w > 0:
			whole = max(whole, q.w)
		}
		switch {
		case q.refill && q.rate > 0 && (q.q < 0 || need <= q.q-u.n):
			// Refilling makes room. (It stops at the limit: beyond
			// it, only a reservation freed does, as below.)
			d := math.Ceil(float64(need-avail) / q.rate)
			until = max(until, addSat(now, int64(min(d, float64(MaxPause)))))
			held = true
		case !q.refill && q.deadline > now:
			until, held = max(until, q.deadline), true
		case q.probes(now) && (q.q < 0 || need <= q.q-u.n):
			// Whole again by its reset, how whole unknown, and no
			// request has gone since to tell: this one goes, and
			// probes it (reserve moves the reset on), while those that
			// need more than the remaining stated wait for its answer.
			// (Held for any request in flight, one granted before the
			// reset for 5 minutes held them all, the quota whole by
			// the server's word.)
		case inflight > 0:
			// Only a request in flight ending can tell more: its
			// reservation is freed and its answer brings a fresh
			// observation; or the reset, when it comes first (by).
			waitInflight, held = true, true
			if q.refill && q.rate <= 0 && q.deadline > now && (by == 0 || q.deadline < by) {
				by = q.deadline
			}
		case q.refill && q.deadline > now:
			until, held = max(until, q.deadline), true
		}
		// Otherwise nothing in flight will refresh the observation and
		// its reset has passed: the request goes, and the server's
		// answer tells.
	}
	return until, waitInflight, by, held, whole
}

// costExcess holds a request that can never start; false when it can.
func (s *State) costExcess(now int64, want *Cost) (Hold, bool) {
	if ex := s.costs.excess(now, want); ex.Unit == "" {
		return Hold{}, false
	}
	h, _ := s.hold(0, ReasonQuota, 0)
	h.Never = true
	return h, true
}

// Excess reports the quota a request costing want exceeds whole at t, for
// a Hold that says it can never start; the zero Excess when there is none
// (a limit heard of too long ago fails no request: see excess). It does
// not change s.
func (s *State) Excess(t time.Time, want *Cost) Excess { return s.costs.excess(instant(t), want) }

// admitCost holds a request whose cost the key's quotas have no room for
// at now; false when they have. ask says when the request first asked.
//
// A request held for its cost claims no turn (see turn.go): requests that
// cost less go meanwhile, when the quota has room for them. Once it has
// been held as long as the quota takes to be whole again, it claims one
// that holds only the requests that cost something: those that first
// asked after it wait behind it until its cost has room, so that smaller
// ones overtaking it again and again cannot hold it until MaxWait (with
// 100 workers on 40,000 tokens a minute, 15 of 400 tasks failed so). A
// retry (Ask.First) claims so at once: overtaken, it was refused again at
// each attempt until MaxAttempts failed it. A
// request that costs nothing (a GET beside the completions) is not held
// by such a claim: it takes nothing the claimant waits for.
func (s *State) admitCost(now int64, want *Cost, ask *Ask) (Hold, bool) {
	until, inflight, by, held, whole := s.costs.admit(now, want, ask.Grow, s.leases.n)
	if !held {
		return Hold{}, false
	}
	wake := int64(0)
	if inflight {
		wake = s.leases.first()
		if by != 0 && (wake == 0 || by < wake) {
			wake = by
		}
	}
	h, _ := s.hold(until, ReasonQuota, wake)
	h.own = ask.First.IsZero() && (ask.Since.IsZero() || whole <= 0 || now-instant(ask.Since) < whole)
	h.cost = !h.own
	return h, true
}

// reserve records the costs of a request granted with a lease ending at
// end, l: in the units of the key's quotas, and, while the key knows none,
// in early for the units its cost names. When l probes a quota (see
// probes), the quota's reset is moved to probeFor after l's grant,
// MaxPause at most: the others wait for l's answer, or until then, when
// another probes (observe moves it back once l ends without telling). A
// key that knows a unit of cost keeps nothing aside: the units its server
// never states (OpenAI's input and output tokens beside its tokens) would
// hold a reservation of every request in flight, written in a Store's
// state, for nothing.
func (c *costs) reserve(want *Cost, end int64, l *Lease, probeFor int64) {
	if want.free() {
		return
	}
	for i := range c.units {
		u := &c.units[i]
		n, fixed := u.split(want)
		if n <= 0 {
			continue
		}
		u.since, u.fixed = min(u.since+n, maxQuota), min(u.fixed+fixed, maxQuota)
		u.add(reservation{lo: l.seq, hi: l.seq, end: end, n: n})
		u.declared = true
		for j := range c.quotas {
			if q := &c.quotas[j]; q.unit == uint8(i) && q.probes(l.start) {
				// l probes it: the others wait for its answer, or
				// for probeFor, when another may probe (see admit).
				q.at, q.deadline = max(q.at, l.start), addSat(l.start, min(probeFor, int64(MaxPause)))
				q.probe = l.seq
			}
		}
	}
	if len(c.units) == 0 {
		c.reserveEarly(want, end, l)
	}
}

// reserveEarly reserves want, granted with l until end, in early: in each
// unit it costs something in (see Cost.In), at most maxCostUnits of them
// besides the token units.
// The key knows no unit (see reserve).
func (c *costs) reserveEarly(want *Cost, end int64, l *Lease) {
	names := [...]string{"tokens", "input-tokens", "output-tokens", want.Unit}
	for k, name := range names {
		if k == len(names)-1 && (!isCostUnit(name) || len(name) > maxKeyLen || slices.Contains(names[:k], name)) {
			continue // a unit of requests, one whose cost In reads from a field, or a name no unit keeps (see unitOf)
		}
		n := min(want.In(name), maxQuota)
		if n <= 0 {
			continue
		}
		i := slices.IndexFunc(c.early, func(u costUnit) bool { return u.name == name })
		if i < 0 {
			if k == len(names)-1 && c.earlyOthers() >= maxCostUnits {
				// At most maxCostUnits others; the token units always
				// fit. (Four requests in flight costing in four other
				// units left a request of tokens reserving nothing, and
				// the answer that first stated tokens did not count it.)
				continue
			}
			if k == len(names)-1 {
				name = strings.Clone(name) // the caller's
			}
			i = len(c.early)
			c.early = append(c.early, costUnit{name: name})
		}
		c.early[i].add(reservation{lo: l.seq, hi: l.seq, end: end, n: n})
	}
}

// earlyOthers returns how many units of early are not token units.
func (c *costs) earlyOthers() int {
	n := 0
	for i := range c.early {
		if !tokenUnit(c.early[i].name) {
			n++
		}
	}
	return n
}

// add reserves r, granted after every reservation of u.
func (u *costUnit) add(r reservation) {
	u.n += r.n
	if len(u.res) >= maxReservations {
		// Merged, the two oldest are dropped only once both are
		// counted, and last as long as the longer.
		// Each is at most maxQuota, so the sum cannot overflow; what
		// the cap drops is dropped from u.n too, which is their sum.
		a, b := u.res[0], u.res[1]
		m := a.n + b.n
		if m > maxQuota {
			u.n -= m - maxQuota
			m = maxQuota
		}
		u.res[1] = reservation{lo: a.lo, hi: b.hi, end: max(a.end, b.end), n: m}
		u.res = append(u.res[:0], u.res[1:]...)
	}
	u.res = append(u.res, r)
}

// unreserve frees the reservations of the request l granted, unless an
// observation counted it or its lease ended: the whole reservation when it
// is l's alone, else, merged with others', what l's cost needs at the
// current scale. A unit is never dropped, but one of early left with no
// reservation is.
func (c *costs) unreserve(l *Lease) {
	if l.want.free() {
		return
	}
	for i := range c.units {
		c.units[i].unreserve(l)
	}
	if len(c.early) > 0 {
		for i := range c.early {
			c.early[i].unreserve(l)
		}
		c.prune()
	}
}

// unreserve frees in u what l reserved: see costs.unreserve.
func (u *costUnit) unreserve(l *Lease) {
	n := u.need(&l.want)
	if n <= 0 || l.seq <= u.mark {
		return // nothing reserved, or dropped when an observation counted it
	}
	for j := range u.res {
		if r := &u.res[j]; r.lo <= l.seq && l.seq <= r.hi {
			if r.lo == r.hi {
				// l's alone: what it reserved, at the scale then.
				// Counted at the scale now, one reserved before
				// the scale fell left the rest until the next
				// answer.
				n = r.n
			}
			n = min(n, r.n)
			r.n -= n
			u.n -= n
			if r.n <= 0 {
				u.res = append(u.res[:j], u.res[j+1:]...)
			}
			return
		}
	}
}

// prune drops the units of early that hold no reservation.
func (c *costs) prune() {
	c.early = slices.DeleteFunc(c.early, func(u costUnit) bool { return len(u.res) == 0 })
}

// beyond reports whether c holds an instant a controller here would not
// have written by now (see State.bound): a quota stated or observed after
// now, or whose reset is more than MaxPause after its observation, or a
// reservation that ends after far.
func (c *costs) beyond(now, far int64) bool {
	pause := addSat(now, int64(MaxPause))
	for i := range c.quotas {
		if q := &c.quotas[i]; q.seen > now || q.at > now || q.deadline > min(addSat(q.at, int64(MaxPause)), pause) {
			return true
		}
	}
	for _, units := range [...][]costUnit{c.units, c.early} {
		for i := range units {
			for _, r := range units[i].res {
				if r.end > far {
					return true
				}
			}
		}
	}
	return false
}

// bound brings the instants beyond reports back within bounds: a quota's
// statement and observation to now at the latest, its reset to MaxPause
// after its observation (as apply and renew write it); a reservation that
// ends after far is dropped, as if its request had ended, unless flight
// (see State.boundAt).
func (c *costs) bound(now, far int64, flight bool) {
	for i := range c.quotas {
		q := &c.quotas[i]
		q.seen, q.at = min(q.seen, now), min(q.at, now)
		q.deadline = min(q.deadline, addSat(q.at, int64(MaxPause)))
	}
	if flight {
		return // the reservations of requests in flight stay (see State.boundAt)
	}
	for _, units := range [...][]costUnit{c.units, c.early} {
		for i := range units {
			u := &units[i]
			k := 0
			for _, r := range u.res {
				if r.end > far {
					u.n -= r.n
					continue
				}
				u.res[k] = r
				k++
			}
			u.res = u.res[:k]
		}
	}
	c.prune()
}

// reserved returns what the requests in flight at now reserve.
func (u *costUnit) reserved(now int64) int64 {
	n := u.n
	for _, r := range u.res {
		if r.end <= now {
			n -= r.n
		}
	}
	return n
}

// reap drops the reservations whose lease has ended by now.
func (c *costs) reap(now int64) {
	for i := range c.units {
		c.units[i].reap(now)
	}
	if len(c.early) > 0 {
		for i := range c.early {
			c.early[i].reap(now)
		}
		c.prune()
	}
}

// reap drops the reservations of u whose lease has ended by now.
func (u *costUnit) reap(now int64) {
	k := 0
	for _, r := range u.res {
		if r.end <= now {
			u.n -= r.n
			continue
		}
		u.res[k] = r
		k++
	}
	u.res = u.res[:k]
}

// count drops the reservations of the requests granted up to mark: an
// answer to mark counts them. A merged reservation whose first grants are
// counted, not its last, is kept whole, its first grant the first after
// mark: every reservation's grants stay after the mark, as the binary form
// writes them.
func (u *costUnit) count(mark uint64) {
	u.mark = max(u.mark, mark)
	k := 0
	for _, r := range u.res {
		if r.hi <= u.mark {
			u.n -= r.n
			continue
		}
		r.lo = max(r.lo, u.mark+1)
		u.res[k] = r
		k++
	}
	u.res = u.res[:k]
}

// charge takes n off q's level at now: a cost the level does not count.
func (q *costQuota) charge(n, now int64) {
	switch {
	case !q.refill && q.deadline != 0 && now >= q.deadline && q.q >= 0:
		q.renew(now)
	case q.refill && now > q.at:
		// Charged to what has refilled since the observation, not to
		// the observation: cut at 0, the charge would vanish in the
		// refill added on top.
		if lv, ok := q.level(now); ok {
			q.r, q.at = lv, now
		}
	}
	q.r = max(0, q.r-min(n, maxQuota))
}

// observe applies what the answer to the request l granted says of the
// key's cost quotas, at now. When the answer states one of a unit's
// quotas, the reservations of the requests granted up to l are dropped:
// they reached the server before l, and are counted in it. A quota the
// answer does not state is charged l's cost if l was granted after the
// unit's latest observation: the server may have counted it without
// saying so; not if rejected (a 429: the server did not serve l). It
// reports whether the answer stated a cost quota.
func (c *costs) observe(l *Lease, quotas []parse.Quota, now, ago int64, dated, refused, rejected, served bool, top uint64) bool {
	if c.isZero() && !costUnits(quotas) {
		return false // nothing to apply, nothing to charge
	}
	derived := anthropicSplit(quotas)
	var marked, learned [maxCostUnits]bool
	var seen [maxCostQuotas]bool
	stated := false
	for i := range c.units {
		// The answer's request costs something in it: see unitOf.
		if u := &c.units[i]; !u.declared && l.want.In(u.name) > 0 {
			u.declared = true
		}
	}
	for i := range quotas {
		pq := &quotas[i]
		if !isCostUnit(pq.Unit) || derived && isDerived(pq) {
			continue
		}
		q := c.known(pq.Policy, pq.Partition, pq.Unit)
		if q == nil {
			q = c.quota(pq, quotas, now, l)
		}
		if q == nil {
			continue
		}
		stated = true
		if pq.Remaining >= 0 {
			// A quota stated with its limit alone (a RateLimit-Policy
			// without its RateLimit) says nothing of what is left: it is
			// charged l's cost as one unstated is. Marked seen, l's
			// tokens were counted nowhere.
			seen[q.index(c)] = true
		}
		if u := &c.units[q.unit]; pq.Limit >= 0 && !c.outdated(q, l, pq) {
			// A cost above the limit the answer states, which the
			// server did: one so large fits (an estimate over what it
			// counts). A new limit below it forgets what fitted the
			// old one, stated by a refusal too (taken then, the limit
			// was not new to the acceptance after it); one above it,
			// or a day's quota beside a minute's (fits is the unit's),
			// leaves it; an outdated one (see outdated) says nothing.
			if limit := min(pq.Limit, maxQuota); limit != q.q && q.q >= 0 && limit < u.fits {
				u.fits = 0
			}
			if n := min(l.want.In(u.name), maxQuota); served && n > pq.Limit {
				u.fits = max(u.fits, n)
			}
		}
		if !refused && !learned[q.unit] {
			learned[q.unit] = c.learn(q, l, pq, now, top)
		}
		if c.apply(q, l, pq, now, ago, dated, refused, rejected) {
			marked[q.unit] = true
		}
	}
	for i := range c.quotas {
		// A probe that ended without telling (failed, or its answer
		// states no remaining of the quota) lets the next request probe
		// at once: held until its wait ended, a request of more than the
		// remaining waited with nothing in flight to wait for.
		if q := &c.quotas[i]; q.probe == l.seq && q.probe != 0 {
			if !seen[i] && q.deadline > now {
				q.deadline = now
			}
			q.probe = 0
		}
	}
	var charged [maxCostUnits]bool
	for i := range c.quotas {
		if l.want.free() || rejected {
			break
		}
		q := &c.quotas[i]
		u := &c.units[q.unit]
		if seen[i] || !q.live || l.seq <= u.mark {
			continue
		}
		if n := u.need(&l.want); n > 0 {
			charged[q.unit] = true
			q.charge(n, now)
			// The level is now that of a later request, l, though the
			// requests granted between the observation and l are not
			// counted in it: an answer to one of them is read against it
			// (see apply), not taken whole, which would drop l's charge.
			q.mark = max(q.mark, l.seq)
		}
	}
	for i := range c.units {
		u := &c.units[i]
		switch {
		case marked[i]:
			u.count(l.seq)
			u.since, u.fixed, u.from = 0, 0, top
		case (charged[i] || rejected && l.seq > u.mark && !l.want.free()) && l.seq > u.from:
			// What l reserved leaves what the next answer stating
			// the unit is compared with (see learn): charged, it
			// comes off the level already, and a 429 the server did
			// not count. Kept, the sample read the server's count as
			// short of what was reserved, and the scale never rose
			// while some answers stated nothing. Only a request
			// granted since since started over is in it: taken off
			// again, another's share went, and a server counting
			// what was declared read as counting twice as much.
			n, fixed := u.split(&l.want)
			u.since, u.fixed = max(u.since-n, 0), max(u.fixed-fixed, 0)
			u.fixed = min(u.fixed, u.since)
		}
	}
	if slices.ContainsFunc(c.quotas, func(q costQuota) bool { return q.dead }) {
		// Those of a unit replaced (see unitOf), kept dead till now
		// for the indices of seen.
		c.quotas = slices.DeleteFunc(c.quotas, func(q costQuota) bool { return q.dead })
	}
	return stated
}

// learn compares what the answer to l, accepted, states of q, pq, with
// what the key's state foresaw at now, and moves the scale of q's unit
// toward what it shows; it reports whether it did. The answer to l counts
// the requests granted since the latest observation: what q's observation
// has refilled to since, less what they reserved, is what the server
// should state if it counts what was reserved. When it states less, the
// server counts more than was declared (its tokenizer is not the
// estimate's, or another client spends the same quota); the reservations
// of the requests in flight then hold too little, and those sent on them
// are refused. The ratio of what the server counted (the level foreseen
// less the level stated) to what was reserved, the unscaled part taken off
// both and kept between one half and two, times what the scale held, is
// one sample of the truth; the scale moves a quarter of the way toward it,
// and stays between none and maxScale. Only an answer after the latest
// observation, of a limit unchanged, in the same window of a quota
// restored whole or of a quota whose refill rate is known, is compared
// (DESIGN.md §10, "A server that counts more").
//
// What was reserved counts the requests granted after l too, when there
// are any (top, the latest grant, is after l). A server may state what is
// left as of a request's arrival, before it counted those, or as of its
// answer, after it counted some: the sample is then a bound below the
// truth, and the same sample with the reservations of the requests
// granted after l and still in flight left out (see after) a bound above
// it. The scale moves toward the nearer bound when it is outside the
// two, and not at all within. An answer to a request in flight when the
// latest observation was read is read both ways, against its own
// reservation (and those granted between) and against since: the scale
// moves only outside both. (Taken as the truth, a server counting
// twice what was declared, asked by batches of 4 at once, read as
// counting less after each batch: the first answer of a batch compared
// one request's count with four reservations, and the scale fell from
// 1000 to 0 in six batches.)
func (c *costs) learn(q *costQuota, l *Lease, pq *parse.Quota, now int64, top uint64) bool {
	u := &c.units[q.unit]
	if !q.live || l.seq <= q.mark || l.seq <= u.mark || pq.Remaining < 0 || pq.Limit >= 0 && min(pq.Limit, maxQuota) != q.q ||
		q.refill && q.rate <= 0 || !q.refill && (q.deadline == 0 || now >= q.deadline) {
		return false
	}
	level, ok := q.level(now)
	if !ok || level == math.MaxInt64 {
		return false
	}
	counted := u.since - u.fixed // what the scale applies to, scaled
	// The remaining as apply reads it (see rounding): the level foreseen
	// is of such readings, and compared with the count as stated, a
	// rounded one, every sample was 500 tokens short.
	r := max(0, min(pq.Remaining, maxQuota)-rounding(pq))
	if q.q >= 0 {
		r = min(r, q.q)
	}
	held := 1 + float64(u.held())/1000
	sample := func(d, c int64) float64 { return held * min(max(float64(d)/float64(c), 0.5), 2) }
	f := 1 + float64(u.scale)/1000
	var truth float64
	if l.seq <= u.from {
		// l was in flight when the observation was read (requests sent
		// one after another as answers come): since holds none of what
		// the server counted for it. A server stating what is left as
		// of a request's arrival counted l since (and the requests
		// granted between the observation's and l, still in flight);
		// one stating it as of its answer counted the requests granted
		// since the observation was read instead, since. Either is the
		// truth, and the sample lies between the two: the scale moves
		// toward the nearer only when it is outside both. (Compared
		// with since alone, a server of the first kind counting exactly
		// what was declared, asked by requests of mixed costs two at a
		// time, read as counting what l cost over what the next
		// reserved, and the scale rose to 3.5 times; with l alone, one
		// of the second kind read as counting what the next cost over
		// what l reserved, and noise by as much up as down carried it
		// up against the floor of 0.) Nothing counted since: l was
		// counted in the observation (a server of the second kind,
		// asked by a batch), and says nothing.
		own, ownFixed := u.split(&l.want)
		before := max(u.after(u.mark)-u.after(l.seq), 0) // granted between the observation's and l, in flight
		d, arrived := level-r-ownFixed, own-ownFixed+before
		if d <= 0 || arrived <= 0 {
			return false
		}
		lo := sample(d, arrived)
		hi := lo
		if counted > 0 {
			answered := sample(level-r-u.fixed, counted)
			lo, hi = min(lo, answered), max(hi, answered)
		}
		switch {
		case f < lo:
			truth = lo
		case f > hi:
			truth = hi
		default:
			return true // the scale is within the bounds
		}
	} else {
		if counted <= 0 {
			return false
		}
		truth = sample(level-r-u.fixed, counted)
		if top > l.seq && truth < f {
			// A bound below: the bound above, if it is below the scale too.
			after := u.after(l.seq)
			fixed := int64(float64(u.fixed) * (float64(min(after, u.since)) / float64(u.since))) // the unscaled share of after, as of since
			c := counted - (after - fixed)
			if after <= 0 || c <= 0 {
				return true
			}
			upper := sample(level-r-(u.fixed-fixed), c)
			if upper >= f {
				return true // the scale is within the bounds
			}
			truth = upper
		}
	}
	f += (truth - f) / 4
	u.scale = int64(math.Ceil(min(max(f-1, 0), maxScale/1000.0)*1000 - 1e-9)) // rounded up
	return true
}

// learnRefusal raises the scale of each unit by the first of quotas in it
// that explains the refusal of l as one of cost (see learnRefused), and
// reports whether one did: the server counted l as more than a quota's
// room. It runs after refusal: the request refused waits as its cost, not
// yet raised, says.
func (c *costs) learnRefusal(l *Lease, quotas []parse.Quota) (short bool) {
	var learned [maxCostUnits]bool
	derived := anthropicSplit(quotas)
	for i := range quotas {
		pq := &quotas[i]
		if !isCostUnit(pq.Unit) || derived && isDerived(pq) {
			continue
		}
		for j := range c.units {
			if u := &c.units[j]; u.name == pq.Unit && !learned[j] {
				learned[j] = c.learnRefused(u, l, pq, quotas, derived)
				short = short || learned[j]
			}
		}
	}
	return short
}

// learnRefused raises u's scale on a refusal, pq, of a request l whose
// cost the quota stated room for, less than twice over, when no quota of
// requests explains the refusal instead: the server counted more than
// the remaining it states, so the share of l's cost the scale applies to
// was at least remaining + 1 less the rest, over that share. That is a
// bound below the truth: the scale is raised past it by as much as it fell
// short of it, never lowered, and stays at most maxScale (DESIGN.md §10,
// "A server that counts more"). It reports whether it looked at the
// refusal. derived is anthropicSplit(quotas).
func (c *costs) learnRefused(u *costUnit, l *Lease, pq *parse.Quota, quotas []parse.Quota, derived bool) bool {
	n, fixed := u.split(&l.want)
	least := max(0, pq.Remaining-rounding(pq)) // the room stated, at the least
	if n <= 0 || least < n || least/2 >= n {
		return false // no room for it (a level, not its cost, was wrong), or room twice over
	}
	for i := range quotas {
		q := &quotas[i]
		switch {
		case q == pq || q.Remaining < 0 || derived && isDerived(q):
		case !isCostUnit(q.Unit):
			if q.Remaining == 0 {
				return false // a spent quota of requests explains it
			}
		case max(0, q.Remaining-rounding(q)) < c.needIn(q.Unit, &l.want):
			return false // another cost quota (of this unit too: a day's) explains it
		}
	}
	s := min(l.want.In(u.name), maxQuota) - fixed
	if s <= 0 {
		return false
	}
	f := float64(min(least, maxQuota)+1-fixed) / float64(s)
	if b := int64(math.Ceil((f - 1) * 1000)); b > u.scale {
		u.scale = min(b+(b-u.scale), maxScale)
	}
	return true
}

// needIn returns what want costs in unit as the key's quotas hold it (see
// costUnit.need), its cost declared if the key tracks no such unit.
func (c *costs) needIn(unit string, want *Cost) int64 {
	for i := range c.units {
		if c.units[i].name == unit {
			return c.units[i].need(want)
		}
	}
	return min(want.In(unit), maxQuota)
}

// unfit records that the server refused a cost of n in unit beyond its
// limit: a cost so large no longer counts as one it accepts.
func (c *costs) unfit(unit string, n int64) {
	for i := range c.units {
		if u := &c.units[i]; u.name == unit && u.fits >= n {
			u.fits = n - 1
		}
	}
}

// costUnits reports whether one of quotas is in a cost unit.
func costUnits(quotas []parse.Quota) bool {
	for i := range quotas {
		if isCostUnit(quotas[i].Unit) {
			return true
		}
	}
	return false
}

// zeroCostLimit reports whether one of quotas is of a cost unit and
// states a limit of 0.
func zeroCostLimit(quotas []parse.Quota) bool {
	for i := range quotas {
		if quotas[i].Limit == 0 && isCostUnit(quotas[i].Unit) {
			return true
		}
	}
	return false
}

// unzeroCostLimits returns a copy of quotas in which a limit of 0 stated
// for a cost unit is unknown (-1): as a quota of requests stated as 0, it
// paces nothing, and the server's refusals pause the key (see
// PolicyView.Quota). Read as a whole quota of 0, it failed every request
// that cost more than the most one such answer had served with a
// CostError, unsent, from a server that served them all (an
// OpenAI-compatible server that states 0 for a limit it does not
// enforce). What is left still counts: a stated remaining of 0 waits for
// the quota's reset.
// The copy goes to dst's array when it fits (a caller's, on its stack:
// such a server states 0 on every answer).
func unzeroCostLimits(dst, quotas []parse.Quota) []parse.Quota {
	qs := append(dst[:0], quotas...)
	for i := range qs {
		if qs[i].Limit == 0 && isCostUnit(qs[i].Unit) {
			qs[i].Limit = -1
		}
	}
	return qs
}

// index returns the index of q, an element of c.quotas.
func (q *costQuota) index(c *costs) int {
	for i := range c.quotas {
		if &c.quotas[i] == q {
			return i
		}
	}
	return 0
}

// statedGrain returns how much longer than stated the reset of pq may be,
// in nanoseconds: the unit it is stated in, for a server may round it
// down or to the nearest. Anthropic's, an instant in whole seconds, and a
// duration that is a whole number of seconds ("59s", or Azure's bare
// seconds) are of a second; one of 100 ms, 10 ms or 1 ms, of that. An
// instant in whole seconds (the epoch seconds of some OpenAI-compatible
// servers) is measured from the key's estimate of the server's clock,
// which has any fraction: a reset that, added to that estimate at the
// answer's arrival now (or to now itself, which package parse measures
// from under a Date far off), makes a whole second is of a second too.
// Any other is of no grain (a Go server's unrounded duration).
func statedGrain(pq *parse.Quota, now int64, l *Lease) int64 {
	const second = int64(time.Second)
	if pq.Dialect == "anthropic" {
		return second
	}
	if at := addSat(now, int64(pq.Reset)); at%second == 0 || l.skewOK && addSat(at, l.skew)%second == 0 {
		return second
	}
	for g := time.Second; g >= time.Millisecond; g /= 10 {
		if pq.Reset%g == 0 {
			return int64(g)
		}
	}
	return 0
}

// apply records one observation of q, from a refusal if refused, one of
// a request the server did not serve if rejected (a 429), written at most
// ago before the instant its resets were measured from (see writtenAgo),
// dated if it had a Date; it reports whether it took it as q's latest.
func (c *costs) apply(q *costQuota, l *Lease, pq *parse.Quota, now, ago int64, dated, refused, rejected bool) bool {
	q.seen = now
	q.refill = refills(pq.Dialect)
	outdated := c.outdated(q, l, pq)
	if pq.Limit >= 0 && !outdated {
		limit := min(pq.Limit, maxQuota)
		if limit != q.q {
			q.rate = 0 // a new limit: a new refill rate
		}
		q.q = limit
	}
	if pq.Window > 0 && (q.w <= 0 || !outdated) {
		q.w, q.cut = window(pq.Window), pq.Window > MaxPause
	}
	if pq.Remaining < 0 {
		return false
	}
	// A rounded remaining is read as the least count it stands for, and
	// its refill as from the most (see rounding): each errs on the side
	// of fewer tokens.
	r := min(pq.Remaining, maxQuota)
	most := r + rounding(pq)
	r = max(0, r-rounding(pq))
	if q.q >= 0 {
		r, most = min(r, q.q), min(most, q.q)
	}
	if q.refill && !outdated {
		// (An outdated answer's remaining and reset are of the old
		// limit: read against the new one, they made a rate that was
		// neither's, kept as the highest seen.)
		switch {
		case q.q > 0 && q.w > 0:
			q.rate = float64(q.q) / float64(q.w)
		case q.q > most+1 && pq.Reset > 0:
			// Remaining is a whole number of tokens, the fraction of the
			// next one left out, and the reset is rounded up: the limit
			// less the remaining less one token, over the reset measured
			// from when the answer was written, is never above the true
			// rate, and the highest rate seen is the closest. A reset
			// stated as an instant (Anthropic's, and the epoch seconds
			// of some OpenAI-compatible servers) was measured from when
			// the answer was read, or from the server's clock then, up
			// to ago after it was written, with the refill of that time
			// not in the remaining: ago is added to it (measured from
			// the read, 200 ms of network each way made 100 tokens a
			// second 103.7, and a request whose cost was declared
			// exactly was refused). OpenAI's duration was measured by
			// the server as it wrote the remaining: the addition, under
			// a second with a Date, only errs on the side of a lower
			// rate; without one (the key cannot tell an instant from a
			// duration then), none is made.
			// A reset is read no longer than MaxPause, as a pause is:
			// a year's would hold requests for months.
			// A refusal whose own estimate is below half the rate
			// kept shows that rate too high (one reset of 1ns, a
			// server's glitch or lie, made the quota refill at once for
			// as long as its limit stayed): its estimate replaces it.
			// Within a factor of two, the two differ by the rounding of
			// their resets, and the highest is still the closest.
			// A refusal (a 429) of a request that lacked tokens, as the
			// server counts them, shows the rate kept too high when the
			// estimate it makes with its reset read its grain longer is
			// below it: the server rounds its resets down, or to the
			// nearest (Anthropic's instants are often a second early).
			// From then on every estimate reads the reset so, a floor,
			// and that refusal's replaces the rate kept. Read as stated,
			// the highest of many was the one whose reset was cut the
			// most: 102.6 tokens a second for 100 under resets rounded
			// to the nearest second, and every request waiting for its
			// tokens went a few milliseconds early and was refused, to
			// the end of the run (163 to 195 of 300); a refusal replaced
			// the rate only below half of it.
			used := float64(q.q - most - 1)
			if !dated && pq.Dialect != "anthropic" {
				ago = 0 // OpenAI's, undated: most likely a duration
			}
			est := used / float64(addSat(window(pq.Reset), ago))
			floor := used / float64(addSat(window(pq.Reset), ago+statedGrain(pq, now, l)))
			switch {
			case refused && used/float64(window(pq.Reset)) < q.rate/2:
				q.rate = est
				if q.floored {
					q.rate = floor
				}
			case rejected && most < c.units[q.unit].need(&l.want) && floor < q.rate:
				q.rate, q.floored = floor, true
			case q.floored:
				q.rate = max(q.rate, floor)
			default:
				q.rate = max(q.rate, est)
			}
		}
	}
	if q.older(l) {
		// An answer to a request sent before the one of the current
		// observation may have been written before it, and overtaken on
		// the way: only a lower level is news. (Within one effective
		// window the lowest remaining is the latest; a quota refilled
		// continuously is compared as it has refilled since.)
		u := &c.units[q.unit]
		if l.seq > u.mark && !q.refill && q.deadline != 0 && now >= q.deadline && q.q >= 0 {
			q.renew(now) // the level below is written, in the window it is of
		}
		cur, _ := q.level(now)
		if l.seq > u.mark {
			// No observation counted l: the current level is that of an
			// earlier observation less the charges of requests granted
			// after l that answered with nothing (see observe), and l's
			// own cost, whose reservation is gone, is in neither. Both
			// that level less l's cost and r are above the truth; the
			// lower is kept. (r alone would drop the charges.) A request
			// rejected (a 429) cost nothing.
			if !rejected {
				cur = max(0, cur-u.need(&l.want))
			}
			if r >= cur {
				q.r, q.at = cur, now
				return false
			}
		} else if r >= cur {
			return false
		}
	}
	q.live, q.r, q.at, q.mark = true, r, now, max(q.mark, l.seq)
	q.renewed, q.due = false, false // stated: nothing to probe
	q.deadline = 0
	if pq.Reset >= 0 && (pq.Reset > 0 || !q.refill) {
		q.deadline = addSat(now, min(int64(pq.Reset), int64(MaxPause)))
	}
	return true
}

// older reports whether an answer to l is older than q's latest
// observation: l was granted before the request it observed.
func (q *costQuota) older(l *Lease) bool { return q.live && l.seq < q.mark }

// outdated reports whether pq, the answer to l, states another limit than
// q's and is older than q's latest observation and than the latest answer
// that stated q's unit (l was granted before the requests of both): written
// before them and overtaken on the way, it restates a limit the server
// has changed since, and the key keeps the latest, with its window and
// refill rate; its level is taken only if lower, as any older answer's.
// Taken, a quota lowered from 10000 to 5000 read 10000 again, and a
// request the quota can never cover was sent rather than failed. (Older
// than q's observation alone, the charge of an answer that stated nothing
// made an answer outdated; older than the unit's alone, another quota's.)
func (c *costs) outdated(q *costQuota, l *Lease, pq *parse.Quota) bool {
	return q.older(l) && l.seq < c.units[q.unit].mark && q.q >= 0 && pq.Limit >= 0 && min(pq.Limit, maxQuota) != q.q
}

// anthropicSplit reports whether quotas hold Anthropic's input or output
// tokens quota, from which its tokens quota is derived: that one is then
// neither charged nor read (DESIGN.md §10). It is derived when its limit
// is the sum of theirs (Anthropic's answers state 80000 and 16000, and
// tokens 96000) or cannot be compared; a tokens quota of another limit is
// one of its own, enforced beside them, and is charged as any quota.
func anthropicSplit(quotas []parse.Quota) bool {
	split := false
	in, out, tokens := int64(-1), int64(-1), int64(-1)
	for i := range quotas {
		q := &quotas[i]
		if q.Dialect != "anthropic" {
			continue
		}
		switch q.Unit {
		case "input-tokens":
			split, in = true, q.Limit
		case "output-tokens":
			split, out = true, q.Limit
		case "tokens":
			tokens = q.Limit
		}
	}
	if !split || tokens < 0 || in < 0 || out < 0 {
		return split
	}
	return in <= math.MaxInt64-out && tokens == in+out
}

// isDerived reports whether q is Anthropic's tokens quota, the sum of its
// input and output quotas when those are stated beside it.
func isDerived(q *parse.Quota) bool { return q.Dialect == "anthropic" && q.Unit == "tokens" }

// refusal reports, for a refused request l whose answer states quotas,
// whether one of its cost quotas explains the refusal (it has less left
// than the request costs), and how long the request must wait for it: the
// tokens it lacks at the quota's refill rate, or, for a quota restored
// whole or whose rate is unknown, its reset; -1 when no quota that
// explains it says when it has room (no rate known, no reset stated). A
// quota with room for the cost but not for twice it explains the refusal
// too: the server counted more than the estimate, and the request waits as
// if it cost twice as much. A cost beyond a whole quota explains it, with
// no wait: the request can never start. Anthropic's derived tokens quota
// is not read.
func (c *costs) refusal(l *Lease, quotas []parse.Quota) (wait int64, explained bool) {
	wait = -1
	derived := anthropicSplit(quotas)
	for i := range quotas {
		pq := &quotas[i]
		if !isCostUnit(pq.Unit) || pq.Remaining < 0 || derived && isDerived(pq) {
			continue
		}
		need := c.needIn(pq.Unit, &l.want)
		left := max(0, pq.Remaining-rounding(pq)) // at the least
		if need <= 0 || left >= 2*need {
			continue // a request of unknown cost is left to the spent quotas' resets
		}
		explained = true
		if left >= need {
			need = 2 * need
			if pq.Limit >= 0 {
				need = min(need, pq.Limit)
			}
		}
		if pq.Limit >= 0 && need > pq.Limit {
			if raw := min(l.want.In(pq.Unit), maxQuota); raw > pq.Limit {
				// Beyond the whole quota, as declared and as the
				// server counts it, and refused: so large a cost no
				// longer counts as one the server took, even if it
				// took one before, and fails at once from now on.
				c.unfit(pq.Unit, raw)
				wait = max(wait, 0)
				continue
			}
			// A cost within the limit as declared, which only the
			// scale puts beyond it: as in admission, a scale never
			// makes a request that fits one that never does. It was
			// refused for what was left, and waits for that.
			need = pq.Limit
		}
		var rate float64
		if refills(pq.Dialect) {
			name, pk := policyName(pq.Policy), string(partition(pq.Partition))
			for j := range c.quotas {
				if q := &c.quotas[j]; q.name == name && q.pk == pk && c.units[q.unit].name == pq.Unit {
					rate = q.rate
				}
			}
		}
		switch {
		case rate > 0:
			d := math.Ceil(float64(need-left) / rate)
			wait = max(wait, int64(min(d, float64(MaxPause))))
		case pq.Reset >= 0:
			wait = max(wait, int64(min(pq.Reset, MaxPause)))
		}
	}
	return wait, explained
}

// tokenRefusal adjusts what the Transport knows of a refusal by what the
// key's cost quotas explain of it (see costs.refusal): the wait the
// request's cost needs is a floor when the server gave none, and replaces
// the reset of a spent quota refilled continuously, which is the time
// until it is whole, not until this request fits. Retry-After stands, and
// so does a refusal that gives no wait when the quotas give none either
// (wait < 0): it backs off as such.
func tokenRefusal(r *Refusal, want *Cost, quotas []parse.Quota, wait int64) {
	switch {
	case !r.Given && wait >= 0:
		r.Wait, r.Given, r.Reason = time.Duration(wait), true, ReasonQuota
	case r.Reason == ReasonQuota:
		// The wait the Transport took from the spent quotas, without
		// those this request's cost explains.
		other := int64(0)
		for i := range quotas {
			q := &quotas[i]
			if q.Remaining == 0 && q.Reset >= 0 && (!isCostUnit(q.Unit) || want.In(q.Unit) <= 0) {
				other = max(other, int64(q.Reset))
			}
		}
		r.Wait = time.Duration(max(other, wait))
	}
}

// view returns what q says at now, for inspection.
func (c *costs) view(q *costQuota, now int64) PolicyView {
	u := &c.units[q.unit]
	v := PolicyView{Name: q.name, Unit: u.name, Quota: q.q, Window: time.Duration(q.w), Remaining: -1, Reserved: u.reserved(now), Stated: at(q.seen), Accepted: u.fits, Scale: u.scale}
	if q.pk != "" {
		v.Partition = []byte(q.pk)
	}
	if level, ok := q.level(now); ok && level != math.MaxInt64 && (q.refill || q.deadline == 0 || now < q.deadline) {
		v.Remaining = max(0, level-v.Reserved)
		v.Short = max(0, v.Reserved-level)
		v.ResetAt = at(q.full())
		if q.refill {
			v.Refill = q.rate * 1e9
		}
	}
	return v
}

// The cost quotas in the binary form (version 2): the units (count, then
// each: name, mark, then its reservations: count, then each: its first
// grant after the previous one's last (or the mark), its grants less one,
// end and amount), then the quotas (count, then each: name, partition,
// unit index, flags (refill 1, live 2, renewed 4, due 8, floored 16: the
// last three set only once a window has ended, or a refusal showed the
// refill rate too high (floored is kept from then on, whatever the limit
// does: the server's rounding stays), so that a key's usual form stays
// what earlier versions read), last seen, limit plus one (0: unknown), window,
// the refill rate as float64 bits, remaining, its instant, deadline,
// mark).
func (e *encoder) costs(c *costs) {
	e.uint(uint64(len(c.units)))
	for i := range c.units {
		u := &c.units[i]
		e.str(u.name)
		e.uint(u.mark)
		e.reservations(u)
	}
	e.uint(uint64(len(c.quotas)))
	for i := range c.quotas {
		q := &c.quotas[i]
		e.str(q.name)
		e.str(q.pk)
		e.b = append(e.b, q.unit)
		var flags byte
		if q.refill {
			flags |= 1
		}
		if q.live {
			flags |= 2
		}
		if q.renewed {
			flags |= 4
		}
		if q.due {
			flags |= 8
		}
		if q.floored {
			flags |= 16
		}
		e.b = append(e.b, flags)
		e.at(q.seen)
		e.uint(uint64(q.q + 1))
		e.uint(uint64(q.w))
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(q.rate))
		e.uint(uint64(q.r))
		e.at(q.at)
		e.at(q.deadline)
		e.uint(q.mark)
	}
}

// reservations writes the reservations of u: count, then each: its first
// grant after the previous one's last (or u's mark), its grants less one,
// end and amount.
func (e *encoder) reservations(u *costUnit) {
	e.uint(uint64(len(u.res)))
	prev := u.mark
	for _, r := range u.res {
		e.uint(r.lo - prev) // ascending, after the mark
		e.uint(r.hi - r.lo)
		e.at(r.end)
		e.uint(uint64(r.n))
		prev = r.hi
	}
}

// reservations reads what encoder.reservations wrote of u, whose mark is
// read.
func (d *decoder) reservations(u *costUnit) {
	m := d.bounded(maxReservations)
	if m == 0 {
		return
	}
	u.res = make([]reservation, 0, m)
	prev := u.mark
	for range m {
		lo := prev + d.uint()
		r := reservation{lo: lo, hi: lo + d.uint(), end: d.at(), n: int64(d.bounded(uint64(maxQuota)))}
		if d.err || r.lo <= prev || r.hi < r.lo || r.n < 1 || r.end == 0 {
			d.fail()
			return
		}
		u.res = append(u.res, r)
		u.n += r.n
		prev = r.hi
	}
}

// maxRate bounds a refill rate, per nanosecond: a whole quota of the
// largest size in a nanosecond.
const maxRate = float64(maxQuota)

func (d *decoder) costs(c *costs) {
	if k := d.bounded(maxCostUnits); k > 0 {
		c.units = make([]costUnit, k)
		for i := range c.units {
			u := &c.units[i]
			u.name = d.str()
			u.mark = d.uint()
			if !isCostUnit(u.name) {
				d.fail() // never written: the policies count requests
			}
			for j := range i {
				if c.units[j].name == u.name {
					d.fail()
				}
			}
			d.reservations(u)
		}
	}
	if k := d.bounded(maxCostQuotas); k > 0 {
		c.quotas = make([]costQuota, k)
		for i := range c.quotas {
			q := &c.quotas[i]
			q.name = d.str()
			q.pk = d.str()
			q.unit = d.byte()
			if int(q.unit) >= len(c.units) {
				d.fail()
				return
			}
			flags := d.byte()
			if flags&^31 != 0 {
				d.fail()
			}
			q.refill, q.live, q.renewed, q.due, q.floored = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0, flags&16 != 0
			q.seen = d.at()
			q.q = int64(d.bounded(uint64(maxQuota)+1)) - 1
			q.w = int64(d.bounded(uint64(MaxPause))) // window caps every window written
			q.cut = q.w == int64(MaxPause)           // perhaps: the binary form does not say
			q.rate = d.float(maxRate)
			q.r = int64(d.bounded(uint64(maxQuota)))
			q.at = d.at()
			q.deadline = d.at()
			q.mark = d.uint()
		}
	}
}
