package parse

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A conformance case of testdata/*.txt; see testdata/dialects.txt for the
// format.
type conformanceCase struct {
	name   string
	lines  [][2]string // header field lines, in order
	now    time.Time   // zero: relative to Date
	want   []Quota
	source string // file:line
}

func (c conformanceCase) header() http.Header {
	h := make(http.Header)
	for _, l := range c.lines {
		h.Add(l[0], l[1])
	}
	return h
}

// clocks returns the client clocks to run the case with: minutes off the
// server's Date in both directions, so that absolute resets are seen to be
// measured from Date.
func (c conformanceCase) clocks(t testing.TB) []time.Time {
	if !c.now.IsZero() {
		return []time.Time{c.now}
	}
	date := c.header().Get("Date")
	if date == "" {
		return []time.Time{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	}
	d, err := http.ParseTime(date)
	if err != nil {
		t.Fatalf("%s: bad Date %q", c.source, date)
	}
	return []time.Time{d.Add(7*time.Minute + 13*time.Second), d.Add(-4*time.Minute - 51*time.Second)}
}

func readConformance(t testing.TB, file string) []conformanceCase {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []conformanceCase
	var c *conformanceCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		where := fmt.Sprintf("%s:%d", file, n)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "== "):
			cases = append(cases, conformanceCase{name: line[3:], source: where})
			c = &cases[len(cases)-1]
		case c == nil:
			t.Fatalf("%s: line outside a case", where)
		case strings.HasPrefix(line, "@now "):
			if c.now, err = time.Parse(time.RFC3339, line[5:]); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
		case line == "-> none":
			c.want = []Quota{}
		case strings.HasPrefix(line, "-> "):
			q, err := parseQuota(line[3:])
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			c.want = append(c.want, q)
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("%s: not a header line: %q", where, line)
			}
			c.lines = append(c.lines, [2]string{k, strings.TrimPrefix(v, " ")})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.want == nil {
			t.Fatalf("%s: case %q expects nothing; write -> none", c.source, c.name)
		}
	}
	return cases
}

// parseQuota reads the "key=value ..." form that formatQuota writes.
func parseQuota(s string) (Quota, error) {
	var q Quota
	seen := 0
	for s != "" {
		k, rest, ok := strings.Cut(s, "=")
		if !ok {
			return q, fmt.Errorf("no value in %q", s)
		}
		var v string
		if k == "policy" {
			p, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return q, fmt.Errorf("policy: %v", err)
			}
			v, rest = p, rest[len(p):]
		} else {
			v, rest, _ = strings.Cut(rest, " ")
		}
		s = strings.TrimLeft(rest, " ")
		var err error
		switch k {
		case "dialect":
			q.Dialect = v
		case "policy":
			q.Policy, err = strconv.Unquote(v)
		case "unit":
			q.Unit = v
		case "limit":
			q.Limit, err = strconv.ParseInt(v, 10, 64)
		case "window":
			q.Window, err = time.ParseDuration(v)
		case "remaining":
			q.Remaining, err = strconv.ParseInt(v, 10, 64)
		case "reset":
			q.Reset, err = time.ParseDuration(v)
		case "pk":
			q.Partition, err = base64.StdEncoding.DecodeString(v)
		default:
			return q, fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return q, fmt.Errorf("%s: %v", k, err)
		}
		seen++
	}
	if seen < 7 {
		return q, fmt.Errorf("want all of dialect, policy, unit, limit, window, remaining, reset")
	}
	return q, nil
}

// formatQuota writes q in the form of the testdata files.
func formatQuota(q Quota) string {
	s := fmt.Sprintf("dialect=%s policy=%q unit=%s limit=%d window=%v remaining=%d reset=%v",
		q.Dialect, q.Policy, q.Unit, q.Limit, q.Window, q.Remaining, q.Reset)
	if q.Partition != nil {
		s += " pk=" + base64.StdEncoding.EncodeToString(q.Partition)
	}
	return s
}

// formatQuotas writes qs sorted, so that order does not matter.
func formatQuotas(qs []Quota) string {
	if len(qs) == 0 {
		return "none"
	}
	lines := make([]string, len(qs))
	for i, q := range qs {
		lines[i] = formatQuota(q)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n   ")
}

func testConformance(t *testing.T, file string) {
	for _, c := range readConformance(t, file) {
		t.Run(c.name, func(t *testing.T) {
			h := c.header()
			for _, now := range c.clocks(t) {
				got, want := formatQuotas(Header(h, now)), formatQuotas(c.want)
				if got != want {
					t.Errorf("%s\nHeader(%v) at %v =\n   %s\nwant\n   %s", c.source, h, now.Format(time.RFC3339), got, want)
				}
			}
		})
	}
}

func TestHeaderDialects(t *testing.T) { testConformance(t, "testdata/dialects.txt") }

func TestHeaderDraft11(t *testing.T) { testConformance(t, "testdata/draft11.txt") }

func TestHeaderEdges(t *testing.T) { testConformance(t, "testdata/edge.txt") }
