package redisstore

// Helpers over the stub of the store seam: they make states of a given
// generation. They go when the real seam lands.

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/politehttp/polite"
)

func setState(st *polite.KeyState, gen uint64, exp time.Time, payload string) {
	b := make([]byte, 16, 16+len(payload))
	binary.BigEndian.PutUint64(b, gen)
	binary.BigEndian.PutUint64(b[8:], uint64(exp.UnixNano()))
	st.UnmarshalBinary(append(b, payload...))
}

func payload(st *polite.KeyState) string {
	b, _ := st.MarshalBinary()
	if len(b) < 16 {
		return ""
	}
	return string(b[16:])
}

// incr adds one to the counter in st's payload, bumping the generation if bump.
func incr(st *polite.KeyState, bump bool) {
	n, _ := strconv.Atoi(payload(st))
	gen := st.Generation()
	if bump {
		gen++
	}
	setState(st, gen, time.Now().Add(time.Minute), strconv.Itoa(n+1))
}
