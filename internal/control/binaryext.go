package control

import (
	"encoding/binary"
	"math"
)

// The end of the binary form, after the retry budget: the refusals in a
// row (all, and those below the refusal floor), the ramp's latency
// estimate and probe timeouts.

// ext writes the end of the binary form of s.
func (e *encoder) ext(s *State) {
	e.uint(uint64(s.retry.run))
	e.uint(uint64(s.retry.streak))
}

// ext reads what encoder.ext wrote into n.
func (d *decoder) ext(n *State) {
	n.retry.run = int32(d.bounded(maxRun))
	n.retry.streak = int32(d.bounded(uint64(n.retry.run)))
}

// signed reads a float64 in [-limit, limit].
func (d *decoder) signed(limit float64) float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	if !(f >= -limit && f <= limit) { // also rejects NaN
		d.fail()
		return 0
	}
	return f
}
