package control

import (
	"encoding/binary"
	"errors"
	"math"
)

// The binary form of a State (MarshalBinary), version 1 or 2:
//
//	version byte (1), then in order, every integer a varint:
//	gen, born (absolute nanoseconds), every other instant relative to born
//	(0: none; else zigzag(t-born)+1), flags, seq, epoch, the pause, the
//	zero-r streak, the skew, MaxRate's next start, the ramp, the leases
//	(count, then end, count and kept count each), the policies (count,
//	then each),
//	the learner (with its learned policy when it has one), the retry
//	budget (tokens as float64 bits); in version 2, then the cost quotas
//	(see appendCosts); then the tails that are set (see tailLearn, tailSmooth, tailCut).
//
// A State with no cost quota and no reservation in a unit one counts is
// written as version 1, as before they existed (what requests reserve in
// units no answer has stated is a tail: see tailEarly); both versions are
// read.
// The zero State is the empty form. Decoding checks every count and value
// against the bounds the controller keeps (8 policies, names of 128 bytes,
// 194 entries of start log, 34 lease slots, instants within 1970-2120), so
// that any input is decoded in linear time into a State the controller
// can run, or rejected.
const (
	binaryVersion      = 1
	binaryVersionCosts = 2 // version 1 and the cost quotas
)

// maxBinary is the longest form decoded: well above the largest State.
const maxBinary = 64 << 10

// maxStored bounds the instants of a State: now (at most maxInstant) plus
// the spans the controller adds to it.
const maxStored = maxInstant + 4*int64(maxSpan)

// ErrBinary reports a binary form that is not one this package writes.
var ErrBinary = errors.New("polite: invalid key state")

// MarshalBinary returns the binary form of s.
func (s *State) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(nil)
}

// AppendBinary appends the binary form of s to b.
func (s *State) AppendBinary(b []byte) ([]byte, error) {
	if s.IsZero() {
		return b, nil
	}
	e := encoder{b: b, base: s.born}
	if s.costs.isZero() {
		e.b = append(e.b, binaryVersion)
	} else {
		e.b = append(e.b, binaryVersionCosts)
	}
	e.uint(s.gen)
	e.int(s.born)
	e.at(s.expiry)
	e.at(s.used)
	e.b = append(e.b, s.flags)
	e.uint(s.seq)
	e.uint(s.epoch)
	e.at(s.pauseUntil)
	e.b = append(e.b, byte(s.pauseReason))
	e.uint(uint64(s.zeroStreak))
	e.int(s.skew)
	e.at(s.rateNext)

	e.bool(s.ramp.open)
	e.uint(uint64(s.ramp.cwnd))
	e.uint(uint64(s.ramp.acc))
	e.uint(s.ramp.probeSeq)
	e.at(s.ramp.probeEnd)

	e.uint(uint64(len(s.leases.b)))
	for _, b := range s.leases.b {
		e.at(b.end)
		e.uint(uint64(b.n))
		e.uint(uint64(b.k))
	}
	e.uint(uint64(len(s.policies)))
	for i := range s.policies {
		e.policy(&s.policies[i])
	}

	l := &s.learn
	e.uint(l.cycle)
	e.uint(l.cycleEpoch)
	e.at(l.cycleStart)
	e.uint(uint64(l.cycleOK))
	e.bool(l.held)
	e.bool(l.pending)
	e.uint(l.pendCycle)
	e.uint(uint64(l.pendQ))
	e.at(l.pendFrom)
	e.bool(l.quota != nil)
	if l.quota != nil {
		e.policy(l.quota)
	}
	e.bool(l.binding)
	e.at(l.grownAt)
	e.uint(uint64(l.growGap))
	e.at(l.distrustUntil)
	e.uint(uint64(l.distrustFor))

	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(s.retry.tokens))
	e.at(s.retry.at)
	e.at(s.retry.stopUntil)
	e.ext(s)
	if !s.costs.isZero() {
		e.costs(&s.costs)
	}
	e.tails(s)
	return e.b, nil
}

type encoder struct {
	b    []byte
	base int64
}

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// at writes an instant relative to the base.
func (e *encoder) at(t int64) {
	if t == 0 {
		e.uint(0)
		return
	}
	d := t - e.base
	e.uint((uint64(d)<<1 ^ uint64(d>>63)) + 1)
}

func (e *encoder) policy(p *policy) {
	e.str(p.name)
	e.str(p.pk)
	e.b = append(e.b, byte(p.unit))
	e.at(p.seen)
	e.uint(uint64(p.q))
	e.uint(uint64(p.w))
	e.bool(p.live)
	e.uint(p.epoch)
	e.uint(p.mark)
	e.uint(uint64(p.minR))
	e.at(p.deadline)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(p.cost))
	e.uint(uint64(p.log.len()))
	prev := e.base
	for i := range p.log.len() {
		s := p.log.get(i)
		d := s.at - prev // ascending: small and positive
		e.uint(uint64(d)<<1 ^ uint64(d>>63))
		e.uint(uint64(s.n))
		prev = s.at
	}
}

// Identity returns the identity of the State whose binary form is data
// (see Begin): the instant its key was first used in this incarnation. It
// is 0 for the zero State, for one not used yet, and for data whose header
// is not a binary form's; it reads no further than the identity, so data
// cut after it, which UnmarshalBinary rejects, still shows it. Two forms of one
// key at one Generation but of two identities are two incarnations: the
// key was forgotten and started over in between.
func Identity(data []byte) int64 {
	if len(data) == 0 || len(data) > maxBinary || data[0] != binaryVersion && data[0] != binaryVersionCosts {
		return 0
	}
	_, k := binary.Uvarint(data[1:])
	if k <= 0 {
		return 0
	}
	born, n := binary.Varint(data[1+k:])
	if n <= 0 || born < 0 || born > maxStored {
		return 0
	}
	return born
}

// Stamp returns the Generation, the identity (see Identity) and the
// grants so far of the State whose binary form is data, read from its
// header, which UnmarshalBinary would read first. ok is false for data
// whose header is not a binary form's, and for the empty form. Of two
// forms of one identity, the one of a lower generation, or of the same
// and fewer grants, was written before the other.
func Stamp(data []byte) (gen uint64, born int64, seq uint64, ok bool) {
	if len(data) == 0 || len(data) > maxBinary || data[0] != binaryVersion && data[0] != binaryVersionCosts {
		return 0, 0, 0, false
	}
	d := decoder{b: data[1:]}
	gen = d.uint()
	born = d.int()
	if born < 0 || born > maxStored {
		return 0, 0, 0, false
	}
	d.base = born
	d.at()
	d.at()
	d.byte()
	seq = d.uint()
	return gen, born, seq, !d.err
}

// UnmarshalBinary sets s to the State data describes. The empty form is
// the zero State. On error s is left unchanged.
func (s *State) UnmarshalBinary(data []byte) error {
	if len(data) == 0 {
		*s = State{}
		return nil
	}
	if len(data) > maxBinary || data[0] != binaryVersion && data[0] != binaryVersionCosts {
		return ErrBinary
	}
	d := decoder{b: data[1:]}
	var n State
	n.gen = d.uint()
	n.born = d.int()
	if n.born < 0 || n.born > maxStored {
		return ErrBinary
	}
	d.base = n.born
	n.expiry = d.at()
	n.used = d.at()
	n.flags = d.byte()
	n.seq = d.uint()
	n.epoch = d.uint()
	n.pauseUntil = d.at()
	n.pauseReason = Reason(d.byte())
	n.zeroStreak = int32(d.bounded(64))
	n.skew = d.int()
	n.rateNext = d.at()

	n.ramp.open = d.bool()
	n.ramp.cwnd = int32(d.bounded(rampCap))
	n.ramp.acc = int32(d.bounded(rampCap))
	n.ramp.probeSeq = d.uint()
	n.ramp.probeEnd = d.at()

	if c := d.bounded(maxBuckets); c > 0 {
		n.leases.b = make([]bucket, 0, c)
		for range c {
			b := bucket{end: d.at(), n: int64(d.bounded(uint64(maxQuota)))}
			b.k = int64(d.bounded(uint64(b.n)))
			if b.n < 1 || b.end == 0 || (len(n.leases.b) > 0 && b.end <= n.leases.b[len(n.leases.b)-1].end) {
				return ErrBinary
			}
			n.leases.b = append(n.leases.b, b)
			n.leases.n += b.n
			n.leases.kept += b.k
		}
	}
	if c := d.bounded(maxPolicies); c > 0 {
		n.policies = make([]policy, c)
		for i := range n.policies {
			p := &n.policies[i]
			d.policy(p)
			for j := range i {
				if o := &n.policies[j]; o.name == p.name && o.pk == p.pk && o.unit == p.unit {
					return ErrBinary // one policy twice: never written
				}
			}
		}
	}

	l := &n.learn
	l.cycle = d.uint()
	l.cycleEpoch = d.uint()
	l.cycleStart = d.at()
	l.cycleOK = int64(d.bounded(uint64(maxQuota)))
	l.held = d.bool()
	l.pending = d.bool()
	l.pendCycle = d.uint()
	l.pendQ = int64(d.bounded(uint64(maxQuota)))
	l.pendFrom = d.at()
	if d.bool() {
		l.quota = new(policy)
		d.policy(l.quota)
		if l.quota.unit != unitRequests {
			d.fail()
		}
	}
	l.binding = d.bool()
	l.grownAt = d.at()
	l.growGap = int32(d.bounded(maxGrowGap))
	l.distrustUntil = d.at()
	l.distrustFor = int64(d.bounded(uint64(distrustMax)))

	n.retry.tokens = d.signed(retryTokenCap)
	n.retry.at = d.at()
	n.retry.stopUntil = d.at()
	d.ext(&n)
	if data[0] == binaryVersionCosts {
		d.costs(&n.costs)
		if n.costs.isZero() {
			d.fail() // written as version 1
		}
	}
	d.tails(&n)

	if d.err || len(d.b) != 0 || n.flags&^flagsAll != 0 || n.pauseReason >= numReasons ||
		n.skew < -int64(maxSpan) || n.skew > int64(maxSpan) {
		return ErrBinary
	}
	*s = n
	return nil
}

type decoder struct {
	b    []byte
	base int64
	err  bool
}

func (d *decoder) fail() { d.err, d.b = true, nil }

func (d *decoder) byte() uint8 {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail()
	return false
}

// uint and int read a varint as the encoder writes it, in its fewest
// bytes: one padded with a last byte of zero ("0x81 0x00" for 1) is a form
// MarshalBinary never writes, and reads back to another.
func (d *decoder) uint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 || k > 1 && d.b[k-1] == 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) int() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 || k > 1 && d.b[k-1] == 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

// bounded reads an unsigned integer of at most limit.
func (d *decoder) bounded(limit uint64) uint64 {
	v := d.uint()
	if v > limit {
		d.fail()
		return 0
	}
	return v
}

// at reads an instant relative to the base.
func (d *decoder) at() int64 {
	v := d.uint()
	if v == 0 {
		return 0
	}
	v--
	off := int64(v>>1) ^ -int64(v&1)
	if (off > 0 && d.base > maxStored-off) || (off < 0 && d.base+off < 1) {
		d.fail()
		return 0
	}
	return d.base + off
}

// float reads a float64 in [0, limit].
func (d *decoder) float(limit float64) float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	if !(f >= 0 && f <= limit) { // also rejects NaN
		d.fail()
		return 0
	}
	return f
}

func (d *decoder) str() string {
	k := d.bounded(maxKeyLen)
	if uint64(len(d.b)) < k {
		d.fail()
		return ""
	}
	s := string(d.b[:k])
	d.b = d.b[k:]
	return s
}

func (d *decoder) policy(p *policy) {
	p.name = d.str()
	p.pk = d.str()
	p.unit = unit(d.byte())
	if p.unit < unitRequests || p.unit > unitConcurrent {
		d.fail()
	}
	p.seen = d.at()
	p.q = int64(d.bounded(uint64(maxQuota)))
	p.w = int64(d.bounded(uint64(MaxPause))) // window caps every window written
	p.live = d.bool()
	p.epoch = d.uint()
	p.mark = d.uint()
	p.minR = int64(d.bounded(uint64(maxQuota)))
	p.deadline = d.at()
	p.cost = d.float(float64(maxCost))
	c := d.bounded(maxLogLen)
	if c == 0 {
		return
	}
	p.log.ring = make([]start, c)
	prev := d.base
	for range c {
		v := d.uint()
		off := int64(v>>1) ^ -int64(v&1)
		n := int64(d.bounded(uint64(maxQuota)))
		if d.err || off <= 0 && p.log.len() > 0 || n < 1 ||
			(off > 0 && prev > maxStored-off) || (off < 0 && prev+off < 1) {
			d.fail()
			return
		}
		prev += off
		p.log.push(start{at: prev, n: n}, 0)
		p.log.total += n
	}
}
