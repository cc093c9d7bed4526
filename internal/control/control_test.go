package control_test

import (
	"fmt"
	"reflect"
	"regexp"
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
			if p := differs(reflect.ValueOf(&s).Elem(), reflect.ValueOf(&back).Elem(), "State"); p != "" {
				t.Fatalf("%s: round trip lost %s:\n%+v\n%+v", tab.Name, p, s, back)
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

// differs returns the path of the first field in which a and b differ,
// reading unexported fields too, and "" when none does; a nil slice and an
// empty one are alike, as the binary form keeps no difference between
// them. Unlike comparing both through normal, which passes a field the
// encoder drops (both sides lose it), it compares the state itself.
func differs(a, b reflect.Value, path string) string {
	if a.Kind() != b.Kind() {
		return path
	}
	switch a.Kind() {
	case reflect.Struct:
		if a.Type().Name() == "startLog" {
			return differentLogs(a, b, path)
		}
		for i := range a.NumField() {
			f := path + "." + a.Type().Field(i).Name
			switch indexless.ReplaceAllString(f, "[*]") {
			case "State.leases.slot": // a memo of the last slot counted (leases.add)
				continue
			case "State.learn.idle": // set by each Acquire for its own use, never kept
				continue
			case "State.costs.units[*].declared", "State.costs.quotas[*].cut":
				// Kept only while the units or quotas are full, where
				// they are read (see costs.flags).
				continue
			case "State.learn.lulls": // the first nLulls only
				n := int(a.FieldByName("nLulls").Uint())
				if p := differs(a.Field(i).Slice(0, n), b.Field(i).Slice(0, n), f); p != "" {
					return p
				}
				continue
			}
			if p := differs(a.Field(i), b.Field(i), f); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return path
		}
		for i := range a.Len() {
			if p := differs(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path
			}
			return ""
		}
		return differs(a.Elem(), b.Elem(), path)
	case reflect.Map:
		if a.Len() != b.Len() {
			return path
		}
		for _, k := range a.MapKeys() {
			v := b.MapIndex(k)
			if !v.IsValid() {
				return fmt.Sprintf("%s[%v]", path, k)
			}
			if p := differs(a.MapIndex(k), v, fmt.Sprintf("%s[%v]", path, k)); p != "" {
				return p
			}
		}
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return path
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return path
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return path
		}
	case reflect.Float32, reflect.Float64:
		if a.Float() != b.Float() {
			return path
		}
	case reflect.String:
		if a.String() != b.String() {
			return path
		}
	default:
		return path + " (" + a.Kind().String() + ": not compared)"
	}
	return ""
}

// indexless matches the indices of a path of differs.
var indexless = regexp.MustCompile(`\[\d+\]`)

// differentLogs is differs for two start logs: their entries in order and
// their total, wherever each ring keeps them.
func differentLogs(a, b reflect.Value, path string) string {
	n := a.FieldByName("n").Int()
	if n != b.FieldByName("n").Int() || a.FieldByName("total").Int() != b.FieldByName("total").Int() {
		return path
	}
	for i := range n {
		ea, eb := entry(a, i), entry(b, i)
		if p := differs(ea, eb, fmt.Sprintf("%s[%d]", path, i)); p != "" {
			return p
		}
	}
	return ""
}

// entry returns the i-th oldest entry of the start log l.
func entry(l reflect.Value, i int64) reflect.Value {
	ring := l.FieldByName("ring")
	return ring.Index(int((l.FieldByName("head").Int() + i) % int64(ring.Len())))
}
