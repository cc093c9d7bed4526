package parse

import (
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fast paths of quick.go against the general readers they stand in
// for: wherever a fast path answers, it answers as the reference does.

// ietfSeeds adds the RateLimit (limits) or RateLimit-Policy values of the
// conformance cases and a few shapes of the fast paths.
func ietfSeeds(f *testing.F, policy bool) {
	for _, c := range seedCases(f) {
		for _, l := range c.lines {
			k := strings.ToLower(l[0])
			if policy && strings.HasSuffix(k, "policy") || !policy && (k == "ratelimit" || k == "beta-ratelimit") {
				f.Add(l[1])
			}
		}
	}
	for _, s := range []string{
		`"default";q=1200;w=300`, `"a";q=1;qu="request", "b";q=2;w=3;qu="x"`,
		`"a"; q=1; w=0`, `"a";q=1;q=2`, `"a";q=1, "a";q=0;w=1`, `"a";w=1`,
		`"default";r=1199;t=1`, `"a";r=1, "b";r=2;t=0`, `"a";t=1`, `"a";r=1;r=2`,
		`"a";r=-1`, `"a";r=1.5`, `"a";r=1234567890123456`, `"a";r=1,`, `"a";r=1 ,"b";r=2`,
		`"a\"b";r=1`, `"a";r=1;pk=:AAAA:`, `"a";r=1;x`, `"a" ;r=1`, `"a";r=1	,	"b";r=0`,
		`"a";r=1;t=2`, `"a";r=1;t=2;`, `"a";r=1;t=2.5`, `"a";r=1;t=`, `"a";r=1;t=2 `, `"a";r=1;t=2,`,
		`"a";r=123456789012345;t=1`, `"a";r=1234567890123456`, `"a";r=1;r=2`, `"a";r=1;t=1;t=2`,
		`"a";q=1;w=0`, `"a";q=1;w=1;w=2`, `"a";q=1;w=60;`, `"a";q=1;w=6.0`, `"a";q=1;q=2`, `"";q=1`,
		`"a";q=1;w=60, "b";q=2`, `"a";r=`, `"a";`, `"a"`, `"a";q=-1`,
	} {
		f.Add(s)
	}
}

func FuzzQuickLimits(f *testing.F) {
	ietfSeeds(f, false)
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := quickLimits(nil, s)
		if !ok {
			if len(got) != 0 {
				t.Fatalf("quickLimits(%q) = %v, not ok", s, got)
			}
			return
		}
		want, err := appendLimits(nil, []string{s})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("quickLimits(%q) = %+v, appendLimits: %+v, %v", s, got, want, err)
		}
	})
}

func FuzzQuickPolicies(f *testing.F) {
	ietfSeeds(f, true)
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := quickPolicies(nil, s)
		if !ok {
			if len(got) != 0 {
				t.Fatalf("quickPolicies(%q) = %v, not ok", s, got)
			}
			return
		}
		want, err := appendPolicies(nil, []string{s})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("quickPolicies(%q) = %+v, appendPolicies: %+v, %v", s, got, want, err)
		}
	})
}

func FuzzQuickDuration(f *testing.F) {
	for _, s := range []string{
		"6m0s", "1m51.535s", "1ms", "12ms", "0s", "0", "1h", "1.5h", ".5s", "1.s", "1h2m3s4ms",
		"999999h", "999999.999999999h", "1000000h", "0.0000000001s", "1mss", "1m5", "1d", "1us",
		"-1s", "+1s", "1e3s", "", ".", ".s", "1..5s", "2562047h47m16.854775807s",
		"1s.", "1m.5s", "1.5ms", "1.0000001ms", "1hm", "1sx", "1s1", "0.1234567891s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := quickDuration(s)
		if !ok {
			return
		}
		want, err := time.ParseDuration(s)
		if err != nil || got != want {
			t.Fatalf("quickDuration(%q) = %v, time.ParseDuration: %v, %v", s, got, want, err)
		}
	})
}

// FuzzQuickCount checks the quick paths of counts, resets and durations
// against the general readers, on one field line or two, and the reader
// of long numbers against that of counts.
func FuzzQuickCount(f *testing.F) {
	for _, s := range []string{
		"0", "5000", "1740830460", "1740830460000", "999999999999999999", "9999999999999999999",
		" 42", "42 ", "4,2", "1.5", "", "6m0s", "1m51.535s", "1ms", "55", "-1s", "+1s", " 1s",
		"1s,2s", "1d", ".5s", "1.s", "00000000000000000001", "1m5", "1m5s5", "s", "5 ", "1ms ",
		"Sat, 01 Mar 2025 13:00:00 +0100", "Sat, 01 Mar 2025 12:00:00 -0000",
	} {
		f.Add(s, "")
		f.Add(s, s)
	}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, a, b string) {
		vals := []string{a}
		if b != "" {
			vals = append(vals, b)
		}
		n1, ok1 := digitsOnly(a)
		if n2, ok2 := digitsOnlyLong(a); n2 != n1 || ok2 != ok1 {
			t.Fatalf("digitsOnlyLong(%q) = %d, %v; digitsOnly: %d, %v", a, n2, ok2, n1, ok1)
		}
		if n, ok := quickCount(vals); ok {
			s, sok := single(vals)
			if !sok || count(s) != n || n < 0 {
				t.Fatalf("quickCount(%q) = %d; count: %d, %v", vals, n, count(s), sok)
			}
			if got, want := deltaSeconds(s), seconds(n, 0); got != want {
				t.Fatalf("deltaSeconds(%q) = %v, want %v", s, got, want)
			}
		}
		at := func() time.Time { return base }
		d := goDuration(vals, at, base)
		if want := goDurationGeneral(vals, at, base); d != want {
			t.Fatalf("goDuration(%q) = %v; without quick paths: %v", vals, d, want)
		}
		r := reset(vals, base, base)
		if want := resetGeneral(vals, base, base); r != want {
			t.Fatalf("reset(%q) = %v; without quick path: %v", vals, r, want)
		}
		// A bare number reads by the magnitude rule in both.
		if s, ok := single(vals); ok && d != r {
			if _, _, st := decimal(s); st != numInvalid {
				t.Fatalf("goDuration(%q) = %v; reset: %v", vals, d, r)
			}
		}
	})
}

// refDecimal is decimal by strconv.
func refDecimal(s string) (whole, nano int64, status int) {
	w, frac, dot := strings.Cut(s, ".")
	if w == "" || dot && frac == "" || strings.Trim(w, "0123456789") != "" ||
		strings.Trim(frac, "0123456789") != "" {
		return 0, 0, numInvalid
	}
	if len(frac) > 9 {
		frac = frac[:9]
	}
	if frac != "" {
		n, _ := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		nano = n
	}
	n, err := strconv.ParseInt(w, 10, 64)
	if err != nil {
		return math.MaxInt64, 0, numOverflow
	}
	return n, nano, numOK
}

func FuzzDecimal(f *testing.F) {
	for _, s := range []string{
		"0", "99", "99.0", "1.5", "64.57", "1740830460", "1740830460000", "9223372036854775807",
		"9223372036854775808", "000000000000000000000000001", "99999999999999999999.5", "1.", ".5",
		"1.1234567891", "1e3", "-1", "+1", "0x10", "1_000", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, n, st := decimal(s)
		rw, rn, rst := refDecimal(s)
		if w != rw || n != rn || st != rst {
			t.Fatalf("decimal(%q) = %d, %d, %d; strconv: %d, %d, %d", s, w, n, st, rw, rn, rst)
		}
	})
}

// FuzzReader reads three responses through one Reader, the first again
// last, as a server's responses follow each other: each reads as Header
// does, whatever the Reader remembers of the one before.
func FuzzReader(f *testing.F) {
	cases := seedCases(f)
	for i, c := range cases {
		f.Add(headerBlock(c), headerBlock(cases[(i+1)%len(cases)]), int64(1740830400))
	}
	f.Fuzz(func(t *testing.T, block1, block2 string, unix int64) {
		now := time.Unix(unix, 0)
		var r, fr Reader
		for _, block := range []string{block1, block2, block1} {
			h := blockHeader(block)
			want := Header(h, now)
			got, date := r.Read(h, now, time.Time{})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Read(%q) = %v, Header: %v", block, got, want)
			}
			// ReadFresh is Read, with nothing for a response from a
			// cache, and a Date only with quotas.
			fresh, freshDate := fr.ReadFresh(h, now, time.Time{})
			wantFresh, wantFreshDate := got, date
			if len(got) == 0 || FromCache(h) {
				wantFresh, wantFreshDate = nil, time.Time{}
			}
			if !reflect.DeepEqual(fresh, wantFresh) || !freshDate.Equal(wantFreshDate) {
				t.Fatalf("ReadFresh(%q) = %v, %v; want %v, %v", block, fresh, freshDate, wantFresh, wantFreshDate)
			}
			var dates [][]string
			for k, v := range h {
				if strings.EqualFold(k, "Date") {
					dates = append(dates, v)
				}
			}
			var wantDate time.Time
			if len(dates) == 1 && len(dates[0]) > 0 {
				wantDate, _ = HTTPDate(trimOWS(dates[0][0]), now)
			}
			if len(dates) <= 1 && !date.Equal(wantDate) {
				t.Fatalf("Read(%q) Date = %v, want %v", block, date, wantDate)
			}
		}
	})
}

// varyingHeaders returns n IETF headers as BenchmarkReaderIETF reads, whose
// RateLimit and Date change from one to the next, as a server's do.
func varyingHeaders(n int) []http.Header {
	hs := make([]http.Header, n)
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range hs {
		h := plainHeader()
		h.Set("Date", start.Add(time.Duration(i/8)*time.Second).Format(http.TimeFormat))
		h.Set("Ratelimit-Policy", `"default";q=1200;w=300`)
		h.Set("Ratelimit", `"default";r=`+strconv.Itoa(1199-i%1200)+`;t=`+strconv.Itoa(1+i%300))
		hs[i] = h
	}
	return hs
}

func TestReaderVarying(t *testing.T) {
	var r Reader
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, h := range varyingHeaders(50) {
		got, _ := r.Read(h, now, time.Time{})
		if len(got) != 1 || got[0].Remaining != int64(1199-i) || got[0].Reset != time.Duration(1+i)*time.Second {
			t.Fatalf("response %d: Read = %v", i, got)
		}
	}
}

// BenchmarkReaderIETFVarying is BenchmarkReaderIETF on responses whose
// RateLimit and Date change, as a server's do: what the Reader remembers
// is only the policy, and each Date for the eight responses that share it.
func BenchmarkReaderIETFVarying(b *testing.B) {
	hs := varyingHeaders(1024)
	now := time.Now()
	var r Reader
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sinkQuotas, _ = r.Read(hs[i%len(hs)], now, time.Time{})
		i++
	}
}

// FuzzQuickRead checks the fast path of read (quickread.go) against the
// general path: on every header, with and without a Reader (through
// three responses, as in FuzzReader), fresh or not, and with the zero
// estimate or one off the response's Date, both read the same quotas and
// Date; and read appends the same quotas to a buffer of the caller's,
// with room or not, after the quota it holds.
func FuzzQuickRead(f *testing.F) {
	cases := seedCases(f)
	for i, c := range cases {
		f.Add(headerBlock(c), headerBlock(cases[(i+1)%len(cases)]), int64(1740830400), int64(0))
	}
	for i, d := range dialectBenchmarks {
		var b strings.Builder
		b.WriteString("Date: Sat, 01 Mar 2025 12:00:00 GMT\n")
		for _, l := range d.fields {
			b.WriteString(l[0] + ": " + l[1] + "\n")
		}
		f.Add(b.String(), headerBlock(cases[i%len(cases)]), int64(1740830407), int64(1500))
	}
	for _, s := range []string{
		"X-RateLimit-Limit: 60\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset-After: 1.5\nX-RateLimit-Bucket: abc",
		"X-RateLimit-Remaining: 5\nX-RateLimit-Used: 3\nX-RateLimit-Reset: 40",
		"X-RateLimit-Limit: 5000\nX-RateLimit-Remaining: 4999\nX-RateLimit-Resource: GraphQL\nX-RateLimit-Reset: 1740830460",
		"X-RateLimit-Limit: 10, 10;w=60\nX-RateLimit-Remaining: 9",
		"X-RateLimit-Limit: 10\nx-ratelimit-limit: 11\nX-RateLimit-Remaining: 9",
		"X-RateLimit-Limit:  10 \nX-RateLimit-Remaining: 9;w=60\nX-RateLimit-Reset: Sat, 01 Mar 2025 12:01:00 GMT",
		"X-RateLimit-Limit-Requests: 10\nX-RateLimit-Reset-Tokens: 1s\nX-Rate-Limit-Reset-Tokens: 5",
		"X-RateLimit-Remaining-Tokens: 100\nX-Rate-Limit-Reset-Tokens: 5\nDate: Sat, 01 Mar 2025 12:00:00 GMT",
		"X-RateLimit-Reset-Requests: 1s",
		"RateLimit-Policy: \"a\";q=1, \"b\";q=2, \"c\";q=3\nRateLimit: \"a\";r=0, \"d\";r=1",
		"RateLimit-Policy: \"a\";q=1\nRateLimit: \"a\";r=0\nRateLimit: \"b\";r=1",
		"RateLimit-Policy: \"a\";q=1 \nRateLimit: \"a\";r=0",
		"RateLimit-Policy: \"fixed window\";\"api\";q=500;w=300\nRateLimit: \"api\";r=495;t=23",
		"RateLimit-Policy: \"a\";q=1\nRateLimit: limit=1, remaining=0",
		"RateLimit-Policy: \"a\";q=1;pk=:AAAA:\nRateLimit: \"a\";r=1;pk=:AQID:\nDate: Sat, 01 Mar 2025 12:00:00 GMT\nAge: 3",
	} {
		f.Add(s, "Date: Sat, 01 Mar 2025 12:00:00 GMT", int64(1740830400), int64(-2500))
	}
	f.Fuzz(func(t *testing.T, block1, block2 string, unix, offsetMS int64) {
		now := time.Unix(unix, 0)
		var r, gr, fr, gfr, ar, afr Reader
		kept := Quota{Policy: "kept", Unit: "requests", Limit: 1, Remaining: 1, Reset: -1, Dialect: "test"}
		for i, block := range []string{block1, block2, block1} {
			h := blockHeader(block)
			var estimate time.Time
			if offsetMS != 0 {
				estimate = now.Add(time.Duration(offsetMS) * time.Millisecond)
			}
			for _, c := range []struct {
				r, ref, app *Reader
				fresh       bool
			}{{nil, nil, nil, false}, {&r, &gr, &ar, false}, {&fr, &gfr, &afr, true}} {
				got, gotDate := read(nil, h, now, estimate, c.r, c.fresh, true)
				want, wantDate := read(nil, h, now, estimate, c.ref, c.fresh, false)
				if !reflect.DeepEqual(got, want) || !gotDate.Equal(wantDate) {
					t.Fatalf("read(%q, reader %v, fresh %v) = %v, %v; general path: %v, %v",
						block, c.r != nil, c.fresh, got, gotDate, want, wantDate)
				}
				// Appended after a quota of the caller's, in a buffer
				// with room for 0, 1 or 2 more: the same quotas, and the
				// caller's kept.
				dst := append(make([]Quota, 0, 1+i), kept)
				app, appDate := read(dst, h, now, estimate, c.app, c.fresh, true)
				if len(app) != 1+len(want) || !reflect.DeepEqual(app[0], kept) || !reflect.DeepEqual(app[1:], append([]Quota{}, want...)) || !appDate.Equal(wantDate) {
					t.Fatalf("read(dst of 1 quota, %q, reader %v, fresh %v) = %v, %v; want the quota of dst, then %v, %v",
						block, c.r != nil, c.fresh, app, appDate, want, wantDate)
				}
			}
		}
	})
}

// TestDigits8 checks digits8 against a loop over the bytes, on every
// byte value in every position, after digits.
func TestDigits8(t *testing.T) {
	ref := func(s string) (v uint64, k int) {
		for k < len(s) && isDigit(s[k]) {
			v = v*10 + uint64(s[k]-'0')
			k++
		}
		return v, k
	}
	check := func(s string) {
		t.Helper()
		v, k := digits8(load8(s, 0))
		if rv, rk := ref(s); v != rv || k != rk {
			t.Fatalf("digits8(%q) = %d, %d; want %d, %d", s, v, k, rv, rk)
		}
	}
	for pos := range 8 {
		for c := range 256 {
			b := []byte("98765432")
			b[pos] = byte(c)
			check(string(b))
			for i := pos + 1; i < 8; i++ {
				b[i] = 0xFF // carries out of the bytes after
			}
			check(string(b))
		}
	}
	check("00000000")
	check("99999999")
}
