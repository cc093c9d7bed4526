package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/politehttp/polite"
	"github.com/politehttp/polite/internal/media"
	"github.com/politehttp/polite/internal/serverclock"
	"github.com/politehttp/polite/parse"
)

const inspectAbout = `
Inspect sends one GET to URL, closes the response without reading its body
(except an RFC 9457 problem document, of which it reads at most 4 KiB), and
explains what the response says about rate limits: each quota in every
dialect it uses, Retry-After, whether it came from a cache, and findings in
plain words about what clients will make of it. It ends with a verdict:

  pass     a RateLimit-Policy or RateLimit field that parses as draft-11,
           or a 429, 503 or 403 with a valid Retry-After (a 403 with one
           is a refusal, as GitHub sends past its limits, and polite
           reads it so)
  partial  only legacy or vendor fields (X-RateLimit-*, earlier drafts)
           or draft-11 fields only lenient readers accept, or a 429 with
           neither Retry-After nor readable fields, or a refusal whose wait
           only the non-standard retry-after-ms gives
  fail     no rate-limit fields at all, or only malformed ones

With -cost (as in -cost tokens=1200, or input-tokens=800,output-tokens=400),
it also says how long a request of that cost would wait by the quotas of
tokens and other units, as polite reads them: what is left, the refill rate
of a quota replenished continuously (OpenAI, Anthropic), and the wait, or
that the request can never start because it costs more than a whole quota.

A URL without a scheme, such as 127.0.0.1:8080, is taken as http://.

With -json, inspect prints one JSON object on stdout; when it gets no
response (an invalid URL, a refused connection, a timeout) the object is
{"url": ..., "error": ...} and the exit status is not 0. URLs are shown
without their user information and query ("?…"), and a partition key by
its hash ("sha256:" and 16 hex digits), and the value of an -H whose name
holds auth, cookie, key, token, secret, session, password, passwd,
credential or signature (6 bytes or more; without its first word, a
scheme such as Bearer, too; a Basic credential's password; a Cookie's
values whose names hold those words, sid or sess, or of 16 bytes or
more) as "…" wherever the server echoed it, percent-encoded in a URL or
escaped in a quotation too: what inspect prints never holds a
credential. With -json, a number holding one is the string "…"; a value
of the URL's query of 6 bytes or more is elided in the report's strings.

Servers often send CORS headers only to cross-origin requests: add
-H 'Origin: https://example.com' to see them.`

// problemLimit is the most bytes of a problem document inspect reads.
const problemLimit = 4 << 10

// inspectReport is what inspect found; its JSON form is inspect -json.
type inspectReport struct {
	URL         string      `json:"url"`
	Status      int         `json:"status"`
	Quotas      []quotaJSON `json:"quotas"`
	RetryAfterS *float64    `json:"retry_after_s"`
	FromCache   bool        `json:"from_cache"`
	Findings    []string    `json:"findings"`
	Verdict     string      `json:"verdict"`
	Rule        string      `json:"rule"`
	Cost        *costReport `json:"cost,omitempty"` // with -cost
}

// inspectError is what inspect -json prints when it got no response: the
// URL is invalid, or the request failed.
type inspectError struct {
	URL   string `json:"url"`
	Error string `json:"error"`
}

// assumeHTTP returns target with "http://" before it when it has no scheme
// ("127.0.0.1:8080", "localhost:8080/x?next=http://y/", "api.example"),
// as curl does, and reports whether it did: a "://" past a '/', '?' or
// '#' is not a scheme's.
func assumeHTTP(target string) (string, bool) {
	switch {
	case target == "" || hasScheme(target):
		return target, false
	case strings.HasPrefix(target, "//"):
		return "http:" + target, true
	}
	return "http://" + target, true
}

// quotaJSON is a parse.Quota with unknown values as JSON null and durations
// in seconds.
type quotaJSON struct {
	Policy    string   `json:"policy"`
	Partition string   `json:"partition,omitempty"` // its hash (see shownPartition), never the key
	Unit      string   `json:"unit"`
	Limit     *int64   `json:"limit"`
	WindowS   *float64 `json:"window_s"`
	Remaining *int64   `json:"remaining"`
	ResetS    *float64 `json:"reset_s"`
	Dialect   string   `json:"dialect"`
}

// newQuotaJSON converts q, mapping its unknown markers to nil.
func newQuotaJSON(q parse.Quota) quotaJSON {
	j := quotaJSON{Policy: q.Policy, Partition: shownPartition(q.Partition), Unit: q.Unit, Dialect: q.Dialect}
	if q.Limit >= 0 {
		j.Limit = &q.Limit
	}
	if q.Remaining >= 0 {
		j.Remaining = &q.Remaining
	}
	if q.Window > 0 {
		s := q.Window.Seconds()
		j.WindowS = &s
	}
	if q.Reset >= 0 {
		s := q.Reset.Seconds()
		j.ResetS = &s
	}
	return j
}

// runInspect implements "polite inspect".
func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("inspect", "[flags] URL", inspectAbout, stderr)
	var headers headerFlag
	fs.Var(&headers, "H", "request header 'Name: value' (repeatable); dropped, User-Agent aside, on a redirect to another origin (scheme, host or port)")
	timeout := fs.Duration("timeout", 10*time.Second, "time limit for the request")
	jsonOut := fs.Bool("json", false, "print one JSON object instead of text")
	var cost costFlag
	fs.Var(&cost, "cost", "also say how long a request costing this would wait, as unit=amount pairs (tokens=1200,input-tokens=800)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := headers.check(fs.Args()); err != nil {
		return err
	}
	// A server may echo a credential the request carried, from -H or the
	// URL's userinfo (in a policy's name, a problem document): the
	// report, which people paste into bug reports, shows it elided, and so
	// does the error.
	secrets := headers.secrets(fs.Args()...)
	if len(secrets) > 0 {
		var report bytes.Buffer
		to := stdout
		stdout = &report
		defer func() {
			out := elideSecrets(report.String(), secrets)
			if *jsonOut {
				// In its strings, and its numbers for a credential:
				// see elideJSON.
				out = string(elideJSON(report.Bytes(), secrets, headers.credentials(fs.Args()...)))
			}
			if _, werr := io.WriteString(to, out); err == nil {
				err = werr
			}
			if err != nil {
				if s := elideSecrets(err.Error(), secrets); s != err.Error() {
					err = &shownError{text: s, err: err}
				}
			}
		}()
	}
	if *timeout <= 0 {
		return usagef("-timeout must be positive, got %v", *timeout)
	}
	if fs.NArg() != 1 {
		return usagef("want exactly one URL, got %d arguments", fs.NArg())
	}
	target := fs.Arg(0)
	if u, ok := assumeHTTP(target); ok {
		fmt.Fprintf(stderr, "polite inspect: %q has no scheme; assuming %s\n", shownURL(target), shownURL(u))
		target = u
	}
	// With -json, a failure is a JSON object on stdout too, so that a
	// script reading stdout always gets one object.
	fail := func(err error) error {
		if *jsonOut {
			msg := err.Error()
			if uerr := (*url.Error)(nil); errors.As(err, &uerr) {
				msg = urlErrText(uerr) // the URL is a field of its own
			}
			writeJSON(stdout, inspectError{URL: shownURL(target), Error: msg})
		}
		return showError(err)
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fail(usagef("%v", showError(err)))
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" || req.URL.Hostname() == "" {
		return fail(usagef("URL %q: want an http or https URL with a host", shownURL(target)))
	}
	headers.apply(req.Header, &req.Host)
	client := &http.Client{CheckRedirect: headers.checkRedirect}
	chain := &hops{cost: cost.set}
	client.Transport = chain
	resp, err := client.Do(req)
	if err != nil {
		return fail(err)
	}
	now := time.Now()
	var problem []byte
	var problemErr error
	if isProblem(resp.Header) {
		problem, problemErr = io.ReadAll(io.LimitReader(resp.Body, problemLimit))
	}
	resp.Body.Close()

	rep := examine(resp.StatusCode, resp.Header, problem, problemErr, chain.sent, now)
	rep.URL = shownURL(target)
	if cost.set {
		c := examineCost(chain.last, resp.Request.URL.String(), now, cost.cost)
		rep.Cost = &c
	}
	if *jsonOut {
		return writeJSON(stdout, rep)
	}
	final := ""
	if u := resp.Request.URL.String(); u != req.URL.String() {
		final = " (after redirects: " + shownURL(u) + ")"
	}
	if len(secrets) > 0 {
		// The table's cells elided before it is laid out: elided after,
		// as all of the report is, its columns no longer lined up.
		for i := range rep.Quotas {
			q := &rep.Quotas[i]
			q.Policy, q.Unit = elideSecrets(q.Policy, secrets), elideSecrets(q.Unit, secrets)
		}
	}
	out := &stickyWriter{w: stdout}
	printReport(out, rep, resp.Status, final)
	if rep.Cost != nil {
		printCost(out, rep.Cost)
	}
	return out.err
}

// stickyWriter writes to w until a write fails, and keeps that error.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// printReport writes rep as text.
// printable returns s as it is when every rune of it is printable, and
// quoted otherwise: a status line's reason phrase is the server's text,
// and net/http lets control bytes through there (a terminal's escape
// sequences retitle the window, clear the screen, write the clipboard).
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) || r == utf8.RuneError {
			// A byte that is no UTF-8 (0x9b, CSI in 8 bits) reads as
			// U+FFFD, which prints, and reached the terminal raw.
			return strconv.Quote(s)
		}
	}
	return s
}

func printReport(w io.Writer, rep inspectReport, status, final string) {
	fmt.Fprintf(w, "GET %s%s\nstatus: %s\n\n", rep.URL, final, printable(status))
	if len(rep.Quotas) == 0 {
		fmt.Fprint(w, "quotas: none\n")
	} else {
		fmt.Fprint(w, "quotas:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  dialect\tpolicy\tunit\tlimit\twindow\tremaining\treset")
		for _, q := range rep.Quotas {
			policy := q.Policy
			if policy != "" {
				policy = strconv.Quote(policy)
			}
			if q.Partition != "" {
				policy += " pk=" + q.Partition
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", q.Dialect, cmp.Or(policy, "-"), q.Unit,
				optInt(q.Limit), optSeconds(q.WindowS), optInt(q.Remaining), optSeconds(q.ResetS))
		}
		tw.Flush()
	}
	ra := "none"
	if rep.RetryAfterS != nil {
		ra = optSeconds(rep.RetryAfterS)
	}
	fmt.Fprintf(w, "retry-after: %s\n", ra)
	fmt.Fprintf(w, "from a cache: %v\n\n", rep.FromCache)
	fmt.Fprint(w, "findings:\n")
	if len(rep.Findings) == 0 {
		fmt.Fprint(w, "  none\n")
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "  - %s\n", f)
	}
	fmt.Fprintf(w, "\nverdict: %s (%s)\n", strings.ToUpper(rep.Verdict), rep.Rule)
}

// optInt formats an optional count; "?" when unknown.
func optInt(p *int64) string {
	if p == nil {
		return "?"
	}
	return strconv.FormatInt(*p, 10)
}

// optSeconds formats optional seconds as a duration; "?" when unknown.
func optSeconds(p *float64) string {
	if p == nil {
		return "?"
	}
	d := *p * float64(time.Second)
	switch {
	case d != d:
		return "?"
	case d >= math.MaxInt64: // saturated, as parse saturates: a conversion past it wraps around
		return time.Duration(math.MaxInt64).String()
	case d <= math.MinInt64:
		return time.Duration(math.MinInt64).String()
	}
	return time.Duration(d).String()
}

// Verdicts and the rules that give them.
const (
	rulePassIETF       = "a RateLimit-Policy or RateLimit field parses as draft-11"
	rulePassRetryAfter = "a %d with a valid Retry-After: clients know how long to wait"
	rulePartialLegacy  = "only legacy or vendor rate-limit fields (%s): clients that read draft-11 alone see nothing"
	rulePartialLenient = "draft-11 fields that only lenient readers accept: strict clients must ignore them"
	rulePartialRetryMs = "a %d with only the non-standard retry-after-ms: clients that read Retry-After alone must guess how long to wait"
	rulePartialBare    = "a 429 without a valid Retry-After or readable rate-limit fields: clients must guess how long to wait"
	ruleFailMalformed  = "rate-limit fields are present but none is valid: clients must ignore them"
	ruleFailNothing    = "no rate-limit fields: clients cannot tell how fast they may go, and learn it only from refusals"
	ruleFailRefusal    = "a %d with neither rate-limit fields nor a valid Retry-After: clients must guess how long to wait"
)

// examine explains a response with status and header h received at now,
// to a request sent at sent (the zero time when unknown); problem is the
// start of its body when it is an RFC 9457 problem document, and
// problemErr the error that cut its reading short, if any (-timeout). It
// leaves URL empty.
func examine(status int, h http.Header, problem []byte, problemErr error, sent, now time.Time) inspectReport {
	rep := inspectReport{Status: status, Quotas: []quotaJSON{}, Findings: []string{}}
	note := func(format string, args ...any) {
		rep.Findings = append(rep.Findings, escaped(fmt.Sprintf(format, args...)))
	}

	quotas := parse.Header(h, now)
	// Under a Date far behind, an instant a server stated before the
	// request was sent is read from the Date, as polite's Transport
	// reads it (package internal/serverclock).
	date := serverclock.DateOf(h, now)
	late := !sent.IsZero() && !date.IsZero() && serverclock.Behind(date, now)
	// A Retry-After date is held to the exact line, as the Transport
	// holds it (offWait); parse's resets, to whole seconds.
	lateRA := !sent.IsZero() && !date.IsZero() && now.Sub(date) > serverclock.Off
	if late {
		serverclock.Quotas(quotas, parse.HeaderAt(h, date, date), date, sent)
	}
	slices.SortFunc(quotas, func(a, b parse.Quota) int {
		return cmp.Or(cmp.Compare(a.Dialect, b.Dialect), cmp.Compare(a.Policy, b.Policy),
			cmp.Compare(a.Unit, b.Unit), cmp.Compare(string(a.Partition), string(b.Partition)))
	})
	legacy := map[string]bool{} // dialects other than draft-11
	// What a lenient reading took from each draft-11 field: a quota (from
	// RateLimit-Policy), a remaining count (from RateLimit).
	var lenientPolicy, lenientLimit bool
	for _, q := range quotas {
		rep.Quotas = append(rep.Quotas, newQuotaJSON(q))
		if q.Dialect != "ietf" {
			legacy[q.Dialect] = true
		} else {
			lenientPolicy = lenientPolicy || q.Limit >= 0
			lenientLimit = lenientLimit || q.Remaining >= 0
		}
	}
	legacyNames := slices.Sorted(maps.Keys(legacy))

	if parse.FromCache(h) {
		rep.FromCache = true
		note("the response came from a cache (Age: %s): its rate-limit fields may not be current, and draft-11 §7.3 says clients SHOULD ignore them (polite does)", h.Get("Age"))
	}

	// The draft-11 fields, read strictly.
	malformed := false
	pv, lv := h.Values("RateLimit-Policy"), h.Values("RateLimit")
	pols, perr := parse.Policies(pv)
	lims, lerr := parse.Limits(lv)
	for _, f := range []struct {
		name    string
		values  []string
		err     error
		section string
		lenient bool // a lenient reading took something from it
	}{{"RateLimit-Policy", pv, perr, "§3", lenientPolicy}, {"RateLimit", lv, lerr, "§4", lenientLimit}} {
		if f.err == nil {
			continue
		}
		malformed = true
		s := fmt.Sprintf("%s %q is not valid draft-11 and must be ignored as a whole (%s): %s",
			f.name, shownField(strings.Join(f.values, ", ")), f.section, explainFieldError(f.err))
		switch {
		case len(legacy) > 0:
			s += fmt.Sprintf("; lenient readers take these headers as %s", strings.Join(legacyNames, ", "))
		case f.lenient && parse.FromCache(h):
			s += "; lenient readers still read it (polite reads nothing from a cache)"
		case f.lenient:
			s += "; lenient readers (polite among them) still read it"
		}
		note("%s", s)
	}
	ietfOK := perr == nil && len(pols) > 0 || lerr == nil && len(lims) > 0
	if perr == nil && lerr == nil {
		checkJoin(pols, lims, note)
	}
	if len(pv) == 0 && len(lv) == 0 && len(quotas) > 0 {
		note("only legacy or vendor fields (%s), no RateLimit-Policy or RateLimit: clients that follow draft-11 do not read them",
			strings.Join(legacyNames, ", "))
	}

	// Legacy fields that nothing could read.
	if bad := badLegacyFields(h); len(bad) > 0 {
		malformed = true
		note("legacy fields that are not valid numbers, which clients ignore: %s", strings.Join(bad, "; "))
	}
	if len(quotas) == 0 && !ietfOK && !malformed {
		if names := rateLimitFieldNames(h, false); len(names) > 0 {
			malformed = true
			for i := range names {
				names[i] = displayName(names[i])
			}
			note("rate-limit fields present but none could be read: %s", strings.Join(names, ", "))
		}
	}

	// Retry-After, and OpenAI's retry-after-ms, which polite reads
	// first; stdOK reports whether Retry-After, which clients following
	// RFC 9110 read alone, is valid without it.
	ra, raOK := polite.RetryAfter(h, now)
	std := http.Header{}
	for name, v := range h {
		if !strings.EqualFold(name, "Retry-After-Ms") {
			std[name] = v
		}
	}
	_, stdOK := polite.RetryAfter(std, now)
	if lateRA && raOK && dateForm(h) {
		// An HTTP-date, read by when the request was sent as the
		// Transport reads it, however long the answer took.
		fromDate, _ := polite.RetryAfter(h, date)
		ra = max(serverclock.Wait(fromDate, date, sent, now), 0)
	}
	if raOK {
		s := ra.Seconds()
		rep.RetryAfterS = &s
		if ra > 10*time.Minute {
			note("Retry-After asks for %v, longer than most clients wait (polite's default MaxWait is 10m): they give up at once", ra)
		}
	}
	if v := h.Values("Retry-After"); !stdOK && len(v) > 0 {
		malformed = true
		note("Retry-After %q is not valid (delay-seconds or an HTTP-date, RFC 9110 §10.2.3; a single field line): clients ignore it", strings.Join(v, ", "))
	}
	if raOK && !stdOK {
		note("only the non-standard retry-after-ms says how long to wait, with no valid Retry-After: clients that read Retry-After alone (RFC 9110 §10.2.3) see nothing; polite and OpenAI's SDKs read it")
	}
	// A 403 with a Retry-After refuses for rate, as GitHub's past its
	// secondary limits, and so does one that states a quota spent with
	// its reset to come (or just past: rounded down), as GitHub's past
	// its primary limit: polite's
	// Transport reads either as a refusal (a quota from a cache, none).
	refusal := status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable ||
		status == http.StatusForbidden && (raOK || !parse.FromCache(h) && (spentToCome(quotas) || serverclock.SpentJustPast(h, cmp.Or(date, now), now)))
	if refusal && !raOK {
		s := fmt.Sprintf("a %d without a valid Retry-After: clients must guess when to try again (RFC 9110 §10.2.3, RFC 6585 §4)", status)
		switch {
		case parse.FromCache(h) && spentReset(quotas):
			s += "; a spent quota's reset, from a cache, gives no wait: polite backs off"
		case spentToCome(quotas):
			s += "; a spent quota's reset gives a wait, which polite uses"
		case spentReset(quotas):
			s += "; a spent quota's reset is now or past, which gives no wait: polite backs off"
		}
		note("%s", s)
	}

	checkCORS(h, note)
	if len(problem) > 0 || problemErr != nil {
		checkProblem(problem, problemErr, pols, perr == nil && len(pv) > 0, note)
	}

	switch {
	case ietfOK:
		rep.Verdict, rep.Rule = "pass", rulePassIETF
	case refusal && stdOK:
		rep.Verdict, rep.Rule = "pass", fmt.Sprintf(rulePassRetryAfter, status)
	case refusal && raOK:
		rep.Verdict, rep.Rule = "partial", fmt.Sprintf(rulePartialRetryMs, status)
	case len(legacy) > 0:
		rep.Verdict, rep.Rule = "partial", fmt.Sprintf(rulePartialLegacy, strings.Join(legacyNames, ", "))
	case len(quotas) > 0:
		rep.Verdict, rep.Rule = "partial", rulePartialLenient
	case status == http.StatusTooManyRequests && !malformed:
		rep.Verdict, rep.Rule = "partial", rulePartialBare
	case malformed:
		rep.Verdict, rep.Rule = "fail", ruleFailMalformed
	case refusal:
		rep.Verdict, rep.Rule = "fail", fmt.Sprintf(ruleFailRefusal, status)
	default:
		rep.Verdict, rep.Rule = "fail", ruleFailNothing
	}
	return rep
}

// dateForm reports whether the wait polite.RetryAfter reads in h is an
// HTTP-date: no valid retry-after-ms, which polite reads first, and a
// Retry-After with a letter in it, which delay-seconds never have.
func dateForm(h http.Header) bool {
	ms := http.Header{}
	for name, v := range h {
		if strings.EqualFold(name, "Retry-After-Ms") {
			ms[name] = v
		}
	}
	if _, ok := polite.RetryAfter(ms, time.Time{}); ok {
		return false
	}
	for name, v := range h {
		if strings.EqualFold(name, "Retry-After") && slices.ContainsFunc(v, func(s string) bool { return strings.ContainsFunc(s, unicode.IsLetter) }) {
			return true
		}
	}
	return false
}

// spentToCome reports whether one of quotas is spent with its reset still
// to come.
func spentToCome(quotas []parse.Quota) bool {
	for _, q := range quotas {
		if q.Remaining == 0 && q.Reset > 0 {
			return true
		}
	}
	return false
}

// explainFieldError says in plain words why parse.Policies or parse.Limits
// rejected a field.
func explainFieldError(err error) string {
	var fe *parse.FieldError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	item := fmt.Sprintf("item %d", fe.Member+1)
	switch {
	case errors.Is(fe, parse.ErrSyntax):
		return "it is not a Structured Fields List (RFC 9651 §3.1)"
	case errors.Is(fe, parse.ErrMissing):
		return fmt.Sprintf("%s lacks its required parameter %s", item, fe.Param)
	case errors.Is(fe, parse.ErrInvalid) && fe.Param == "":
		return item + ` is not a String: policy names are quoted, as in "default";q=100;w=60`
	case errors.Is(fe, parse.ErrInvalid):
		want := map[string]string{
			"q":  "a non-negative Integer",
			"r":  "a non-negative Integer",
			"t":  "a non-negative Integer",
			"w":  "a positive Integer",
			"qu": "a non-empty String",
			"pk": "a Byte Sequence (:base64:)",
		}[fe.Param]
		if want == "" {
			return fmt.Sprintf("%s: parameter %s has the wrong type or range", item, fe.Param)
		}
		return fmt.Sprintf("%s: parameter %s must be %s", item, fe.Param, want)
	}
	return err.Error()
}

// checkJoin notes RateLimit items and RateLimit-Policy items that do not
// name each other (draft-11 joins them by name).
func checkJoin(pols []parse.Policy, lims []parse.Limit, note func(string, ...any)) {
	if len(pols) == 0 || len(lims) == 0 {
		switch {
		case len(lims) > 0:
			note("RateLimit without RateLimit-Policy: clients see what remains but not the quota or its window")
		case len(pols) > 0:
			note("RateLimit-Policy without RateLimit: clients know the quota but not how much of it remains")
		}
		return
	}
	var orphanLimits, orphanPolicies []string
	for _, l := range lims {
		if !slices.ContainsFunc(pols, func(p parse.Policy) bool { return p.Name == l.Name }) {
			orphanLimits = append(orphanLimits, strconv.Quote(l.Name))
		}
	}
	for _, p := range pols {
		if !slices.ContainsFunc(lims, func(l parse.Limit) bool { return l.Name == p.Name }) {
			orphanPolicies = append(orphanPolicies, strconv.Quote(p.Name))
		}
	}
	if len(orphanLimits) > 0 {
		note("RateLimit names %s, which RateLimit-Policy does not list: clients cannot tell which quota that remaining count belongs to", strings.Join(orphanLimits, ", "))
	}
	if len(orphanPolicies) > 0 {
		note("RateLimit-Policy lists %s, which RateLimit does not mention: clients do not know how much of it remains", strings.Join(orphanPolicies, ", "))
	}
}

// badLegacyFields lists the legacy triplet fields (RateLimit-*,
// X-RateLimit-*, X-Rate-Limit-*: Limit, Remaining, Reset, Used) whose value
// parse does not read, as "Name: value" strings: what is said of them is
// what the library does with them.
func badLegacyFields(h http.Header) []string {
	var bad []string
	for _, name := range slices.Sorted(maps.Keys(h)) {
		lower := strings.ToLower(name)
		prefix := ""
		for _, p := range []string{"x-ratelimit-", "x-rate-limit-", "ratelimit-"} {
			if strings.HasPrefix(lower, p) {
				prefix = p
				break
			}
		}
		field := strings.TrimPrefix(lower, prefix)
		switch field {
		case "limit", "remaining", "reset", "used":
		default:
			continue
		}
		if prefix == "" {
			continue
		}
		if field == "used" {
			// Read by no quota of its own: a number, or nothing.
			for _, v := range h[name] {
				if !legacyNumber(v) {
					bad = append(bad, fmt.Sprintf("%s: %q", displayName(name), v))
				}
			}
			continue
		}
		if legacyRead(prefix, field, []string{"1"}) && !legacyRead(prefix, field, h[name]) {
			bad = append(bad, fmt.Sprintf("%s: %q", displayName(name), strings.Join(h[name], ", ")))
		}
	}
	return bad
}

// legacyRead reports whether parse reads values, the field lines of the
// legacy field prefix+field (limit, remaining or reset), beside the other
// two of its triplet stated as 1: the quota it reads has that field known.
func legacyRead(prefix, field string, values []string) bool {
	h := http.Header{}
	for _, f := range []string{"limit", "remaining", "reset"} {
		h[http.CanonicalHeaderKey(prefix+f)] = []string{"1"}
	}
	h[http.CanonicalHeaderKey(prefix+field)] = values
	return slices.ContainsFunc(parse.Header(h, time.Now()), func(q parse.Quota) bool {
		switch field {
		case "limit":
			return q.Limit >= 0
		case "remaining":
			return q.Remaining >= 0
		}
		return q.Reset >= 0
	})
}

// legacyNumber reports whether v is a valid legacy count: digits with an
// optional fraction, optionally followed by parameters such as ";w=60"
// (Docker) or further list members (Envoy).
func legacyNumber(v string) bool {
	first, _, _ := strings.Cut(v, ",")
	first, _, _ = strings.Cut(first, ";")
	return isDecimal(strings.TrimSpace(first))
}

// isDecimal reports whether s matches ^\d+(\.\d+)?$.
func isDecimal(s string) bool {
	whole, frac, dot := strings.Cut(s, ".")
	digits := func(s string) bool {
		return s != "" && strings.Trim(s, "0123456789") == ""
	}
	return digits(whole) && (!dot || digits(frac))
}

// spentReset reports whether some quota is spent and says when it resets,
// now or later (see spentToCome for a reset to come, the only one that
// tells a client how long to wait without Retry-After).
func spentReset(quotas []parse.Quota) bool {
	return slices.ContainsFunc(quotas, func(q parse.Quota) bool { return q.Remaining == 0 && q.Reset >= 0 })
}

// isRateLimitField reports whether the canonical header name is one a
// client reads to pace itself.
func isRateLimitField(name string) bool {
	lower := strings.ToLower(name)
	switch lower {
	case "retry-after", "retry-after-ms":
		return true
	}
	return strings.Contains(lower, "ratelimit") || strings.Contains(lower, "rate-limit")
}

// displayName spells a canonical header name as the specifications do:
// "RateLimit-Policy" rather than Go's "Ratelimit-Policy".
func displayName(name string) string {
	return strings.ReplaceAll(name, "Ratelimit", "RateLimit")
}

// rateLimitFieldNames lists the rate-limit fields present in h, sorted, as
// their canonical names.
// With retryAfter false, Retry-After and retry-after-ms are left out.
func rateLimitFieldNames(h http.Header, retryAfter bool) []string {
	var names []string
	for name := range h {
		if !isRateLimitField(name) {
			continue
		}
		if !retryAfter && strings.HasPrefix(strings.ToLower(name), "retry-after") {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// checkCORS notes rate-limit fields that a browser script on another origin
// cannot read: the response allows cross-origin reads, but
// Access-Control-Expose-Headers does not list them. None of them is a
// CORS-safelisted response header (Fetch standard, §3.2.6).
func checkCORS(h http.Header, note func(string, ...any)) {
	origin := h.Get("Access-Control-Allow-Origin")
	if origin == "" {
		return
	}
	fields := rateLimitFieldNames(h, true)
	if len(fields) == 0 {
		return
	}
	exposed := map[string]bool{}
	for _, v := range h.Values("Access-Control-Expose-Headers") {
		for name := range strings.SplitSeq(v, ",") {
			exposed[strings.ToLower(strings.TrimSpace(name))] = true
		}
	}
	credentials := h.Get("Access-Control-Allow-Credentials") == "true"
	if exposed["*"] && !credentials {
		return
	}
	var hidden []string
	for _, f := range fields {
		if !exposed[strings.ToLower(f)] {
			hidden = append(hidden, displayName(f))
		}
	}
	if len(hidden) == 0 {
		return
	}
	s := fmt.Sprintf("CORS: the response allows reads from %s but Access-Control-Expose-Headers does not list %s: browser scripts cannot read them",
		origin, strings.Join(hidden, ", "))
	if exposed["*"] {
		s += " (the wildcard * does not apply to requests with credentials)"
	}
	note("%s", s)
}

// isProblem reports whether h describes an RFC 9457 problem document.
func isProblem(h http.Header) bool {
	return media.Is(h.Get("Content-Type"), "application/problem+json") // as the Transport reads it
}

// checkProblem notes what an RFC 9457 problem document says about the
// refusal, and violated policies that RateLimit-Policy does not list. A
// body that is no JSON is invalid only when its reading was not cut short
// by readErr: the rest of it may never have come in time.
func checkProblem(body []byte, readErr error, pols []parse.Policy, havePolicies bool, note func(string, ...any)) {
	var p struct {
		Type     string   `json:"type"`
		Title    string   `json:"title"`
		Violated []string `json:"violated-policies"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		if readErr != nil {
			note("the problem document (application/problem+json) was cut short after %d bytes, before it could be read: %v", len(body), readErr)
			return
		}
		note("the body claims to be a problem document (application/problem+json) but is not valid JSON within its first %d bytes", problemLimit)
		return
	}
	s := fmt.Sprintf("problem document (RFC 9457): type %q", p.Type)
	if p.Title != "" {
		s += fmt.Sprintf(", title %q", p.Title)
	}
	if len(p.Violated) > 0 {
		s += fmt.Sprintf(", violated policies %q", p.Violated)
	}
	if strings.HasSuffix(p.Type, "abnormal-usage-detected") {
		s += ": the server reports abnormal usage; clients should stop, not retry"
	}
	note("%s", s)
	if !havePolicies {
		return
	}
	for _, v := range p.Violated {
		if !slices.ContainsFunc(pols, func(pol parse.Policy) bool { return pol.Name == v }) {
			note("the problem document names violated policy %q, which RateLimit-Policy does not list", v)
		}
	}
}
