package control

import (
	"bytes"
	"testing"
	"time"
)

// TestFirstTail checks that a policy's bound on windows rounded down
// survives the binary form, and that a tail for it that is never written,
// or states an unknown test, is refused.
func TestFirstTail(t *testing.T) {
	now := instant(t0)
	var s State
	s.touch(now)
	s.policies = []policy{{name: "a", unit: unitRequests, seen: now, q: 20, span: 2 * int64(time.Second), opened: now + 5, first: firstTested}}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var n State
	if err := n.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary = %v", err)
	}
	if p := &n.policies[0]; p.span != 2*int64(time.Second) || p.opened != now+5 || p.first != firstTested {
		t.Errorf("read back span %d, opened %d, first %d", p.span, p.opened, p.first)
	}
	// The same State without the tail is the form less its tail.
	s.policies[0].span, s.policies[0].opened, s.policies[0].first = 0, 0, firstUntested
	prefix, _ := s.MarshalBinary()
	if !bytes.HasPrefix(b, prefix) || b[len(prefix)] != tailFirst {
		t.Fatalf("the form %x does not end with a tail after %x", b, prefix)
	}
	for _, c := range []struct {
		name string
		tail []byte
	}{
		{"unknown test", []byte{tailFirst, firstVoid + 1, 2, 0}},
		{"never written", []byte{tailFirst, firstUntested, 0, 0}},
	} {
		bad := append(append([]byte(nil), prefix...), c.tail...)
		if err := new(State).UnmarshalBinary(bad); err == nil {
			t.Errorf("%s: UnmarshalBinary accepted %x", c.name, bad)
		}
	}
}
