// Command crawl crawls a site with colly over polite: colly finds the links,
// polite decides whether and when each request may go. colly's own
// robots.txt handling and limits are off; polite obeys robots.txt (its
// rules, Crawl-delay and Request-rate), paces each origin by what it says
// (rate-limit fields, Retry-After, refusals) and bounds the requests in
// flight.
//
// Usage:
//
//	crawl [-ua mybot/1.0] [-c 4] https://site.example/
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/politehttp/polite"
	"golang.org/x/net/idna"
)

func main() {
	ua := flag.String("ua", "examplebot/1.0 (+https://github.com/politehttp/polite)", "User-Agent, whose product token robots.txt is matched against")
	conc := flag.Int("c", 4, "most requests in flight to one origin")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: crawl [-ua agent] [-c n] URL")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	base := newBase()
	defer base.CloseIdleConnections()
	res, err := crawl(ctx, flag.Arg(0), *ua, base, *conc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, u := range res.Visited {
		fmt.Println(u)
	}
	for _, err := range res.Errors {
		fmt.Fprintln(os.Stderr, err)
	}
	fmt.Fprintf(os.Stderr, "%d pages, %d not sent (robots.txt), %d errors\n", len(res.Visited), res.Disallowed, len(res.Errors))
	if len(res.Errors) > 0 {
		os.Exit(1) // as wget does when a page could not be fetched
	}
}

// newBase returns the http.Transport the crawl's requests are sent
// through, below polite.
func newBase() *http.Transport {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.ResponseHeaderTimeout = 30 * time.Second
	return base
}

// newTransport returns the polite Transport a crawl goes through, over
// base: it obeys robots.txt (a disallowed link fails with
// polite.ErrDisallowed, Crawl-delay paces its origin), keeps at most
// maxConcurrency requests in flight to an origin, and to an origin that
// states no rate limit, fewer while its latency shows it queues them.
func newTransport(userAgent string, maxConcurrency int, base http.RoundTripper) *polite.Transport {
	return &polite.Transport{
		Base:           base,
		MaxWait:        maxWait,
		MaxConcurrency: maxConcurrency,
		Robots:         &polite.Robots{UserAgent: userAgent},
		Restraint:      &polite.Restraint{MaxConcurrency: maxConcurrency, Adaptive: true},
	}
}

const (
	// maxWait bounds the time a request waits in polite for its turn.
	maxWait = 10 * time.Minute
	// pageTimeout bounds the rest of a request: the server's answer, its
	// body included.
	pageTimeout = time.Minute
)

// result is what a crawl found.
type result struct {
	Visited    []string // URLs fetched, sorted
	Disallowed int      // requests polite did not send: robots.txt disallows them
	Errors     []error  // other failures, robots.txt unreachable among them
}

// crawl visits start and every page it links to on the same host, up to
// 9 links away from start (colly's depth 10: start is depth 1), through a
// polite Transport of its own over base (see newTransport), with colly's own robots.txt
// handling and delays off. A redirect to a page already visited, or to
// another host, is followed no further, and is no failure, but from the
// start page. colly hands polite
// at most parallel requests at once and queues the others itself: handed
// every link at once, polite would hold them all, and behind a Crawl-delay
// the later ones would wait past MaxWait and fail (100 pages at 10 s).
// Credentials in start are sent below polite, on base's requests (see
// basicAuth): so robots.txt, which polite fetches through its Base, is
// read with them too, as a site that protects every path serves it.
func crawl(ctx context.Context, start, userAgent string, base http.RoundTripper, parallel int) (result, error) {
	u, err := url.Parse(start)
	if err != nil {
		// url.Parse's error quotes the URL, a password with it.
		return result{}, errors.New("the start URL is not a valid URL")
	}
	// Credentials in the start URL go in an Authorization header of the
	// requests to its host (see basicAuth), not in the URLs colly resolves
	// from it, which the crawl lists and its errors quote.
	var auth string
	if u.User != nil {
		p, _ := u.User.Password()
		auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+p))
		u.User = nil
		start = u.String()
	}
	// colly compares the hosts of the URLs it visits in their normal
	// form, lower case and, for a name in Unicode, punycode.
	host, err := idna.Lookup.ToASCII(u.Hostname())
	if err != nil {
		host = strings.ToLower(u.Hostname()) // an IPv6 address, say
	}
	c := colly.NewCollector(
		colly.UserAgent(userAgent),
		colly.AllowedDomains(host),
		colly.Async(true), // one goroutine per request: polite paces them
		colly.MaxDepth(10),
		colly.StdlibContext(ctx),
	)
	c.IgnoreRobotsTxt = true // polite reads robots.txt, with the Transport's pacing
	if auth != "" {
		if base == nil {
			base = http.DefaultTransport // as polite's nil Base is
		}
		base = &basicAuth{next: base, auth: auth, scheme: u.Scheme, host: host, port: portOf(u)}
	}
	c.WithTransport(newTransport(userAgent, parallel, base))
	// A bound on the requests handed to polite, no delay: polite's pacing
	// applies.
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: max(parallel, 1)}); err != nil {
		return result{}, err
	}
	// colly's client times out a request after 10s by default, counting
	// the time it waits in polite for its turn: behind a Crawl-delay, most
	// pages would fail. The wait is bounded by the Transport's MaxWait,
	// and the server's answer, body and all, by a minute more.
	c.SetRequestTimeout(maxWait + pageTimeout)

	var mu sync.Mutex
	var res result
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		e.Request.Visit(e.Attr("href"))
	})
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		defer mu.Unlock()
		res.Visited = append(res.Visited, r.Request.URL.String())
	})
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		// A robots.txt that could not be fetched disallows the origin
		// for a while (RFC 9309 §2.3.1.4): a failure, not a rule.
		var re *polite.RobotsError
		if errors.As(err, &re) && !re.Unreachable {
			res.Disallowed++
			return
		}
		// colly follows no redirect to a page it visited (fetched, or
		// to be), nor to another host: the page was fetched, or is not
		// of the crawl. The start page's is a failure: nothing was
		// crawled.
		var av *colly.AlreadyVisitedError
		if r.Request.Depth > 1 && (errors.As(err, &av) || errors.Is(err, colly.ErrForbiddenDomain)) {
			return
		}
		res.Errors = append(res.Errors, &pageError{r.Request.URL, err})
	})
	if err := c.Visit(start); err != nil {
		return result{}, err
	}
	c.Wait()
	sort.Strings(res.Visited)
	return res, ctx.Err()
}

// pageError is the failure of a page, shown as its URL without its query,
// which may hold a secret (a signed link's), and its error without the
// URL net/http's and colly's errors quote.
type pageError struct {
	url *url.URL
	err error
}

func (e *pageError) Error() string {
	u := *e.url
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = "…", true
	}
	err := e.err
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var av *colly.AlreadyVisitedError
	if errors.As(err, &av) {
		return u.String() + ": redirected to a page already visited"
	}
	return u.String() + ": " + err.Error()
}

func (e *pageError) Unwrap() error { return e.err }

// basicAuth sends the credentials of the start URL, auth, with each
// request to its host (in the normal form colly compares hosts in: lower
// case, punycode) and port (the scheme's own counting as none), over
// https, or over http when the start URL was: set before each request is
// sent, redirects included, and taken off any other, so that a redirect
// net/http follows to another port, or from https to http, does not carry
// them on.
type basicAuth struct {
	next         http.RoundTripper
	auth         string
	scheme, host string
	port         string // the start URL's (see portOf)
}

func (a *basicAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	host, err := idna.Lookup.ToASCII(req.URL.Hostname())
	if err != nil {
		host = strings.ToLower(req.URL.Hostname())
	}
	secure := req.URL.Scheme == "https" || a.scheme == "http" && req.URL.Scheme == "http"
	mine := secure && host == a.host && portOf(req.URL) == a.port
	if has := req.Header.Get("Authorization") == a.auth; mine != has {
		// A copy: the RoundTripper contract leaves req as it came.
		r := req.Clone(req.Context())
		if mine {
			r.Header.Set("Authorization", a.auth)
		} else {
			r.Header.Del("Authorization")
		}
		req = r
	}
	return a.next.RoundTrip(req)
}

// portOf returns the port of u, or "" when it names none or its scheme's
// own: http://host and https://host:443 are one host's default ports,
// its credentials sent to both (over https, see basicAuth).
func portOf(u *url.URL) string {
	switch p := u.Port(); {
	case u.Scheme == "http" && p == "80", u.Scheme == "https" && p == "443":
		return ""
	default:
		return p
	}
}
