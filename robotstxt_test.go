package polite

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseRobots(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		token    string
		agent    string
		rules    []robotsRule
		interval time.Duration
	}{
		{
			name:  "the group naming the token, not *",
			body:  "User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow: /private\n",
			token: "mybot", agent: "mybot",
			rules: []robotsRule{{"/private", false}},
		},
		{
			name:  "* when no group names the token",
			body:  "User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp/\nAllow: /tmp/ok\n",
			token: "mybot", agent: "*",
			rules: []robotsRule{{"/tmp/", false}, {"/tmp/ok", true}},
		},
		{
			name:  "a group naming the token with no rules allows everything",
			body:  "User-agent: *\nDisallow: /\n\nUser-agent: mybot\n",
			token: "mybot", agent: "mybot",
		},
		{
			name:  "no token: only *",
			body:  "User-agent: mybot\nDisallow: /a\nUser-agent: *\nDisallow: /b\n",
			token: "", agent: "*",
			rules: []robotsRule{{"/b", false}},
		},
		{
			name:  "groups naming the token are merged (RFC 9309 §2.2.1)",
			body:  "User-agent: mybot\nDisallow: /a\n\nUser-agent: other\nDisallow: /x\n\nUser-agent: MyBot\nDisallow: /b\n",
			token: "mybot", agent: "mybot",
			rules: []robotsRule{{"/a", false}, {"/b", false}},
		},
		{
			name:  "several user-agent lines start one group",
			body:  "User-agent: a\nUser-agent: mybot\nUser-agent: b\nDisallow: /shared\n",
			token: "mybot", agent: "mybot",
			rules: []robotsRule{{"/shared", false}},
		},
		{
			name:  "the product token of a user-agent line, ignoring case",
			body:  "User-agent: MYBOT/2.1 (+https://mybot.example)\nDisallow: /v\n",
			token: "mybot", agent: "MYBOT/2.1 (+https://mybot.example)",
			rules: []robotsRule{{"/v", false}},
		},
		{
			name:  "a longer token is another crawler",
			body:  "User-agent: mybot-images\nDisallow: /\n",
			token: "mybot",
		},
		{
			name:  "rules before any user-agent line are ignored",
			body:  "Disallow: /\nCrawl-delay: 9\nUser-agent: *\nDisallow: /x\n",
			token: "mybot", agent: "*",
			rules: []robotsRule{{"/x", false}},
		},
		{
			name:  "sitemap and unknown records neither end nor join a group",
			body:  "User-agent: a\nSitemap: https://x.example/s.xml\nUser-agent: mybot\nNoindex: /q\nDisallow: /z\n",
			token: "mybot", agent: "mybot",
			rules: []robotsRule{{"/z", false}},
		},
		{
			name:  "comments, blank values, CR and CRLF line ends, a BOM, keys in any case",
			body:  "\xef\xbb\xbfUSER-AGENT: * # all\r\nDISALLOW:\r\ndisallow: /a # here\rALLOW : /a/b\n",
			token: "mybot", agent: "*",
			rules: []robotsRule{{"/a", false}, {"/a/b", true}},
		},
		{
			name:  "patterns normalised: leading slash, percent-encoding, runs of *",
			body:  "User-agent: *\nDisallow: private\nDisallow: /ツ\nDisallow: /%62%61%7a\nDisallow: /%2f%2F\nDisallow: /a***b\n",
			token: "mybot", agent: "*",
			rules: []robotsRule{{"/private", false}, {"/%E3%83%84", false}, {"/baz", false}, {"/%2F%2F", false}, {"/a*b", false}},
		},
		{
			name:  "fractional Crawl-delay",
			body:  "User-agent: *\nCrawl-delay: 0.5\n",
			token: "mybot", agent: "*", interval: 500 * time.Millisecond,
		},
		{
			name:  "Request-rate 1/5s",
			body:  "User-agent: *\nRequest-rate: 1/5s\n",
			token: "mybot", agent: "*", interval: 5 * time.Second,
		},
		{
			name:  "Request-rate forms",
			body:  "User-agent: mybot\nRequest-rate: 3/1m 0600-0845\n",
			token: "mybot", agent: "mybot", interval: 20 * time.Second,
		},
		{
			name:  "Crawl-delay and Request-rate: the longer interval",
			body:  "User-agent: *\nCrawl-delay: 2\nRequest-rate: 1/10\nCrawl-delay: 1\n",
			token: "mybot", agent: "*", interval: 10 * time.Second,
		},
		{
			name:  "the token's Crawl-delay, not *'s",
			body:  "User-agent: *\nCrawl-delay: 30\nUser-agent: mybot\nCrawl-delay: 1\n",
			token: "mybot", agent: "mybot", interval: time.Second,
		},
		{
			name:  "an absurd Crawl-delay is capped at 24 hours",
			body:  "User-agent: *\nCrawl-delay: 1e12\n",
			token: "mybot", agent: "*", interval: 24 * time.Hour,
		},
		{
			name:  "a Crawl-delay out of float range is capped",
			body:  "User-agent: *\nCrawl-delay: 1e999\n",
			token: "mybot", agent: "*", interval: 24 * time.Hour,
		},
		{
			name:  "unreadable pace records are ignored",
			body:  "User-agent: *\nCrawl-delay: -3\nCrawl-delay: NaN\nCrawl-delay: soon\nRequest-rate: 0/5\nRequest-rate: 1/5q\nRequest-rate: 5\nRequest-rate: -1/5\n",
			token: "mybot",
		},
		{
			name:  "Crawl-delay with a unit",
			body:  "User-agent: *\nCrawl-delay: 10s\n",
			token: "mybot", agent: "*", interval: 10 * time.Second,
		},
		{
			// Read as 1 s, less than asked, before.
			name:  "Crawl-delay in minutes",
			body:  "User-agent: *\nCrawl-delay: 2min\nCrawl-delay: 1m\n",
			token: "mybot", agent: "*", interval: 2 * time.Minute,
		},
		{
			name:  "Crawl-delay in hours",
			body:  "User-agent: *\nCrawl-delay: 1h\n",
			token: "mybot", agent: "*", interval: time.Hour,
		},
		{
			// A decimal comma: read as 1 s, less than asked, before.
			name:  "Crawl-delay with a decimal comma",
			body:  "User-agent: *\nCrawl-delay: 1,5\n",
			token: "mybot", agent: "*", interval: 1500 * time.Millisecond,
		},
		{
			name:  "Crawl-delay with a thousands separator",
			body:  "User-agent: *\nCrawl-delay: 1,500\n",
			token: "mybot", agent: "*", interval: 1500 * time.Second,
		},
		{
			name:  "an HTML page",
			body:  "<html><body>Not found: the page https://x.example/robots.txt</body></html>",
			token: "mybot",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := parseRobots([]byte(tt.body), tt.token)
			if f.agent != tt.agent || f.interval != tt.interval || !equalRules(f.ruleList(), tt.rules) {
				t.Errorf("parseRobots(%q, %q) = agent %q, rules %v, interval %v; want %q, %v, %v",
					tt.body, tt.token, f.agent, f.ruleList(), f.interval, tt.agent, tt.rules, tt.interval)
			}
		})
	}
}

func equalRules(a, b []robotsRule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseRobotsSizeLimit(t *testing.T) {
	pad := strings.Repeat("# padding\n", 60<<10) // 600 KiB
	for _, tt := range []struct {
		name string
		body string
		want int // rules kept
	}{
		{"rules within 512 KiB", "User-agent: *\nDisallow: /a\n" + pad[:400<<10] + "Disallow: /b\n", 2},
		{"rules past 512 KiB are ignored", "User-agent: *\nDisallow: /a\n" + pad + "Disallow: /b\n", 1},
		{"a line cut at 512 KiB is dropped", "User-agent: *\n" + pad[:maxRobotsBytes-len("User-agent: *\n")-8] + "Allow: /abcdefghijkl\n", 0},
		{"a line that ends at 512 KiB is kept", "User-agent: *\n" + comment(maxRobotsBytes-len("User-agent: *\n")-20) + "Disallow: /abcdefghi\n# more", 1},
		{"a line that ends at 512 KiB with CRLF is kept", "User-agent: *\n" + comment(maxRobotsBytes-len("User-agent: *\n")-20) + "Disallow: /abcdefghi\r\n", 1},
	} {
		if got := parseRobots([]byte(tt.body), "x").rules(); got != tt.want {
			t.Errorf("%s: %d rules, want %d", tt.name, got, tt.want)
		}
	}
}

// comment returns a comment line of n bytes, its newline included.
func comment(n int) string { return strings.Repeat("#", n-1) + "\n" }

func TestRobotsMatch(t *testing.T) {
	tests := []struct {
		rules string // robots.txt records for *
		path  string
		allow bool
		rule  string // the deciding rule, if any
	}{
		// RFC 9309 §2.2.2: the longest match wins; allow wins a tie.
		{"Allow: /p\nDisallow: /", "/page", true, "/p"},
		{"Allow: /folder\nDisallow: /folder", "/folder/page", true, "/folder"},
		{"Allow: /page\nDisallow: /*.htm", "/page.htm", false, "/*.htm"},
		{"Allow: /$\nDisallow: /", "/", true, "/$"},
		{"Allow: /$\nDisallow: /", "/page.htm", false, "/"},
		// RFC 9309 §2.2.3: * and $.
		{"Disallow: /*.php$", "/index.php", false, "/*.php$"},
		{"Disallow: /*.php$", "/index.php?x=1", true, ""},
		{"Disallow: /*.php$", "/filename.php/", true, ""},
		{"Disallow: /fish*", "/fish", false, "/fish*"},
		{"Disallow: /fish*", "/fishheads/yummy.html", false, "/fish*"},
		{"Disallow: /fish*", "/Fish.asp", true, ""},
		{"Disallow: /*.php", "/folder/filename.php?parameters", false, "/*.php"},
		{"Disallow: /*?", "/search?q=go", false, "/*?"},
		{"Disallow: /*?", "/search", true, ""},
		{"Disallow: /a*b*c$", "/axxbyyc", false, "/a*b*c$"},
		{"Disallow: /a*b*c$", "/axxbyycz", true, ""},
		{"Disallow: /a*bc*bc$", "/abcbcbc", false, "/a*bc*bc$"},
		{"Disallow: /a$b", "/a$b/c", false, "/a%24b"}, // $ inside is literal
		{"Disallow: /a$b", "/a%24b/c", false, "/a%24b"},
		// RFC 9309 §2.2.3's own examples: a pattern's "%2A" and "%24"
		// are the characters in a path. Before, neither matched.
		{"Disallow: /path/file-with-a-%2A.html", "/path/file-with-a-*.html", false, "/path/file-with-a-%2A.html"},
		{"Disallow: /path/foo-%24", "/path/foo-$", false, "/path/foo-%24"},
		{"Disallow: /path/foo-%24", "/path/foo-%24", false, "/path/foo-%24"},
		{"Disallow: /a*", "/a%2A", false, "/a*"},
		{"Disallow: /a%2A", "/ab", true, ""}, // an encoded '*' is no wildcard
		// A character a path segment holds as it is, encoded or not (Go
		// encodes "!'()" in EscapedPath). Before, "/wiki/Foo_%28bar%29"
		// was allowed by "Disallow: /wiki/Foo_(bar)".
		{"Disallow: /wiki/Foo_(bar)", "/wiki/Foo_%28bar%29", false, "/wiki/Foo_(bar)"},
		{"Disallow: /wiki/Foo_%28bar%29", "/wiki/Foo_(bar)", false, "/wiki/Foo_(bar)"},
		{"Disallow: /a!b", "/a%21b", false, "/a!b"},
		{"Disallow: /a:b@c", "/a%3Ab%40c", false, "/a:b@c"},
		// So in the query, where a pattern after its '*' may be: a rule
		// aimed at an encoded query matches it. (With the query left as
		// sent and the pattern decoded, "/*=http%3A" did not match
		// "?to=http%3A".)
		{"Disallow: /s?a=1&b", "/s?a=1%26b", false, "/s?a=1&b"},
		{"Disallow: /*=http%3A", "/go?to=http%3A%2F%2Fevil.example%2F", false, "/*=http:"},
		{"Disallow: /*%26", "/s?a=1%26b", false, "/*&"},
		{"Disallow: /search*q=a%2Cb", "/search?q=a%2Cb", false, "/search*q=a,b"},
		// Which rule is the more specific does not hang on encoding:
		// "/a$b" is 4 octets, encoded or not, "/a*bc" 5. (Counted as
		// encoded, "/a%24b", it was 6, and won.)
		{"Allow: /a$b\nDisallow: /a*bc", "/a$bc", false, "/a*bc"},
		{"Allow: /a%28b\nDisallow: /a(b", "/a(b", true, "/a(b"},
		// RFC 9309 §2.2.2's encoding table.
		{"Disallow: /foo/bar/ツ", "/foo/bar/%E3%83%84", false, "/foo/bar/%E3%83%84"},
		{"Disallow: /foo/bar/%E3%83%84", "/foo/bar/%e3%83%84", false, "/foo/bar/%E3%83%84"},
		{"Disallow: /foo/bar/%62%61%7A", "/foo/bar/baz", false, "/foo/bar/baz"},
		{"Disallow: /foo/bar/baz", "/foo/bar/%62%61%7A", false, "/foo/bar/baz"},
		{"Disallow: /a%2Fb", "/a/b", true, ""},           // an encoded reserved character stays encoded
		{"Disallow: /100%", "/100%25", false, "/100%25"}, // a bare '%' is the encoded one
		{"Disallow: /%0%61", "/%0a", true, ""},           // a decoded 'a' does not complete "%0" into an escape
		{"Disallow: /%0%61", "/%250a", false, "/%250a"},
		// A query's slashes match either spelling: the table's row
		// "/foo/bar?baz=https://foo.bar", a query built by url.Values
		// (which encodes them), and a '*' spanning the '?'. (Put in the
		// one form, "%2F" and '/' stayed apart in the query as in a
		// path, and each of these was sent.)
		{"Disallow: /foo/bar?baz=https://foo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar", false, "/foo/bar?baz=https://foo.bar"},
		{"Disallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar", "/foo/bar?baz=https://foo.bar", false, "/foo/bar?baz=https://foo.bar"},
		{"Disallow: /go?to=http://", "/go?to=http%3A%2F%2Fevil.example%2F", false, "/go?to=http://"},
		{"Disallow: /*=http://", "/go?to=http%3a%2f%2fevil.example", false, "/*=http://"},
		{"Disallow: /*=http%3A%2F%2F", "/go?to=http://evil.example", false, "/*=http:%2F%2F"},
		{"Disallow: /q?a=x/y%2Fz", "/q?a=x/y%2Fz", false, "/q?a=x/y/z"},
		// A '?' in the query too (url.Values sends %3F), and a rule
		// spelling its slashes both ways.
		{"Disallow: /go?url=https://evil.example/?ref", "/go?url=https%3A%2F%2Fevil.example%2F%3Fref%3D1", false, "/go?url=https://evil.example/?ref"},
		{"Disallow: /go?url=https:%2F/evil.example", "/go?url=https%3A%2F%2Fevil.example%2Fx", false, "/go?url=https://evil.example"},
		{"Disallow: /*%3Fref", "/go?url=x?ref", false, "/*%3Fref"},
		// The longest rule of any spelling decides, an Allow winning a tie.
		{"Allow: /go?to=http://ok\nDisallow: /go", "/go?to=http%3A%2F%2Fok", true, "/go?to=http://ok"},
		{"Allow: /go?to=http%3A%2F%2Fok\nDisallow: /go?to=http://", "/go?to=http://ok", true, "/go?to=http://ok"},
		{"Allow: /go?to=a/b\nDisallow: /go?to=a%2Fb", "/go?to=a/b", true, "/go?to=a/b"},
		// In the path they stay apart, and so before the '?'.
		{"Disallow: /a%2Fb", "/a/b?c=d/e", true, ""},
		// Nothing matches: allowed.
		{"Disallow: /private", "/public", true, ""},
		{"", "/anything", true, ""},
	}
	for _, tt := range tests {
		f := parseRobots([]byte("User-agent: *\n"+tt.rules+"\n"), "mybot")
		r, ok := f.matchQuery(robotsEscape(tt.path, false))
		allow := !ok || r.allow
		if allow != tt.allow || (ok && r.pattern != tt.rule) || (!ok && tt.rule != "") {
			t.Errorf("%q: match(%q) = %+v, %v (allowed %v); want allowed %v by %q", tt.rules, tt.path, r, ok, allow, tt.allow, tt.rule)
		}
	}
}

// TestRobotsMatchLinear checks that a pattern full of wildcards against a
// long path costs no more than a pass over each.
func TestRobotsMatchLinear(t *testing.T) {
	pattern := "/" + strings.Repeat("*a", 5000) + "*b"
	path := "/" + strings.Repeat("a", 1<<20)
	start := time.Now()
	if robotsMatch(pattern, path) {
		t.Fatal("matched a path without b")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("robotsMatch took %v", d)
	}
}

// refMatch is robotsMatch by a regular expression, to compare with.
func refMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	expr := "^" + strings.Join(parts, "(?s:.*)")
	if anchored {
		expr += "$"
	}
	return regexp.MustCompile(expr).MatchString(path)
}

func FuzzParseRobots(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /private\nAllow: /private/ok$\nCrawl-delay: 0.5\n", "/private/x", "mybot")
	f.Add("User-agent: mybot\nDisallow: /*.pdf$\nRequest-rate: 1/5s\n", "/a/b.pdf", "MyBot/1.0")
	f.Add("\xef\xbb\xbfuser-agent:*\r\ndisallow:/a*b*c$\r", "/axbyc", "")
	f.Add("User-agent: *\nDisallow: /%E3%83%84\nCrawl-delay: 1e999\n", "/ツ", "x")
	f.Add("User-agent: *\nDisallow: /%0%61\n", "%0%61", "x")
	f.Add("User-agent: *\nDisallow: /a%2A$b(%29*$\nAllow: /%24?%28\n", "/a*$b%28)?%28", "x")
	f.Fuzz(func(t *testing.T, body, path, ua string) {
		token := productToken(ua)
		a := parseRobots([]byte(body), token)
		b := parseRobots([]byte(body), token)
		if a.agent != b.agent || a.interval != b.interval || !equalRules(a.ruleList(), b.ruleList()) {
			t.Fatal("parseRobots is not deterministic")
		}
		if a.interval < 0 || a.interval > maxCrawlInterval {
			t.Fatalf("interval %v out of [0, %v]", a.interval, maxCrawlInterval)
		}
		p := robotsEscape(path, false)
		if robotsEscape(p, false) != p {
			t.Fatalf("robotsEscape(%q) = %q, not stable", path, p)
		}
		for _, r := range a.ruleList() {
			if r.pattern == "" || r.pattern[0] != '/' && r.pattern[0] != '*' || strings.Contains(r.pattern, "**") {
				t.Fatalf("pattern %q not normalised", r.pattern)
			}
			if q := robotsEscape(r.pattern, true); q != r.pattern {
				t.Fatalf("pattern %q escapes again to %q", r.pattern, q)
			}
			if got, want := robotsMatch(r.pattern, p), refMatch(r.pattern, p); got != want {
				t.Fatalf("robotsMatch(%q, %q) = %v, the regular expression says %v", r.pattern, p, got, want)
			}
		}
		a.match(p)
	})
}

// ruleList returns the rules of f, in order.
func (f *robotsFile) ruleList() []robotsRule {
	rules := make([]robotsRule, f.rules())
	for i := range rules {
		rules[i] = f.rule(i)
	}
	return rules
}

func TestRemoveDotSegments(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/", "/"},
		{"/a/b", "/a/b"},
		{"/a/./b", "/a/b"},
		{"/a/../b", "/b"},
		{"/a/b/..", "/a/"},
		{"/a/b/.", "/a/b/"},
		{"/..", "/"},
		{"/../../a", "/a"},
		{"/a/.b/..c/", "/a/.b/..c/"},
		{"//a/../b", "//b"},
		{"a/../b", "a/../b"}, // not a path from the root: as it is
	} {
		if got := removeDotSegments(tt.in); got != tt.want {
			t.Errorf("removeDotSegments(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Patterns that grow when normalised (an octet outside US-ASCII kept as
// three) are all kept, within three times what was read: RFC 9309 §2.5
// asks that 500 KiB be parsed. A first bound of 512 KiB kept dropped the
// last 3,477 of 11,686 rules of a 400 KiB file of such paths.
func TestParseRobotsKeptBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	rules := 0
	for b.Len() < maxRobotsBytes-200 {
		b.WriteString("Disallow: /" + strings.Repeat("\xe3", 100) + "\n")
		rules++
	}
	f := parseRobots([]byte(b.String()), "mybot")
	if f.rules() != rules {
		t.Errorf("kept %d rules of %d", f.rules(), rules)
	}
	if kept := len(f.patterns) + 4*len(f.ends); kept > 3*b.Len() {
		t.Errorf("kept %d bytes of rules for %d read", kept, b.Len())
	}
	if cap(f.ends) > len(f.ends)+len(f.ends)/8+8 { // size classes only
		t.Errorf("ends: cap %d for %d rules", cap(f.ends), len(f.ends))
	}
}
