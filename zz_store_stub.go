package polite

// TEMPORARY: a stub of the store seam, so that the Redis store can be built
// before the real one lands. It is dropped when the real seam is merged.

import (
	"context"
	"encoding/binary"
	"time"
)

// KeyState is the opaque state of one budget key (stub: a byte payload
// whose first 8 bytes are the generation and next 8 the expiry in Unix
// nanoseconds).
type KeyState struct{ data []byte }

// MarshalBinary returns the state's binary form.
func (s *KeyState) MarshalBinary() ([]byte, error) { return append([]byte(nil), s.data...), nil }

// UnmarshalBinary replaces the state with data.
func (s *KeyState) UnmarshalBinary(data []byte) error {
	s.data = append(s.data[:0], data...)
	return nil
}

// Generation counts the changes waiters wait for.
func (s *KeyState) Generation() uint64 {
	if len(s.data) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(s.data)
}

// Expiry is when the store may forget the state.
func (s *KeyState) Expiry() time.Time {
	if len(s.data) < 16 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(s.data[8:])))
}

// Store keeps the state of budget keys.
type Store interface {
	Update(ctx context.Context, key string, fn func(*KeyState)) error
	Wait(ctx context.Context, key string, gen uint64, until time.Time) error
}
