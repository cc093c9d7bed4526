package control_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/internal/control/controltest"
)

// t0 is where every table starts.
var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// TestTables runs every rule's steps on a bare State, at fixed instants.
func TestTables(t *testing.T) {
	for _, tab := range controltest.Tables() {
		t.Run(tab.Name, func(t *testing.T) {
			var s control.State
			results := controltest.Replay(tab, t0, func(step func(*control.State) controltest.Result) controltest.Result {
				return step(&s)
			})
			for _, e := range controltest.Check(tab, t0, results) {
				t.Error(e)
			}
		})
	}
}

// TestTablesThroughBinary runs every table with the state serialised and
// read back around each step, as a store that keeps bytes does: the
// results are the same.
func TestTablesThroughBinary(t *testing.T) {
	for _, tab := range controltest.Tables() {
		t.Run(tab.Name, func(t *testing.T) {
			var bare control.State
			want := controltest.Replay(tab, t0, func(step func(*control.State) controltest.Result) controltest.Result {
				return step(&bare)
			})
			var stored []byte
			got := controltest.Replay(tab, t0, func(step func(*control.State) controltest.Result) controltest.Result {
				var s control.State
				if err := s.UnmarshalBinary(stored); err != nil {
					t.Fatalf("UnmarshalBinary(%x) = %v", stored, err)
				}
				r := step(&s)
				b, err := s.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				stored = b
				return r
			})
			if d := controltest.Diff(tab, want, got); d != "" {
				t.Errorf("through the binary form: %s", d)
			}
		})
	}
}

// TestBinaryRoundTrip checks that the state after every step of every
// table reads back equal, and that the zero State is the empty form.
func TestBinaryRoundTrip(t *testing.T) {
	var zero control.State
	if b, _ := zero.MarshalBinary(); len(b) != 0 {
		t.Errorf("zero State MarshalBinary = %x, want empty", b)
	}
	most := 0
	for _, tab := range controltest.Tables() {
		var s control.State
		controltest.Replay(tab, t0, func(step func(*control.State) controltest.Result) controltest.Result {
			r := step(&s)
			b, _ := s.MarshalBinary()
			most = max(most, len(b))
			var back control.State
			if err := back.UnmarshalBinary(b); err != nil {
				t.Fatalf("%s: UnmarshalBinary(MarshalBinary()) = %v", tab.Name, err)
			}
			if !reflect.DeepEqual(normal(&s), normal(&back)) {
				t.Fatalf("%s: round trip changed the state:\n%+v\n%+v", tab.Name, s, back)
			}
			return r
		})
	}
	t.Logf("largest state in the tables: %d bytes", most)
}

// normal returns s as the binary form would: empty slices nil.
func normal(s *control.State) control.State {
	b, _ := s.MarshalBinary()
	var n control.State
	n.UnmarshalBinary(b)
	return n
}
