package parse

import (
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// policyTest is a case of TestPolicies, also a seed of FuzzPolicies.
type policyTest struct {
	name   string
	values []string
	want   []Policy
	member int    // for errors: FieldError.Member
	param  string // for errors: FieldError.Param
	err    error  // nil, ErrSyntax, ErrMissing or ErrInvalid
}

func policyTests() []policyTest {
	return []policyTest{
		{name: "absent", values: nil},
		{name: "empty", values: []string{""}},
		{name: "§3 example", values: []string{`"burst";q=100;w=60,"daily";q=1000;w=86400`}, want: []Policy{
			{Name: "burst", Quota: 100, Unit: "requests", Window: time.Minute},
			{Name: "daily", Quota: 1000, Unit: "requests", Window: 24 * time.Hour},
		}},
		{name: "content-bytes and pk", values: []string{`"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:`}, want: []Policy{
			{Name: "peruser", Quota: 65535, Unit: "content-bytes", Window: 10 * time.Second, Partition: decode64("sdfjLJUOUA==")},
		}},
		{name: "concurrent-requests", values: []string{`"c";q=5;qu="concurrent-requests"`}, want: []Policy{{Name: "c", Quota: 5, Unit: "concurrent-requests"}}},
		{name: "DESIGN.md §1.4 request is requests", values: []string{`"a";q=5;qu="request"`}, want: []Policy{{Name: "a", Quota: 5, Unit: "requests"}}},
		{name: "DESIGN.md §1.3 unknown unit kept and marked", values: []string{`"a";q=5;qu="tokens"`}, want: []Policy{{Name: "a", Quota: 5, Unit: "tokens", UnknownUnit: true}}},
		{name: "no window", values: []string{`"a";q=5`}, want: []Policy{{Name: "a", Quota: 5, Unit: "requests"}}},
		{name: "q=0", values: []string{`"a";q=0;w=1`}, want: []Policy{{Name: "a", Unit: "requests", Window: time.Second}}},
		{name: "unknown parameters are comments", values: []string{`"a";q=5;burst=1000;acme-x="y";flag`}, want: []Policy{{Name: "a", Quota: 5, Unit: "requests"}}},
		{name: "two field lines", values: []string{`"a";q=1`, `"b";q=2`}, want: []Policy{{Name: "a", Quota: 1, Unit: "requests"}, {Name: "b", Quota: 2, Unit: "requests"}}},
		{name: "space after semicolon", values: []string{`"a"; q=5; w=60`}, want: []Policy{{Name: "a", Quota: 5, Unit: "requests", Window: time.Minute}}},
		{name: "duplicate parameter: last wins", values: []string{`"a";q=5;q=7`}, want: []Policy{{Name: "a", Quota: 7, Unit: "requests"}}},
		{name: "DESIGN.md §1.6 lowest ratio kept", values: []string{`"a";q=100;w=10,"b";q=1,"a";q=100;w=60`}, want: []Policy{
			{Name: "a", Quota: 100, Unit: "requests", Window: time.Minute},
			{Name: "b", Quota: 1, Unit: "requests"},
		}},
		{name: "DESIGN.md §1.6 first kept on a tie", values: []string{`"a";q=10;w=10;pk=:AQ==:,"a";q=60;w=60`}, want: []Policy{
			{Name: "a", Quota: 10, Unit: "requests", Window: 10 * time.Second, Partition: []byte{1}},
		}},
		{name: "DESIGN.md §1.6 lowest q without windows", values: []string{`"a";q=10,"a";q=5;w=60`}, want: []Policy{{Name: "a", Quota: 5, Unit: "requests", Window: time.Minute}}},
		{name: "huge window saturates", values: []string{`"a";q=1;w=999999999999999`}, want: []Policy{{Name: "a", Quota: 1, Unit: "requests", Window: math.MaxInt64}}},
		{name: "empty pk", values: []string{`"a";q=1;pk=::`}, want: []Policy{{Name: "a", Quota: 1, Unit: "requests", Partition: []byte{}}}},

		{name: "DESIGN.md §1.1 token name", values: []string{`burst;q=100;w=60`}, member: 0, err: ErrInvalid},
		{name: "DESIGN.md §1.1 integer name", values: []string{`100;w=60`}, member: 0, err: ErrInvalid},
		{name: "DESIGN.md §1.1 second member", values: []string{`"a";q=1, b;q=2`}, member: 1, err: ErrInvalid},
		{name: "inner list", values: []string{`("a" "b");q=1`}, member: 0, err: ErrInvalid},
		{name: "missing q", values: []string{`"a";w=60`}, member: 0, param: "q", err: ErrMissing},
		{name: "negative q", values: []string{`"a";q=-1`}, member: 0, param: "q", err: ErrInvalid},
		{name: "decimal q", values: []string{`"a";q=1.5`}, member: 0, param: "q", err: ErrInvalid},
		{name: "string q", values: []string{`"a";q="5"`}, member: 0, param: "q", err: ErrInvalid},
		{name: "boolean q", values: []string{`"a";q`}, member: 0, param: "q", err: ErrInvalid},
		{name: "w=0", values: []string{`"a";q=1;w=0`}, member: 0, param: "w", err: ErrInvalid},
		{name: "negative w", values: []string{`"a";q=1;w=-60`}, member: 0, param: "w", err: ErrInvalid},
		{name: "decimal w", values: []string{`"a";q=1;w=0.5`}, member: 0, param: "w", err: ErrInvalid},
		{name: "empty qu", values: []string{`"";q=0;qu=""`}, member: 0, param: "qu", err: ErrInvalid},
		{name: "token qu", values: []string{`"a";q=1;qu=requests`}, member: 0, param: "qu", err: ErrInvalid},
		{name: "string pk", values: []string{`"a";q=1;pk="user"`}, member: 0, param: "pk", err: ErrInvalid},
		{name: "trailing comma", values: []string{`"a";q=1,`}, member: -1, err: ErrSyntax},
		{name: "empty line among lines", values: []string{`"a";q=1`, ``, `"b";q=2`}, member: -1, err: ErrSyntax},
		{name: "space before semicolon", values: []string{`"a" ;q=1`}, member: -1, err: ErrSyntax},
		{name: "upper-case key", values: []string{`"a";Q=1`}, member: -1, err: ErrSyntax},
		{name: "16-digit integer", values: []string{`"a";q=1234567890123456`}, member: -1, err: ErrSyntax},
		{name: "Hugging Face doubled name is not RFC 9651", values: []string{`"fixed window";"api";q=500;w=300`}, member: -1, err: ErrSyntax},
		{name: "httpsfv v1.1.0 panic input", values: []string{`"a";q=@`}, member: -1, err: ErrSyntax},
		{name: "non-ASCII", values: []string{"\"a\u00e9\";q=1"}, member: -1, err: ErrSyntax},
	}
}

func TestPolicies(t *testing.T) {
	tests := policyTests()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Policies(tt.values)
			if tt.err == nil {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Policies(%q) = %+v, %v, want %+v, nil", tt.values, got, err, tt.want)
				}
				return
			}
			checkFieldError(t, "Policies", tt.values, got == nil, err, policyField, tt.member, tt.param, tt.err)
		})
	}
}

// limitTest is a case of TestLimits, also a seed of FuzzLimits.
type limitTest struct {
	name   string
	values []string
	want   []Limit
	member int    // for errors: FieldError.Member
	param  string // for errors: FieldError.Param
	err    error  // nil, ErrSyntax, ErrMissing or ErrInvalid
}

func limitTests() []limitTest {
	return []limitTest{
		{name: "absent", values: nil},
		{name: "§4 example", values: []string{`"default";r=50;t=30`}, want: []Limit{{Name: "default", Remaining: 50, Reset: 30 * time.Second}}},
		{name: "no t", values: []string{`"default";r=999;pk=:dHJpYWwxMjEzMjM=:`}, want: []Limit{{Name: "default", Remaining: 999, Reset: -1, Partition: []byte("trial121323")}}},
		{name: "t=0 and r=0", values: []string{`"a";r=0;t=0`}, want: []Limit{{Name: "a", Reset: 0}}},
		{name: "unknown parameters are comments", values: []string{`"sliding";q=12;r=6;t=1`}, want: []Limit{{Name: "sliding", Remaining: 6, Reset: time.Second}}},
		{name: "two items", values: []string{`"a";r=1;t=2, "b";r=3`}, want: []Limit{{Name: "a", Remaining: 1, Reset: 2 * time.Second}, {Name: "b", Remaining: 3, Reset: -1}}},
		{name: "DESIGN.md §1.6 lowest r kept", values: []string{`"a";r=5;t=1,"a";r=2;t=9,"a";r=3`}, want: []Limit{{Name: "a", Remaining: 2, Reset: 9 * time.Second}}},
		{name: "DESIGN.md §1.6 longer t on equal r", values: []string{`"a";r=2;t=1,"a";r=2;t=9`}, want: []Limit{{Name: "a", Remaining: 2, Reset: 9 * time.Second}}},
		{name: "maximal number then delimiter", values: []string{`"p";r=999999999999999;t=1`}, want: []Limit{{Name: "p", Remaining: 999999999999999, Reset: time.Second}}},
		{name: "huge t saturates", values: []string{`"p";r=1;t=999999999999999`}, want: []Limit{{Name: "p", Remaining: 1, Reset: math.MaxInt64}}},

		{name: "DESIGN.md §1.1 token name", values: []string{`default;r=50;t=30`}, member: 0, err: ErrInvalid},
		{name: "missing r", values: []string{`"a";t=1`}, member: 0, param: "r", err: ErrMissing},
		{name: "negative r", values: []string{`"a";r=-1`}, member: 0, param: "r", err: ErrInvalid},
		{name: "decimal r", values: []string{`"a";r=1.0`}, member: 0, param: "r", err: ErrInvalid},
		{name: "negative t", values: []string{`"a";r=1;t=-1`}, member: 0, param: "t", err: ErrInvalid},
		{name: "string t", values: []string{`"a";r=1;t="1"`}, member: 0, param: "t", err: ErrInvalid},
		{name: "token pk", values: []string{`"a";r=1;pk=abc`}, member: 0, param: "pk", err: ErrInvalid},
		{name: "inner list", values: []string{`"a";r=1, ("b");r=1`}, member: 1, err: ErrInvalid},
		{name: "draft-07 dictionary", values: []string{`limit=100, remaining=25, reset=5`}, member: -1, err: ErrSyntax},
		{name: "display string r", values: []string{`"a";r=%"x"`}, member: 0, param: "r", err: ErrInvalid},
		{name: "unterminated string", values: []string{`"a;r=1`}, member: -1, err: ErrSyntax},
	}
}

func TestLimits(t *testing.T) {
	tests := limitTests()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Limits(tt.values)
			if tt.err == nil {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Limits(%q) = %+v, %v, want %+v, nil", tt.values, got, err, tt.want)
				}
				return
			}
			checkFieldError(t, "Limits", tt.values, got == nil, err, limitField, tt.member, tt.param, tt.err)
		})
	}
}

// decode64 decodes standard base64 in a test table; s must be valid.
func decode64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func checkFieldError(t *testing.T, fn string, values []string, gotNil bool, err error, field string, member int, param string, want error) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) || !errors.Is(err, ErrMalformed) || !errors.Is(err, want) {
		t.Fatalf("%s(%q) error = %v, want a *FieldError matching ErrMalformed and %v", fn, values, err, want)
	}
	if !gotNil {
		t.Errorf("%s(%q) returned items with error %v", fn, values, err)
	}
	if fe.Field != field || fe.Member != member || fe.Param != param {
		t.Errorf("%s(%q) error = %+v, want Field %q, Member %d, Param %q", fn, values, fe, field, member, param)
	}
	if err.Error() == "" {
		t.Errorf("%s(%q) error has no message", fn, values)
	}
}

func TestFieldErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *FieldError
		want string
	}{
		{"syntax", &FieldError{Field: "RateLimit", Member: -1, Err: ErrSyntax}, "parse: RateLimit: not a structured field list"},
		{"param", &FieldError{Field: "RateLimit-Policy", Member: 2, Param: "w", Err: ErrInvalid}, "parse: RateLimit-Policy: member 2: parameter w: invalid value"},
		{"member", &FieldError{Field: "RateLimit", Member: 0, Err: ErrInvalid}, "parse: RateLimit: member 0: invalid value"},
		{"no cause", &FieldError{Field: "RateLimit", Member: -1}, "parse: RateLimit: malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("(%+v).Error() = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// Policies: "When an identifier repeats, the most restrictive item is
// kept, the one with the lowest q/w", whatever the order of the members.
// The cross products q1*w2 < q2*w1, of windows in nanoseconds, were
// compared in float64, which rounds them once they pass 2^53.
func TestStricterExact(t *testing.T) {
	// a: 909000000000001 per 101 s = 9000000000000.00990... per second
	// b: 900000000000001 per 100 s = 9000000000000.01 per second
	// a is stricter (909000000000001*100 < 900000000000001*101).
	for _, field := range []string{
		`"x";q=909000000000001;w=101, "x";q=900000000000001;w=100`,
		`"x";q=900000000000001;w=100, "x";q=909000000000001;w=101`,
	} {
		ps, err := Policies([]string{field})
		if err != nil || len(ps) != 1 {
			t.Fatalf("Policies(%q) = %v, %v", field, ps, err)
		}
		if ps[0].Quota != 909000000000001 {
			t.Errorf("Policies(%q) kept q=%d w=%v; want the lower q/w, q=909000000000001 w=1m41s", field, ps[0].Quota, ps[0].Window)
		}
	}
	// Header reads the same field through the same rule.
	h := http.Header{"Ratelimit-Policy": {`"x";q=900000000000001;w=100, "x";q=909000000000001;w=101`}}
	if qs := Header(h, time.Unix(1740830400, 0)); len(qs) != 1 || qs[0].Limit != 909000000000001 {
		t.Errorf("Header(%v) = %v; want limit 909000000000001", h, qs)
	}
}
