package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/politehttp/polite"
)

// costFlag is inspect's -cost: what a request would cost, as unit=amount
// pairs separated by commas or spaces, as polite.Cost.String writes them.
type costFlag struct {
	set  bool
	cost polite.Cost
}

func (c *costFlag) String() string {
	if !c.set {
		return ""
	}
	return c.cost.String()
}

func (c *costFlag) Set(s string) error {
	var cost polite.Cost
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		unit, amount, ok := strings.Cut(f, "=")
		n, err := strconv.ParseInt(amount, 10, 64)
		if !ok || err != nil || n < 0 || unit == "" {
			return fmt.Errorf("%q: want unit=amount, such as tokens=1200", f)
		}
		switch unit {
		case "tokens":
			cost.Tokens = n
		case "input-tokens":
			cost.InputTokens = n
		case "output-tokens":
			cost.OutputTokens = n
		case "requests", "concurrent-requests":
			return fmt.Errorf("%q: every request costs one request", f)
		case "content-bytes":
			return fmt.Errorf("%q: a response's content is charged as it arrives, and no request declares it", f)
		default:
			if cost.Unit != "" && cost.Unit != unit {
				return fmt.Errorf("%q: at most one unit besides tokens", f)
			}
			cost.Unit, cost.Amount = unit, n
		}
	}
	c.cost, c.set = cost, true
	return nil
}

// costReport is what inspect -cost found: how long a request of that cost
// would wait by the response's quotas, as a fresh polite client reads
// them, and those quotas.
type costReport struct {
	Cost   string          `json:"cost"`
	WaitS  *float64        `json:"wait_s"`          // null when it could never start
	Error  string          `json:"error,omitempty"` // why it could never start
	Quotas []costQuotaJSON `json:"quotas"`
}

// costQuotaJSON is a quota of what requests cost, as polite's Budget sees
// it.
type costQuotaJSON struct {
	Policy    string   `json:"policy"`
	Unit      string   `json:"unit"`
	Limit     *int64   `json:"limit"`
	Remaining *int64   `json:"remaining"`
	Reserved  int64    `json:"reserved"`
	RefillPS  *float64 `json:"refill_per_s"` // null for a quota restored whole at its reset
}

// examineCost reports what a request costing cost to url would wait at
// now, by the quotas of the answer tr read, tr being the fresh polite
// Transport, of one attempt, that sent inspect's request: it read the
// answer as polite does, knowing when the request went. (An answer
// replayed through a fresh Transport after it came was taken for one to
// a request sent then: under a Date far behind, a reset stated before a
// slow answer read as hours; see package internal/serverclock.)
func examineCost(tr *polite.Transport, url string, now time.Time, cost polite.Cost) costReport {
	rep := costReport{Cost: cost.String(), Quotas: []costQuotaJSON{}}
	st, ok := tr.Inspect(url, now)
	if !ok {
		return rep
	}
	for _, p := range st.Policies {
		switch p.Unit {
		case "requests", "content-bytes", "concurrent-requests":
			continue
		}
		q := costQuotaJSON{Policy: p.Name, Unit: p.Unit, Reserved: p.Reserved}
		if p.Quota >= 0 {
			q.Limit = &p.Quota
		}
		if p.Remaining >= 0 {
			q.Remaining = &p.Remaining
		}
		if p.Refill > 0 {
			q.RefillPS = &p.Refill
		}
		rep.Quotas = append(rep.Quotas, q)
	}
	d, err := st.WaitFor(cost)
	if ce := (*polite.CostError)(nil); errors.As(err, &ce) {
		rep.Error = fmt.Sprintf("it costs %d %s, more than the whole quota of %d: it can never start", ce.Cost, ce.Unit, ce.Limit)
		return rep
	}
	s := d.Seconds()
	rep.WaitS = &s
	return rep
}

// hops sends the requests of inspect's redirect chain, one by one as
// http.Client sends them, and records when the latest went (sent), the
// answer examined being the last one's. With cost set (-cost), each goes
// through a polite Transport of its own, of one attempt, that has seen
// nothing: it goes at once, as it is, its answer handed back as it came,
// read as polite reads it, knowing when the request went (examineCost;
// last is the latest's). One Transport for the chain would pace a hop by
// what an earlier one stated. Without, through http.DefaultTransport.
type hops struct {
	cost bool
	last *polite.Transport
	sent time.Time
}

func (h *hops) RoundTrip(req *http.Request) (*http.Response, error) {
	h.sent = time.Now()
	if !h.cost {
		return http.DefaultTransport.RoundTrip(req)
	}
	h.last = &polite.Transport{MaxAttempts: 1}
	return h.last.RoundTrip(req)
}

// printCost writes rep as text.
func printCost(w io.Writer, rep *costReport) {
	fmt.Fprintf(w, "\na request costing %s:\n", rep.Cost)
	for _, q := range rep.Quotas {
		refill := "restored whole at its reset"
		if q.RefillPS != nil {
			refill = fmt.Sprintf("refills %.4g a second", *q.RefillPS)
		}
		fmt.Fprintf(w, "  %s: %s left of %s, %s\n", q.Unit, optInt(q.Remaining), optInt(q.Limit), refill)
	}
	switch {
	case rep.Error != "":
		fmt.Fprintf(w, "  never starts: %s\n", rep.Error)
	case rep.WaitS != nil:
		fmt.Fprintf(w, "  waits %s\n", optSeconds(rep.WaitS))
	}
}
