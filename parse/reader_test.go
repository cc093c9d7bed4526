package parse

import (
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReaderReadsAsHeader(t *testing.T) {
	// Through one Reader, every conformance case reads as Header does,
	// also on a second reading (from what the Reader remembers), and
	// returns the response's Date.
	var r Reader
	for _, file := range []string{"testdata/dialects.txt", "testdata/draft11.txt", "testdata/edge.txt"} {
		for _, c := range readConformance(t, file) {
			h := c.header()
			for _, now := range c.clocks(t) {
				want := formatQuotas(Header(h, now))
				var wantDate time.Time
				if d := h.Values("Date"); len(d) > 0 {
					wantDate, _ = HTTPDate(trimOWS(d[0]), now)
				}
				for range 2 {
					quotas, date := r.Read(h, now, time.Time{})
					if got := formatQuotas(quotas); got != want || !date.Equal(wantDate) {
						t.Errorf("%s: Read(%v) at %v =\n   %s\n   Date %v\nwant\n   %s\n   Date %v",
							c.source, h, now.Format(time.RFC3339), got, date, want, wantDate)
					}
				}
			}
		}
	}
}

func TestReaderOrigin(t *testing.T) {
	// The reset is at 12:01:00 by the server's clock; its Date says
	// 12:00:00. Read measures from the caller's estimate of the instant
	// the response was generated unless Date shows it wrong.
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "60")
	h.Set("X-RateLimit-Remaining", "59")
	h.Set("X-RateLimit-Reset", "1740830460")
	served := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	now := served.Add(-7 * time.Minute) // the client's clock is behind
	tests := []struct {
		name     string
		date     string // "" for none
		estimate time.Time
		want     time.Duration
	}{
		{"no estimate: from Date", "Sat, 01 Mar 2025 12:00:00 GMT", time.Time{}, time.Minute},
		{"no estimate, no Date: from now", "", time.Time{}, 8 * time.Minute},
		{"no estimate, invalid Date: from now", "soon", time.Time{}, 8 * time.Minute},
		{"estimate within Date's second", "Sat, 01 Mar 2025 12:00:00 GMT", served.Add(400 * time.Millisecond), time.Minute - 400*time.Millisecond},
		{"estimate before Date: from Date", "Sat, 01 Mar 2025 12:00:00 GMT", served.Add(-3 * time.Second), time.Minute},
		// An estimate thrown 400 days back by an earlier response's
		// Date of 1970 would read this minute as 400 days.
		{"estimate 400 days before Date: from Date", "Sat, 01 Mar 2025 12:00:00 GMT", served.Add(-400 * 24 * time.Hour), time.Minute},
		{"estimate a second after Date: from Date", "Sat, 01 Mar 2025 12:00:00 GMT", served.Add(time.Second), time.Minute},
		{"estimate an hour after Date: from Date", "Sat, 01 Mar 2025 12:00:00 GMT", served.Add(time.Hour), time.Minute},
		{"estimate, no Date", "", served.Add(2 * time.Minute), 0},
		// An estimate more than 10 minutes ahead of now, and the reset
		// more than 10 minutes past by it but at most 10 minutes ahead
		// by now: no server states such a reset as its next, and the
		// estimate is the one to doubt (package documentation).
		{"estimate an hour ahead, no Date: from now", "", served.Add(time.Hour), 8 * time.Minute},
		{"estimate, invalid Date", "Sat, 01 Mar 2025 12:00:00 UTC", served.Add(30 * time.Second), 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := h.Clone()
			if tt.date != "" {
				h.Set("Date", tt.date)
			}
			var r Reader
			quotas, date := r.Read(h, now, tt.estimate)
			if len(quotas) != 1 || quotas[0].Reset != tt.want {
				t.Errorf("Read(%v, %v) = %v, want a reset of %v", h, tt.estimate, quotas, tt.want)
			}
			if wantDate := tt.date == "Sat, 01 Mar 2025 12:00:00 GMT"; date.Equal(served) != wantDate || !wantDate && !date.IsZero() {
				t.Errorf("Read(%v) Date = %v", h, date)
			}
		})
	}
}

func TestReaderDateWithoutRateLimitFields(t *testing.T) {
	var r Reader
	h := plainHeader()
	quotas, date := r.Read(h, time.Time{}, time.Time{})
	if want := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC); quotas != nil || !date.Equal(want) {
		t.Errorf("Read(%v) = %v, %v; want nil, %v", h, quotas, date, want)
	}
	if n := testing.AllocsPerRun(100, func() { r.Read(h, time.Time{}, time.Time{}) }); n != 0 {
		t.Errorf("Read(%v) allocates %v times, want 0", h, n)
	}
	if quotas, date := r.Read(http.Header{}, time.Time{}, time.Time{}); quotas != nil || !date.IsZero() {
		t.Errorf("Read(empty) = %v, %v; want nil, zero", quotas, date)
	}
}

func TestReaderRemembers(t *testing.T) {
	// Once a Reader has read a RateLimit-Policy value and a Date, reading
	// them again allocates only the result.
	var r Reader
	h := ietfHeader()
	h.Set("Ratelimit-Policy", `"default";q=1200;w=300;pk=:YWJj:`)
	h.Set("Ratelimit", `"default";r=1199;t=1`)
	first, _ := r.Read(h, time.Time{}, time.Time{})
	if n := testing.AllocsPerRun(100, func() { r.Read(h, time.Time{}, time.Time{}) }); n != 1 {
		t.Errorf("Read(%v) again allocates %v times, want 1", h, n)
	}
	// A changed value is read anew.
	h.Set("Ratelimit-Policy", `"default";q=600;w=300`)
	got, _ := r.Read(h, time.Time{}, time.Time{})
	if len(got) != 1 || got[0].Limit != 600 || got[0].Partition != nil || first[0].Limit != 1200 {
		t.Errorf("Read(%v) after a change = %v (first %v), want a limit of 600", h, got, first)
	}
	// A value too long to remember is read every time, and right.
	long := `"default";q=5;w=1;x="` + strings.Repeat("x", maxMemo) + `"`
	h.Set("Ratelimit-Policy", long)
	for range 2 {
		if got, _ := r.Read(h, time.Time{}, time.Time{}); len(got) != 1 || got[0].Limit != 5 {
			t.Errorf("Read(a %d-byte policy) = %v, want a limit of 5", len(long), got)
		}
	}
	if m := r.policy[0].Load(); m == nil || len(m.value) > maxMemo {
		t.Errorf("Reader remembers a %d-byte value", len(m.value))
	}
}

// TestReaderDateChangedAnywhere reads a Date, then the same Date with one
// digit changed, in each position: the Reader remembers the first by
// words, and must see a change in any of them.
func TestReaderDateChangedAnywhere(t *testing.T) {
	const first = "Sat, 01 Mar 2025 12:00:00 GMT"
	for i := range len(first) {
		if !isDigit(first[i]) {
			continue
		}
		b := []byte(first)
		b[i] = '0' + (b[i]-'0'+1)%3 // another date, valid or not
		second := string(b)
		var r Reader
		for _, v := range []string{first, second, second, first} {
			want, _ := HTTPDate(v, time.Time{})
			if got := r.date([]string{v}, time.Time{}, false); !got.Equal(want) {
				t.Errorf("date(%q) after others = %v, want %v", v, got, want)
			}
		}
	}
}

func TestReaderRFC850DateDependsOnNow(t *testing.T) {
	// An RFC 850 date names its century through now: it is never
	// remembered.
	var r Reader
	h := http.Header{"Date": {"Sunday, 06-Nov-94 08:49:37 GMT"}}
	for _, tt := range []struct {
		now  time.Time
		year int
	}{
		{time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), 1994},
		{time.Date(2070, 1, 1, 0, 0, 0, 0, time.UTC), 2094},
	} {
		if _, date := r.Read(h, tt.now, time.Time{}); date.Year() != tt.year {
			t.Errorf("Read(%v) at %v: Date in %d, want %d", h, tt.now, date.Year(), tt.year)
		}
	}
}

func TestReaderConcurrent(t *testing.T) {
	// Run with -race: goroutines reading responses that change the policy
	// and the Date all get the right quotas.
	var r Reader
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				q := 100 + (g+i)%3
				h := http.Header{}
				h.Set("Date", "Sat, 01 Mar 2025 12:00:0"+string(rune('0'+i%10))+" GMT")
				h.Set("Ratelimit-Policy", `"p";q=`+itoa(q)+`;w=60`)
				h.Set("Ratelimit", `"p";r=7;t=1`)
				got, date := r.Read(h, time.Time{}, time.Time{})
				want := []Quota{{Policy: "p", Unit: "requests", Limit: int64(q), Window: time.Minute, Remaining: 7, Reset: time.Second, Dialect: "ietf"}}
				if !reflect.DeepEqual(got, want) || date.Second() != i%10 {
					t.Errorf("Read(%v) = %v, %v; want %v", h, got, date, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestSecondAfter(t *testing.T) {
	base := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	mono := time.Now()
	for _, a := range []time.Time{
		base, base.Add(999 * time.Millisecond), base.Add(time.Second), base.Add(time.Second - 1),
		base.Add(time.Second + 1), base.Add(-time.Second), base.Add(-1500 * time.Millisecond),
		base.Add(1500 * time.Millisecond), base.Add(time.Hour), base.Add(-time.Hour),
		mono, mono.Add(time.Second), {}, time.Unix(1<<62, 0), time.Unix(-1<<62, 0),
		time.Date(292277026596, 12, 4, 15, 30, 7, 999999999, time.UTC), time.Date(-292277022399, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		for _, b := range []time.Time{base, base.Add(500 * time.Millisecond), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)} {
			if got, want := secondAfter(a, b), a.Sub(b) >= time.Second; got != want {
				t.Errorf("secondAfter(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
}

func TestReaderReadFresh(t *testing.T) {
	// ReadFresh is Read, with no quotas when FromCache reports the
	// response came from a cache: it finds Age in the same pass.
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	base := func() http.Header {
		return http.Header{
			"Date":             {"Fri, 02 Jan 2026 03:04:05 GMT"},
			"Ratelimit-Policy": {`"api";q=100;w=60`},
			"Ratelimit":        {`"api";r=50;t=30`},
		}
	}
	for _, age := range [][]string{nil, {"5"}, {"0"}, {"00"}, {"x"}, {" 7 "}, {"3, 4"}, {"0", "9"}, {}, {""}} {
		for _, name := range []string{"Age", "age", "AGE"} {
			for _, fields := range []bool{true, false} {
				h := base()
				if !fields {
					h = http.Header{"Date": h["Date"], "Content-Type": {"text/plain"}}
				}
				if age != nil {
					h[name] = age
				}
				var r, r2 Reader
				want, wantDate := r.Read(h, now, time.Time{})
				if FromCache(h) || len(want) == 0 {
					want, wantDate = nil, time.Time{}
				}
				got, date := r2.ReadFresh(h, now, time.Time{})
				if formatQuotas(got) != formatQuotas(want) || !date.Equal(wantDate) || (got == nil) != (want == nil) {
					t.Errorf("ReadFresh(%v) = %s, %v; want %s, %v", h, formatQuotas(got), date, formatQuotas(want), wantDate)
				}
			}
		}
	}
}

func TestReaderReadFreshFromCache(t *testing.T) {
	// A response from a cache is dropped before its fields are read.
	var r Reader
	now := time.Date(2025, 3, 1, 12, 0, 7, 0, time.UTC)
	h := http.Header{"Age": {"5"}, "X-Ratelimit-Remaining": {"4"}}
	if got, _ := r.ReadFresh(h, now, time.Time{}); got != nil {
		t.Fatalf("ReadFresh(%v) = %v, want none", h, got)
	}
	if n := testing.AllocsPerRun(100, func() { r.ReadFresh(h, now, time.Time{}) }); n != 0 {
		t.Errorf("ReadFresh(%v) allocates %v times, want 0", h, n)
	}
}

// Field names are matched case-insensitively, Age's too: a hand-built
// header with a lower-case "age" came from a cache, and ReadFresh reads
// no quota from it. Before, only "Age" was looked up, and the stale
// quotas were returned.
func TestReadFreshLowerCaseAge(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, name := range []string{"age", "AGE"} {
		h := http.Header{
			name:               {"100"},
			"ratelimit-policy": {`"api";q=100;w=60`},
			"ratelimit":        {`"api";r=50;t=30`},
		}
		if !FromCache(h) {
			t.Errorf("FromCache(%v) = false, want true (%s: 100 is a positive Age)", h, name)
		}
		var r Reader
		if got, _ := r.ReadFresh(h, now, time.Time{}); got != nil {
			t.Errorf("ReadFresh(%v) = %s, want none: the response came from a cache", h, formatQuotas(got))
		}
	}
}

// AppendFresh reads the sets of fields servers send most into the caller's
// buffer, with no allocation when it has room, the same quotas as
// ReadFresh; without room, it appends as append does. Before, every read
// with quotas allocated its result (one allocation per response).
func TestAppendFreshAllocatesNothing(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 7, 0, time.UTC)
	for _, d := range dialectBenchmarks {
		switch d.name {
		case "ietf", "github", "openai":
		default:
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			h := http.Header{"Date": {"Sat, 01 Mar 2025 12:00:00 GMT"}}
			for _, f := range d.fields {
				h.Set(f[0], f[1])
			}
			var r Reader
			want, wantDate := r.ReadFresh(h, now, time.Time{})
			if len(want) == 0 {
				t.Fatalf("ReadFresh(%v) read no quota", h)
			}
			var buf [2]Quota
			got, date := r.AppendFresh(buf[:0], h, now, time.Time{})
			if !reflect.DeepEqual(got, want) || !date.Equal(wantDate) {
				t.Fatalf("AppendFresh(%v) = %v, %v; ReadFresh: %v, %v", h, got, date, want, wantDate)
			}
			if &got[0] != &buf[0] {
				t.Errorf("AppendFresh did not read into the buffer it had room in")
			}
			if n := testing.AllocsPerRun(100, func() { r.AppendFresh(buf[:0], h, now, time.Time{}) }); n != 0 {
				t.Errorf("AppendFresh(%v) allocates %v times, want 0", h, n)
			}
			// No room: a new array, the caller's quota first.
			first := Quota{Policy: "mine", Limit: 1, Remaining: 1, Reset: -1}
			dst := []Quota{first}
			got, _ = r.AppendFresh(dst[:1:1], h, now, time.Time{})
			if len(got) != 1+len(want) || !reflect.DeepEqual(got[0], first) || !reflect.DeepEqual(got[1:], want) {
				t.Errorf("AppendFresh(dst of 1, %v) = %v; want %v then %v", h, got, first, want)
			}
		})
	}
}
