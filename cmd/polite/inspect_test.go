package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"encoding/base64"
	"github.com/politehttp/polite/ratelimittest"
)

// inspectJSON runs inspect -json on url and decodes its output.
func inspectJSON(t *testing.T, url string, extra ...string) inspectReport {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args := append(append([]string{"-json"}, extra...), url)
	if err := runInspect(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runInspect(%q) = %v; stderr:\n%s", args, err, stderr.String())
	}
	var rep inspectReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("runInspect(%q) printed invalid JSON %q: %v", args, stdout.String(), err)
	}
	return rep
}

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func fmtQuotas(q []quotaJSON) string {
	b, _ := json.Marshal(q)
	return string(b)
}

func TestInspectIETF(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Name: "hourly", Quota: 100, Window: time.Hour}},
	})
	defer srv.Close()

	rep := inspectJSON(t, srv.URL+"/x")
	want := []quotaJSON{{
		Policy: "hourly", Unit: "requests", Limit: i64(100), WindowS: f64(3600),
		Remaining: i64(99), ResetS: f64(3600), Dialect: "ietf",
	}}
	if !reflect.DeepEqual(rep.Quotas, want) {
		t.Errorf("quotas = %s, want %s", fmtQuotas(rep.Quotas), fmtQuotas(want))
	}
	if rep.URL != srv.URL+"/x" || rep.Status != 200 || rep.RetryAfterS != nil || rep.FromCache {
		t.Errorf("url, status, retry_after_s, from_cache = %q, %d, %v, %v; want %q, 200, nil, false",
			rep.URL, rep.Status, rep.RetryAfterS, rep.FromCache, srv.URL+"/x")
	}
	if rep.Verdict != "pass" || rep.Rule != rulePassIETF || len(rep.Findings) != 0 {
		t.Errorf("verdict %q (%s), findings %q; want pass, none", rep.Verdict, rep.Rule, rep.Findings)
	}
}

func TestInspectIETFRefusal(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 1, Window: time.Minute}},
	})
	defer srv.Close()
	inspectJSON(t, srv.URL)
	rep := inspectJSON(t, srv.URL)
	want := []quotaJSON{{
		Policy: "default", Unit: "requests", Limit: i64(1), WindowS: f64(60),
		Remaining: i64(0), ResetS: f64(60), Dialect: "ietf",
	}}
	if rep.Status != 429 || !reflect.DeepEqual(rep.Quotas, want) {
		t.Errorf("status %d, quotas %s; want 429, %s", rep.Status, fmtQuotas(rep.Quotas), fmtQuotas(want))
	}
	if rep.RetryAfterS == nil || *rep.RetryAfterS != 60 {
		t.Errorf("retry_after_s = %v, want 60", rep.RetryAfterS)
	}
	if rep.Verdict != "pass" {
		t.Errorf("verdict = %q (%s), want pass", rep.Verdict, rep.Rule)
	}
}

// TestInspectGitHub checks that an epoch reset is measured against the
// response's own Date: inspect must report exactly X-RateLimit-Reset minus
// Date, whatever the clocks say.
func TestInspectGitHub(t *testing.T) {
	h := ratelimittest.NewHandler(ratelimittest.Config{
		Dialect:  ratelimittest.GitHub,
		Policies: []ratelimittest.Policy{{Quota: 5000, Window: time.Hour}},
	})
	var mu sync.Mutex
	var sent http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		mu.Lock()
		sent = w.Header().Clone()
		mu.Unlock()
	}))
	defer srv.Close()

	rep := inspectJSON(t, srv.URL)
	mu.Lock()
	defer mu.Unlock()
	date, err := http.ParseTime(sent.Get("Date"))
	if err != nil {
		t.Fatalf("server sent Date %q: %v", sent.Get("Date"), err)
	}
	epoch, err := strconv.ParseInt(sent.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		t.Fatalf("server sent X-RateLimit-Reset %q: %v", sent.Get("X-RateLimit-Reset"), err)
	}
	reset := float64(epoch - date.Unix())
	if reset < 3600 || reset > 3601 {
		t.Fatalf("server's reset is %vs after its Date, want 3600 or 3601", reset)
	}
	want := []quotaJSON{{
		Policy: "core", Unit: "requests", Limit: i64(5000), WindowS: nil,
		Remaining: i64(4999), ResetS: f64(reset), Dialect: "github",
	}}
	if !reflect.DeepEqual(rep.Quotas, want) {
		t.Errorf("quotas = %s, want %s", fmtQuotas(rep.Quotas), fmtQuotas(want))
	}
	if rep.Verdict != "partial" {
		t.Errorf("verdict = %q (%s), want partial", rep.Verdict, rep.Rule)
	}
	if !containsAll(rep.Findings, "only legacy or vendor fields (github)") {
		t.Errorf("findings %q do not say the fields are legacy only", rep.Findings)
	}
}

// containsAll reports whether some finding contains each of subs.
func containsAll(findings []string, subs ...string) bool {
	for _, s := range subs {
		found := false
		for _, f := range findings {
			if strings.Contains(f, s) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func TestInspectFindings(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		header   map[string]string
		verdict  string
		findings []string // each must appear in some finding
		clean    bool     // no findings at all
	}{
		{
			name:    "malformed draft-11",
			header:  map[string]string{"RateLimit-Policy": `default;q=10;w=60`, "RateLimit": `"default";r=-1;t=5`},
			verdict: "fail",
			findings: []string{
				`RateLimit-Policy "default;q=10;w=60" is not valid draft-11`, "item 1 is not a String",
				`RateLimit "\"default\";r=-1;t=5" is not valid draft-11`, "parameter r must be a non-negative Integer",
			},
		},
		{
			name:     "missing q",
			header:   map[string]string{"RateLimit-Policy": `"default";w=60`},
			verdict:  "fail",
			findings: []string{"item 1 lacks its required parameter q"},
		},
		{
			name:     "not a list",
			header:   map[string]string{"RateLimit": `"default";r=5,,`},
			verdict:  "fail",
			findings: []string{"not a Structured Fields List"},
		},
		{
			name:     "draft-11 read only leniently",
			header:   map[string]string{"RateLimit-Policy": `"fixed window";"api";q=1000;w=300`},
			verdict:  "partial",
			findings: []string{"not a Structured Fields List", "lenient readers (polite among them) still read it"},
		},
		{
			name:     "legacy only",
			header:   map[string]string{"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "59", "X-RateLimit-Reset": "30"},
			verdict:  "partial",
			findings: []string{"only legacy or vendor fields (x-ratelimit)"},
		},
		{
			name:     "legacy not numbers",
			header:   map[string]string{"X-RateLimit-Limit": "-60", "X-RateLimit-Remaining": "NaN"},
			verdict:  "fail",
			findings: []string{`X-RateLimit-Limit: "-60"`, `X-RateLimit-Remaining: "NaN"`},
		},
		{
			name:     "bare 429",
			status:   429,
			verdict:  "partial",
			findings: []string{"a 429 without a valid Retry-After"},
		},
		{
			name:    "429 with Retry-After",
			status:  429,
			header:  map[string]string{"Retry-After": "5"},
			verdict: "pass",
			clean:   true,
		},
		{
			name:     "503 with invalid Retry-After",
			status:   503,
			header:   map[string]string{"Retry-After": "soon"},
			verdict:  "fail",
			findings: []string{`Retry-After "soon" is not valid`, "a 503 without a valid Retry-After"},
		},
		{
			name:   "429 with spent quota but no Retry-After",
			status: 429,
			header: map[string]string{
				"RateLimit-Policy": `"burst";q=10;w=1`, "RateLimit": `"burst";r=0;t=1`,
			},
			verdict:  "pass",
			findings: []string{"a 429 without a valid Retry-After", "a spent quota's reset gives a wait"},
		},
		{
			name: "policy and limit do not match",
			header: map[string]string{
				"RateLimit-Policy": `"hour";q=1000;w=3600, "day";q=5000;w=86400`,
				"RateLimit":        `"hour";r=999;t=3000, "minute";r=9;t=30`,
			},
			verdict:  "pass",
			findings: []string{`RateLimit names "minute", which RateLimit-Policy does not list`, `RateLimit-Policy lists "day", which RateLimit does not mention`},
		},
		{
			name: "CORS hides fields",
			header: map[string]string{
				"Access-Control-Allow-Origin":   "*",
				"Access-Control-Expose-Headers": "RateLimit, ETag",
				"RateLimit-Policy":              `"default";q=10;w=60`,
				"RateLimit":                     `"default";r=9;t=60`,
			},
			verdict:  "pass",
			findings: []string{"Access-Control-Expose-Headers does not list RateLimit-Policy: browser scripts cannot read them"},
		},
		{
			name: "CORS exposes every field",
			header: map[string]string{
				"Access-Control-Allow-Origin":   "https://app.example",
				"Access-Control-Expose-Headers": "ratelimit-policy, ratelimit",
				"RateLimit-Policy":              `"default";q=10;w=60`,
				"RateLimit":                     `"default";r=9;t=60`,
			},
			verdict: "pass",
			clean:   true,
		},
		{
			name: "CORS wildcard with credentials",
			header: map[string]string{
				"Access-Control-Allow-Origin":      "https://app.example",
				"Access-Control-Allow-Credentials": "true",
				"Access-Control-Expose-Headers":    "*",
				"X-RateLimit-Limit":                "10",
				"X-RateLimit-Remaining":            "9",
			},
			verdict:  "partial",
			findings: []string{"does not list X-RateLimit-Limit, X-RateLimit-Remaining", "the wildcard * does not apply"},
		},
		{
			name:     "from a cache",
			header:   map[string]string{"Age": "30", "RateLimit-Policy": `"default";q=10;w=60`},
			verdict:  "pass",
			findings: []string{"came from a cache (Age: 30)", "RateLimit-Policy without RateLimit"},
		},
		{
			name:    "nothing",
			verdict: "fail",
			clean:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header()[k] = []string{v} // as written: some names are not canonical
				}
				w.WriteHeader(max(tt.status, 200))
			}))
			defer srv.Close()
			rep := inspectJSON(t, srv.URL)
			if rep.Verdict != tt.verdict {
				t.Errorf("verdict = %q (%s), want %q; findings %q", rep.Verdict, rep.Rule, tt.verdict, rep.Findings)
			}
			if !containsAll(rep.Findings, tt.findings...) {
				t.Errorf("findings = %q, want some containing each of %q", rep.Findings, tt.findings)
			}
			if tt.clean && len(rep.Findings) > 0 {
				t.Errorf("findings = %q, want none", rep.Findings)
			}
		})
	}
}

func TestInspectFromCacheJSON(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 10, Window: time.Minute}},
		Age:      5 * time.Second,
	})
	defer srv.Close()
	if rep := inspectJSON(t, srv.URL); !rep.FromCache {
		t.Errorf("from_cache = false for a response with Age: 5")
	}
}

func TestInspectSendsHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
	}))
	defer srv.Close()
	inspectJSON(t, srv.URL, "-H", "Origin: https://app.example", "-H", "X-Api-Key:  k1 ")
	if got.Get("Origin") != "https://app.example" || got.Get("X-Api-Key") != "k1" {
		t.Errorf("server got Origin %q, X-Api-Key %q; want https://app.example, k1", got.Get("Origin"), got.Get("X-Api-Key"))
	}
}

func TestInspectText(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 100, Window: time.Minute}},
	})
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{srv.URL}, &stdout, &stderr); err != nil {
		t.Fatalf("runInspect = %v; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"status: 200 OK", `ietf     "default"  requests  100    1m0s    99         1m0s`, "verdict: PASS"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("inspect output does not contain %q:\n%s", want, stdout.String())
		}
	}
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// With -json, a failure still prints one JSON object on stdout.
func TestInspectJSONError(t *testing.T) {
	refused := "http://" + closedPort(t) + "/"
	tests := []struct {
		name   string
		url    string
		status int // exit status run returns
	}{
		{"connection refused", refused, 1},
		{"invalid URL", "http://127.0.0.1:1/%zz", 2},
		{"not http", "ftp://127.0.0.1/x", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"inspect", "-json", tt.url}
			if got := run(t.Context(), args, &stdout, &stderr); got != tt.status {
				t.Errorf("run(%q) = %d, want %d", args, got, tt.status)
			}
			var obj map[string]any
			if err := json.Unmarshal(stdout.Bytes(), &obj); err != nil {
				t.Fatalf("run(%q) printed %q on stdout, not JSON: %v", args, stdout.String(), err)
			}
			if obj["url"] != tt.url || obj["error"] == "" || len(obj) != 2 {
				t.Errorf("run(%q) printed %v, want url %q and an error", args, obj, tt.url)
			}
			if stderr.Len() == 0 {
				t.Errorf("run(%q) wrote nothing on stderr", args)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	run(t.Context(), []string{"inspect", "-json", refused}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "connection refused") {
		t.Errorf("inspect -json %s printed %q, want the connection refused", refused, stdout.String())
	}
}

// A URL without a scheme is taken as http://, and inspect says so.
func TestInspectAssumesHTTP(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 100, Window: time.Minute}},
	})
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{"-json", hostPort}, &stdout, &stderr); err != nil {
		t.Fatalf("runInspect(%q) = %v; stderr:\n%s", hostPort, err, stderr.String())
	}
	var rep inspectReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if rep.URL != srv.URL || rep.Verdict != "pass" {
		t.Errorf("url %q, verdict %q; want %q, pass", rep.URL, rep.Verdict, srv.URL)
	}
	if want := "assuming " + srv.URL; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not contain %q", stderr.String(), want)
	}

	for in, want := range map[string]string{
		"127.0.0.1:18080":     "http://127.0.0.1:18080",
		"localhost:8080/x?y":  "http://localhost:8080/x?y",
		"api.example":         "http://api.example",
		"//api.example/x":     "http://api.example/x",
		"https://api.example": "https://api.example",
		"ftp://api.example":   "ftp://api.example",
	} {
		if got, _ := assumeHTTP(in); got != want {
			t.Errorf("assumeHTTP(%q) = %q, want %q", in, got, want)
		}
	}
}

// inspect's help: "A URL without a scheme, such as 127.0.0.1:8080, is taken
// as http://." assumeHTTP looked for "://" anywhere in the argument, so a
// URL without a scheme whose query held a URL (a redirect target, a
// callback) was not taken as http:// and was refused.
func TestInspectAssumesHTTPWithURLInQuery(t *testing.T) {
	srv := ratelimittest.NewServer(ratelimittest.Config{
		Policies: []ratelimittest.Policy{{Quota: 100, Window: 60e9}},
	})
	defer srv.Close()
	target := strings.TrimPrefix(srv.URL, "http://") + "/login?next=http://127.0.0.1/home"
	var stdout, stderr bytes.Buffer
	err := runInspect(t.Context(), []string{"-json", target}, &stdout, &stderr)
	if err != nil {
		t.Errorf("inspect %q = %v, want it taken as http://%s; stderr: %s", target, err, target, stderr.String())
	}
	if got := srv.Handler.Stats().Requests; got != 1 {
		t.Errorf("the server got %d requests, want 1", got)
	}
	for in, want := range map[string]string{
		"api.example/x#http://y": "http://api.example/x#http://y",
		"api.example?u=ftp://y":  "http://api.example?u=ftp://y",
		"a/b://c":                "http://a/b://c",
	} {
		if got, _ := assumeHTTP(in); got != want {
			t.Errorf("assumeHTTP(%q) = %q, want %q", in, got, want)
		}
	}
}

// inspect and get never print a credential: a URL's query or user
// information (in the request line, after redirects, in errors, in JSON),
// nor a partition key, which may be a user's id.
func TestCommandsShowNoSecret(t *testing.T) {
	const secret = "s3cr3t-key"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new?token="+secret, http.StatusFound)
			return
		}
		w.Header().Set("RateLimit-Policy", `"api";q=100;w=60;pk=:`+base64.StdEncoding.EncodeToString([]byte(secret))+`:`)
		w.Header().Set("RateLimit", `"api";r=99;t=60;pk=:`+base64.StdEncoding.EncodeToString([]byte(secret))+`:`)
	}))
	defer srv.Close()
	withUser := strings.Replace(srv.URL, "http://", "http://user:"+secret+"@", 1)
	refused := "http://user:" + secret + "@" + closedPort(t) + "/?api_key=" + secret
	for _, args := range [][]string{
		{"inspect", srv.URL + "/?api_key=" + secret},
		{"inspect", "-json", srv.URL + "/?api_key=" + secret},
		{"inspect", srv.URL + "/old"},
		{"inspect", withUser + "/"},
		{"inspect", refused},
		{"inspect", "-json", refused},
		{"inspect", strings.TrimPrefix(srv.URL, "http://") + "/?api_key=" + secret},
		{"inspect", "http://api.example/%zz?api_key=" + secret}, // a URL that does not parse
		{"inspect", "-json", "http://api.example/%zz?api_key=" + secret},
		{"get", "-o", t.TempDir(), srv.URL + "/?api_key=" + secret, withUser + "/x", refused},
		// curl's "user:password@host" with no scheme parses as an
		// opaque URL of the scheme "user".
		{"get", "alice:" + secret + "@127.0.0.1:1/x"},
		{"inspect", "alice:" + secret + "@127.0.0.1:1/x?next=http://y"},
		{"inspect", "-json", "alice:" + secret + "@127.0.0.1:1/x?next=http://y"},
		// A '/' in the password ends the authority early: the parse
		// error quotes the password's first part as a port.
		{"get", "http://alice:" + secret + "/tail@127.0.0.1:1/x"},
		{"inspect", "http://alice:" + secret + "/tail@127.0.0.1:1/x"},
		{"inspect", "-json", "http://alice:" + secret + "/tail@127.0.0.1:1/x"},
		// A '?' in the password: the URL does not parse, and the query
		// was cut before the user information.
		{"get", "http://alice:" + secret + "?tail@127.0.0.1:1/x"},
		{"inspect", "http://alice:" + secret + "?tail@127.0.0.1:1/x"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if strings.Contains(out, secret) || strings.Contains(out, base64.StdEncoding.EncodeToString([]byte(secret))) {
			t.Errorf("polite %s (exit %d) printed the secret:\n%s", strings.Join(args, " "), code, out)
		}
	}
	var stdout, stderr bytes.Buffer
	run(t.Context(), []string{"inspect", srv.URL + "/"}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "pk=sha256:") {
		t.Errorf("inspect shows no hash of the partition key:\n%s", stdout.String())
	}
}

// A RateLimit field that is not valid draft-11 is quoted in a finding with
// its partition keys shown by their hash, as everywhere else (SECURITY.md):
// it was quoted whole, pk included, in text and JSON.
func TestInspectMalformedFieldHidesPartitionKey(t *testing.T) {
	const pk = "c2stbGl2ZS1wYXJ0aXRpb24tc2VjcmV0" // base64 of "sk-live-partition-secret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"default";q=100;w=60;pk=:`+pk+`:`)
		// A stray member after the valid one: not valid draft-11.
		w.Header().Set("RateLimit", `"default";r=50;t=30;pk=:`+pk+`:, @`)
	}))
	defer srv.Close()
	for _, json := range []bool{false, true} {
		var stdout, stderr bytes.Buffer
		args := []string{srv.URL}
		if json {
			args = []string{"-json", srv.URL}
		}
		if err := runInspect(t.Context(), args, &stdout, &stderr); err != nil {
			t.Fatalf("runInspect: %v", err)
		}
		out := stdout.String() + stderr.String()
		if strings.Contains(out, pk) {
			t.Errorf("inspect (json %v) prints the partition key verbatim:\n%s", json, out)
		}
	}
}

// Every spelling of a partition key in a malformed field is shown by its
// hash. Before, the value ran to the first quote, escaped or not, or to the
// first space: a String with an escaped quote, or a value after a space,
// was quoted in clear from there.
func TestShownFieldHidesPartitionKeys(t *testing.T) {
	const secret = "sk-live-partition-secret"
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	for _, v := range []string{
		`"default";r=50;t=30;pk="ab\"` + secret + `"`, // an escaped quote
		`"default";r=50;t=30;pk= :` + b64 + `:`,       // a space after '='
		`"default";r=50;t=30;pk=(:` + b64 + `: :x:)`,  // an Inner List
		`"default";r=50;t=30;PK=:` + b64 + `:`,        // the name in capitals
		`"default";r=50;t=30;pk =:` + b64 + `:`,       // a space before '='
		`"default";r=50;pk=:` + b64 + `:;t=30, @`,     // a parameter after it
		`"default";r=50;t=30;pk="` + secret,           // a String that never ends
	} {
		got := shownField(v)
		if strings.Contains(got, secret) || strings.Contains(got, b64) {
			t.Errorf("shownField(%s) = %s: the partition key in clear", v, got)
		}
	}
	v := `"default";r=50;pk=:` + b64 + `:;t=30, "other";r=1`
	want := `"default";r=50;pk=` + shownPartition([]byte(":"+b64+":")) + `;t=30, "other";r=1`
	if got := shownField(v); got != want {
		t.Errorf("shownField(%s) = %s, want %s", v, got, want)
	}
}

// A redirect whose Location does not parse fails with an error that
// quotes it: inspect and get show it without its query, as any URL
// (SECURITY.md, "a URL that does not parse included"). It was shown whole.
func TestRedirectLocationHidesQuery(t *testing.T) {
	const secret = "token=sk-live-redirect-secret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://[::1/next?"+secret)
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()

	t.Run("inspect", func(t *testing.T) {
		for _, args := range [][]string{{srv.URL}, {"-json", srv.URL}} {
			var stdout, stderr bytes.Buffer
			err := runInspect(t.Context(), args, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if err != nil {
				out += err.Error()
			}
			if strings.Contains(out, "sk-live") {
				t.Errorf("inspect %q shows the query of a URL:\n%s", args, out)
			}
		}
	})
	t.Run("get", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		err := runGet(t.Context(), []string{srv.URL + "/a"}, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if err != nil {
			out += err.Error()
		}
		if strings.Contains(out, "sk-live") {
			t.Errorf("get shows the query of a URL:\n%s", out)
		}
	})
}

// The finding on a malformed draft-11 field says lenient readers still
// read it only when polite took something from that field: here a valid
// RateLimit-Policy was read, and nothing of the malformed RateLimit. The
// claim was made whenever any draft-11 quota was read.
func TestInspectLenientClaimPerField(t *testing.T) {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"default";q=100;w=60`)
	h.Set("RateLimit", `"default";r=50;t=30, @`)
	rep := examine(200, h, nil, nil, time.Time{}, time.Now())
	claims := false
	for _, f := range rep.Findings {
		if strings.HasPrefix(f, "RateLimit \"") && strings.Contains(f, "polite among them) still read it") {
			claims = true
		}
	}
	readRemaining := false
	for _, q := range rep.Quotas {
		if q.Remaining != nil {
			readRemaining = true
		}
	}
	if claims && !readRemaining {
		t.Errorf("finding says polite still reads the malformed RateLimit, but no quota has a remaining count from it: quotas %s, findings %q", fmtQuotas(rep.Quotas), rep.Findings)
	}
}

// "(after redirects: …)" is printed only after a redirect: a URL whose
// scheme was in upper case, not redirected, printed it.
func TestInspectNoRedirectNoteWithoutRedirect(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	target := strings.Replace(srv.URL, "http://", "HTTP://", 1) + "/x"
	if err := runInspect(t.Context(), []string{target}, &stdout, &stderr); err != nil {
		t.Fatalf("runInspect: %v", err)
	}
	if hits.Load() == 1 && strings.Contains(stdout.String(), "after redirects") {
		t.Errorf("one request, no redirect, but inspect says:\n%s", strings.SplitN(stdout.String(), "\n", 2)[0])
	}
}

// errWriter fails every write, as stdout on a full disk or a closed pipe.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }

// A report that could not be written fails inspect, in text as in JSON:
// in text it exited 0.
func TestInspectWriteErrorReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{"-json", srv.URL}, errWriter{}, &stderr); err == nil {
		t.Errorf("inspect -json: write error not reported")
	}
	if err := runInspect(t.Context(), []string{srv.URL}, errWriter{}, &stderr); err == nil {
		t.Errorf("inspect (text): the report could not be written, but runInspect = nil (exit 0)")
	}
}

// SECURITY.md: "The polite command shows URLs without their user
// information or query (a URL that does not parse included)". A URL that
// does not parse (a bad escape, a typo in an IPv6 literal) whose query
// holds an '@' (an e-mail address, say) was shown with the rest of its
// query: shownURL cut at the last '@' as if it ended user information.
func TestShownURLUnparsableQueryWithAt(t *testing.T) {
	for _, raw := range []string{
		"http://127.0.0.1:1/%zz?email=a@b.example&api_key=SECRETQ",
		"http://[::1:1/x?email=a@SECRETQ",
	} {
		if got := shownURL(raw); strings.Contains(got, "SECRETQ") {
			t.Errorf("shownURL(%q) = %q: the query is shown", raw, got)
		}
	}
}

// The same through the commands: get's JSON line and inspect -json.
func TestCommandsShowNoQueryOfUnparsableURL(t *testing.T) {
	const raw = "http://127.0.0.1:1/%zz?email=a@b.example&api_key=SECRETQ"
	var out, errb bytes.Buffer
	getMain(t.Context(), []string{raw}, strings.NewReader(""), &out, &errb)
	if s := out.String() + errb.String(); strings.Contains(s, "SECRETQ") {
		t.Errorf("polite get printed the query:\n%s", s)
	}
	out.Reset()
	errb.Reset()
	err := runInspect(t.Context(), []string{"-json", raw}, &out, &errb)
	s := out.String() + errb.String()
	if err != nil {
		s += showError(err).Error()
	}
	if strings.Contains(s, "SECRETQ") {
		t.Errorf("polite inspect printed the query:\n%s", s)
	}
}

// A URL given without a scheme whose query held another URL that does not
// parse (a placeholder left in, as copied from an API's documentation)
// was shown with its query: authority took the first "//" of the string,
// inside the query, for the authority's, found that it did not parse, and
// shownURL returned everything up to it.
func TestShownURLSchemelessQueryWithURL(t *testing.T) {
	const raw = "127.0.0.1:1/cb?api_key=SECRETQ&redirect_uri=http://localhost:{port}/cb"
	if got, want := shownURL(raw), "127.0.0.1:1/cb?…"; got != want {
		t.Errorf("shownURL(%q) = %q, want %q", raw, got, want)
	}
	for _, args := range [][]string{
		{"get", raw},
		{"inspect", raw},
		{"inspect", "-json", raw},
		{raw}, // the command forgotten: "unknown command"
	} {
		if out, code := commandOutput(t, args...); strings.Contains(out, "SECRETQ") {
			t.Errorf("polite %q (exit %d) printed the query:\n%s", args, code, out)
		}
	}
}

// SECURITY.md: absurd values "saturate or are ignored; they never wrap
// around". A server's enormous Retry-After (or w, or t) is read saturated
// (about 292 years; the JSON says 9223372036.854776 s); inspect's text
// report converted it back to a Duration with an overflowing float
// conversion, and printed it negative: "retry-after: -2562047h47m16.854775808s".
func TestInspectSaturatedDurationNotNegative(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "99999999999999999999")
		w.Header().Set("RateLimit-Policy", `"default";q=100;w=99999999999999`)
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	if err := runInspect(t.Context(), []string{srv.URL}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "-2562047h") {
			t.Errorf("a saturated duration is printed negative: %q", line)
		}
	}
}

// SECURITY.md: "The polite command shows URLs without their user
// information or query". A password holding '#' or '/' unescaped, whose
// first part is digits, makes the URL parse (host "user", port 1234), and
// it was shown whole; with letters first it does not parse and is cut.
func TestShownURLPasswordAfterDigits(t *testing.T) {
	for _, raw := range []string{
		"http://user:abcd#SECRET@example.com/", // cut: does not parse
		"http://user:1234#SECRET@example.com/",
		"http://user:1234/SECRET@example.com/",
	} {
		if s := shownURL(raw); strings.Contains(s, "SECRET") {
			t.Errorf("shownURL(%q) = %q: the password shows", raw, s)
		}
	}
}

// urlErrText: "For a URL that did not parse itself, what it quotes of the
// URL is elided: a password with a '/' in it ends the authority early,
// and the error quotes its first part as a port." A redirect's Location
// that does not parse is quoted by net/http inside a *url.Error of Op
// "Get", and its nested parse error's port quotation was shown.
func TestInspectLocationPortNotShown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://user:SECRET/x@example.com/")
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	for _, json := range []bool{false, true} {
		args := []string{srv.URL + "/"}
		if json {
			args = append([]string{"-json"}, args...)
		}
		var stdout, stderr bytes.Buffer
		err := runInspect(t.Context(), args, &stdout, &stderr)
		all := stdout.String() + stderr.String()
		if err != nil {
			all += err.Error()
		}
		if strings.Contains(all, "SECRET") {
			t.Errorf("-json %v: the Location's password shows: %q", json, all)
		}
	}
}
