package parse

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
)

// sfvSeeds are fields of every RFC 9651 type, valid and not, on which the
// scanner must agree with httpsfv; they seed FuzzSFV too.
var sfvSeeds = []string{
	``, ` `, `  `, `,`, ` , `, `a,`, `a, `, `a ,b`, "a\t,\tb", "\ta", "a\t", `a,,b`,
	// Integers and Decimals.
	`1`, `-1`, `-0`, `-`, `--1`, `0001`, `999999999999999`, `1000000000000000`,
	`-999999999999999`, `1.5`, `1.`, `.5`, `1.234`, `1.2345`, `123456789012.123`,
	`1234567890123.1`, `123456789012.1234`, `1.2.3`, `1..2`, `-1.5`, `1e5`, `0x10`,
	// Strings.
	`"a"`, `""`, `"a\"b"`, `"a\\b"`, `"a\b"`, `"a\`, `"a`, "\"a\x7f\"", "\"a\x1f\"",
	"\"\xc3\xa9\"", `"a" "b"`, `"a";`, `"a";q`, `"a";Q=1`, `"a"; q=1`, `"a";q =1`,
	`"a";q= 1`, `"a" ;q=1`, `"a";*x=1`, `"a";x*-_.9=1`, `"a";9=1`,
	// Tokens.
	`a`, `*`, `A`, `a:b/c`, `a!#$%&'*+-.^_|~`, "a`b", `a"`, `a(`,
	// Byte Sequences.
	`::`, `:YQ==:`, `:YWI=:`, `:YWJj:`, `:YQ=:`, `:YQ:`, `:Y===:`, `:====:`, `:YQ==YWJj:`,
	`:YW=j:`, `:YR==:`, `:a+/=:`, `:a b:`, `:YQ==`, `:-_==:`,
	// Booleans.
	`?0`, `?1`, `?2`, `?`, `?01`, `"a";x=?1`, `"a";x=?`,
	// Dates.
	`@0`, `@-1`, `@1659578233`, `@1.5`, `@`, `@a`, `@1000000000000000`, `@999999999999999`,
	// Display Strings.
	`%"a"`, `%""`, `%"%c3%a9"`, `%"%C3%A9"`, `%"%c3"`, `%"%c3a"`, `%"%e2%82%ac"`, `%"%ff"`,
	`%"%"`, `%"%2"`, `%"%22"`, `%"a\"`, `%a`, `%`, "%\"\xc3\xa9\"", `%"%ed%a0%80"`,
	`%"%f0%9f%98%80"`, `%"%f0%9f%98"`, `%"%c3%c3"`, `%"%e0%80%80"`,
	// Inner Lists.
	`()`, `( )`, `(1 2)`, `(1  2)`, `( 1 2 )`, `(1,2)`, `(1`, `(1 2);a=1`, `(1;a=1 2;b)`,
	`(1)(2)`, `((1))`, "(1\t2)", `(1 "a" b :YQ==: ?1 @1 %"a" 1.5)`,
	// RateLimit fields.
	`"default";q=100;w=60`, `"a";q=1;q=2`, `"a";q=-1;w=0;q=5`, `"a";w=0;q=-1`,
	`"a";qu="tokens";q=5`, `"a";qu="";q=5`, `"a";qu=tokens;q=5`, `"a";qu="re\"q";q=5`,
	`"a";q=1;pk=:YQ==:`, `"a";q=1;pk="x"`, `"a";q=1.0`, `"a";q=?1`, `"a";q`,
	`"a";r=1;t=2;pk=:YQ==:`, `"a";r=1, "a";r=0`, `"a";r=1;t=1, "a";r=1;t=5`,
	`"a\\b";q=1, "a\\b";q=0`, `"a\"";r=1, "a\"";r=0`, `a;q=1`, `1;q=1`, `(1);q=1`,
	`"a";q=1, (1)`, `"a";q=1, "b";x, "c";q=1;w=60;extra="x";ok`,
	// Legacy unnamed policies and the draft-07 Dictionary.
	`100;w=60`, `100;w=60, 1000;w=3600;name="day"`, `100;w=0`, `100;name=day`,
	`limit=100, remaining=25, reset=5`, `limit=100, limit=5`, `limit=(1)`, `limit`,
	`limit=100;x=1, remaining=-1`, `a=1, b, c=(1 2);d`, `limit=100,`, `A=1`,
}

func TestSFVAgreesWithHTTPSFV(t *testing.T) {
	for _, s := range sfvSeeds {
		for _, values := range [][]string{{s}, {s, s}, {s, `"z";q=1;r=1`}} {
			ps, err := Policies(values)
			rps, rerr := refPolicies(values)
			if !sameResult(ps, err, rps, rerr) {
				t.Errorf("Policies(%q) = %#v, %v; httpsfv: %#v, %v", values, ps, err, rps, rerr)
			}
			ls, err := Limits(values)
			rls, rerr := refLimits(values)
			if !sameResult(ls, err, rls, rerr) {
				t.Errorf("Limits(%q) = %#v, %v; httpsfv: %#v, %v", values, ls, err, rls, rerr)
			}
			if got, want := unnamedPolicies(values), refUnnamedPolicies(values); !reflect.DeepEqual(got, want) {
				t.Errorf("unnamedPolicies(%q) = %#v; httpsfv: %#v", values, got, want)
			}
			q, ok := dictionary(values)
			rq, rok := refDictionary(values)
			if ok != rok || ok && !reflect.DeepEqual(q, rq) {
				t.Errorf("dictionary(%q) = %v, %v; httpsfv: %v, %v", values, q, ok, rq, rok)
			}
		}
		_, lerr := refList([]string{s})
		if got := validList(s); got != (lerr == nil) {
			t.Errorf("validList(%q) = %v; httpsfv: %v", s, got, lerr)
		}
		_, derr := refDict([]string{s})
		if got := validDictionary(s); got != (derr == nil) {
			t.Errorf("validDictionary(%q) = %v; httpsfv: %v", s, got, derr)
		}
	}
}

func TestValidBase64(t *testing.T) {
	// Every string of up to 8 characters over a few base64 characters and
	// "=": validBase64 must agree with the decoder httpsfv uses.
	const alphabet = "AQ/="
	var walk func(s string)
	walk = func(s string) {
		_, err := base64.StdEncoding.DecodeString(s)
		if got := validBase64(s); got != (err == nil) {
			t.Errorf("validBase64(%q) = %v; DecodeString: %v", s, got, err)
		}
		if len(s) == 8 {
			return
		}
		for _, c := range alphabet {
			walk(s + string(c))
		}
	}
	walk("")
}

func TestUTF8Check(t *testing.T) {
	// Every one- and two-byte sequence, and the three- and four-byte
	// sequences from a set of interesting bytes.
	bytes := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xff}
	check := func(s []byte) {
		var u utf8Check
		ok := true
		for _, b := range s {
			ok = ok && u.add(b)
		}
		ok = ok && u.n == 0
		if want := strings.ToValidUTF8(string(s), "\uFFFD") == string(s); ok != want {
			t.Errorf("utf8Check(% x) = %v, want %v", s, ok, want)
		}
	}
	for a := range 256 {
		check([]byte{byte(a)})
		for b := range 256 {
			check([]byte{byte(a), byte(b)})
		}
	}
	for _, a := range bytes {
		for _, b := range bytes {
			for _, c := range bytes {
				check([]byte{a, b, c})
				for _, d := range bytes {
					check([]byte{a, b, c, d})
				}
			}
		}
	}
}

func TestPoliciesCap(t *testing.T) {
	// Identifiers past the first maxItems are dropped, but a later item
	// repeating a kept identifier still competes with it, and a later
	// malformed item still makes the field malformed.
	var b strings.Builder
	for i := range 2 * maxItems {
		b.WriteString(`"p` + itoa(i) + `";q=100;w=60, `)
	}
	b.WriteString(`"p0";q=1;w=60`)
	ps, err := Policies([]string{b.String()})
	if err != nil || len(ps) != maxItems || ps[0].Quota != 1 || ps[maxItems-1].Name != "p"+itoa(maxItems-1) {
		t.Errorf("Policies(%d members) = %d policies, first %+v, %v; want %d, the first with q=1",
			2*maxItems+1, len(ps), ps[0], err, maxItems)
	}
	if ps, err := Policies([]string{b.String() + `, "late";w=60`}); err == nil || ps != nil {
		t.Errorf("Policies(... \"late\";w=60) = %v, %v; want an error", ps, err)
	}
	ls, err := Limits([]string{strings.ReplaceAll(strings.ReplaceAll(b.String(), "q=", "r="), "w=", "t=")})
	if err != nil || len(ls) != maxItems || ls[0].Remaining != 1 {
		t.Errorf("Limits(%d members) = %d limits, %v; want %d, the first with r=1", 2*maxItems+1, len(ls), err, maxItems)
	}
}

func TestLongFieldsAgree(t *testing.T) {
	// Fields longer than maxScan members, whose names are found by a map,
	// with names repeating, read as httpsfv reads them.
	for _, names := range []int{1, 20, maxItems, 50, 300} {
		var p, l strings.Builder
		for i := range 400 {
			if i > 0 {
				p.WriteString(", ")
				l.WriteString(", ")
			}
			name := `"n` + itoa(i*7%names) + [...]string{`"`, `\\"`}[i%2]
			q, w := itoa(1000-i*13%997), itoa(1+i%5)
			p.WriteString(name + ";q=" + q + ";w=" + w + ";pk=:" + [...]string{"", "YQ==", "YWI="}[i%3] + ":")
			l.WriteString(name + ";r=" + q + ";t=" + w)
		}
		for _, s := range []string{p.String(), l.String()} {
			values := []string{s}
			ps, err := Policies(values)
			rps, rerr := refPolicies(values)
			if !sameResult(ps, err, rps, rerr) {
				t.Errorf("Policies(%d names) = %v, %v; httpsfv: %v, %v", names, ps, err, rps, rerr)
			}
			ls, err := Limits(values)
			rls, rerr := refLimits(values)
			if !sameResult(ls, err, rls, rerr) {
				t.Errorf("Limits(%d names) = %v, %v; httpsfv: %v, %v", names, ls, err, rls, rerr)
			}
			if n := len(ps) + len(ls); n < min(names, maxItems) || n > maxItems {
				t.Errorf("Policies and Limits(%d names) = %d and %d items, want %d to %d in all",
					names, len(ps), len(ls), min(names, maxItems), maxItems)
			}
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
