package serverclock

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/politehttp/polite/parse"
)

func TestBehind(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		off  time.Duration
		want bool
	}{
		{0, false}, {-Off, false}, {-Off - time.Second, true}, {-5 * time.Hour, true}, {5 * time.Hour, false},
	} {
		if got := Behind(now.Add(tt.off), now); got != tt.want {
			t.Errorf("Behind(now%+v) = %t, want %t", tt.off, got, tt.want)
		}
	}
}

// Under a Date 15 minutes behind, a request sent at 0: an instant read as
// due from now (fromNow 0) is read from the Date when more than Slack
// before the request went; read alike from both, it is left.
func TestRevise(t *testing.T) {
	sent := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	date := sent.Add(-15 * time.Minute)
	for _, tt := range []struct {
		name              string
		fromNow, fromDate time.Duration
		want              time.Duration
	}{
		{"30 s before sent", 0, 14*time.Minute + 30*time.Second, 14*time.Minute + 30*time.Second},
		{"3 s before sent", 0, 15*time.Minute - 3*time.Second, 15*time.Minute - 3*time.Second},
		{"2 s before sent", 0, 15*time.Minute - 2*time.Second, 0},
		{"1 s before sent", 0, 15*time.Minute - time.Second, 0},
		{"after sent", 4 * time.Second, 15*time.Minute + 4*time.Second, 4 * time.Second},
		{"a delay", 30 * time.Second, 30 * time.Second, 30 * time.Second},
		{"measured from an estimate", 14*time.Minute + 29*time.Second + 500*time.Millisecond, 14*time.Minute + 30*time.Second, 14*time.Minute + 29*time.Second + 500*time.Millisecond},
		{"past by the Date too", 0, 0, 0},
	} {
		if got := Revise(tt.fromNow, tt.fromDate, date, sent); got != tt.want {
			t.Errorf("%s: Revise(%v, %v) = %v, want %v", tt.name, tt.fromNow, tt.fromDate, got, tt.want)
		}
	}
}

// Readings that do not report the same quotas leave them as they are.
func TestQuotasMisaligned(t *testing.T) {
	sent := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	date := sent.Add(-15 * time.Minute)
	q := func(unit string, reset time.Duration) parse.Quota {
		return parse.Quota{Unit: unit, Limit: 20, Remaining: 0, Reset: reset}
	}
	for _, tt := range []struct {
		name  string
		again []parse.Quota
	}{
		{"fewer", []parse.Quota{q("requests", 14*time.Minute)}},
		{"another unit", []parse.Quota{q("requests", 14*time.Minute), q("bytes", 14*time.Minute)}},
	} {
		quotas := []parse.Quota{q("requests", 0), q("tokens", 0)}
		Quotas(quotas, tt.again, date, sent)
		if quotas[0].Reset != 0 || quotas[1].Reset != 0 {
			t.Errorf("%s: resets %v and %v, want both left at 0", tt.name, quotas[0].Reset, quotas[1].Reset)
		}
	}
	quotas := []parse.Quota{q("requests", 0), q("tokens", 0)}
	Quotas(quotas, []parse.Quota{q("requests", 14*time.Minute), q("tokens", 15*time.Minute+5*time.Second)}, date, sent)
	if quotas[0].Reset != 14*time.Minute || quotas[1].Reset != 0 {
		t.Errorf("aligned: resets %v and %v, want 14m0s (a minute before sent) and 0s (5 s after sent: left)", quotas[0].Reset, quotas[1].Reset)
	}
}

// An instant stated under a base 5 hours behind, to a request sent 90 s
// before now: from now while no more than Slack before sent, however long
// the answer took; from base when earlier.
func TestWait(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	base, sent := now.Add(-5*time.Hour), now.Add(-90*time.Second)
	for _, tt := range []struct {
		at   time.Duration // the instant, less now
		want time.Duration
	}{
		{4 * time.Second, 4 * time.Second},
		{-88 * time.Second, -88 * time.Second},
		{-92 * time.Second, -92 * time.Second},
		{-93 * time.Second, 5*time.Hour - 93*time.Second},
	} {
		d := now.Add(tt.at).Sub(base)
		if got := Wait(d, base, sent, now); got != tt.want {
			t.Errorf("instant now%+v: Wait = %v, want %v", tt.at, got, tt.want)
		}
	}
}

func TestDateOf(t *testing.T) {
	want := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	const d = "Sun, 06 Dec 2026 12:00:00 GMT"
	for _, tt := range []struct {
		vals []string
		want time.Time
	}{
		{[]string{d}, want},
		{[]string{" " + d + "\t"}, want},
		{[]string{d + ", " + d}, want}, // a proxy's join of repeated fields
		{[]string{d, "Sun, 06 Dec 2026 13:00:00 GMT"}, want},
		{[]string{d + ", Sun, 06 Dec 2026 13:00:00 GMT"}, time.Time{}},
		{[]string{"yesterday"}, time.Time{}},
		{nil, time.Time{}},
	} {
		h := http.Header{}
		for _, v := range tt.vals {
			h.Add("Date", v)
		}
		if got := DateOf(h, want); !got.Equal(tt.want) {
			t.Errorf("DateOf(%q) = %v, want %v", tt.vals, got, tt.want)
		}
	}
}

// A 403's spent quota whose reset is the Date itself (rounded down) is
// just past; one a minute past is not; by now, too, for a Date far ahead.
func TestSpentJustPast(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	spent := func(reset time.Time) http.Header {
		return http.Header{"X-Ratelimit-Limit": {"20"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)}}
	}
	for _, tt := range []struct {
		name        string
		reset, base time.Time
		want        bool
	}{
		{"at the Date", now, now, true},
		{"a second past the Date", now.Add(-time.Second), now, true},
		{"a minute past", now.Add(-time.Minute), now, false},
		{"Date 5 h ahead, reset at now", now, now.Add(5 * time.Hour), true},
	} {
		if got := SpentJustPast(spent(tt.reset), tt.base, now); got != tt.want {
			t.Errorf("%s: SpentJustPast = %t, want %t", tt.name, got, tt.want)
		}
	}
}
