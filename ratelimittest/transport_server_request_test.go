package ratelimittest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// unsized is a request body whose length the client does not know (an
// upload streamed from a pipe or a generator): http.NewRequest leaves
// ContentLength 0 for it, which for a client request means "unknown".
type unsized struct{ io.Reader }

// Transport's doc: Handler serves "a copy of the request shaped like one a
// server receives". A server receives a body of unknown length as
// ContentLength -1 (chunked); for an incoming request, 0 means no body.
// The Transport handed Handler the client's ContentLength 0 with the
// body, so a Handler that trusts it lost the body: httputil.ReverseProxy
// (the Handler here, in front of an echo) drops the body of a request
// whose ContentLength is 0, and the echo got nothing.
func TestTransportServerRequestUnknownLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var length int64
		var te []string
		echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(w, r.Body)
		})
		front := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			length, te = r.ContentLength, r.TransferEncoding
			proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: "backend.test"})
			proxy.Transport = &ratelimittest.Transport{Handler: echo}
			proxy.ServeHTTP(w, r)
		})
		c := client(front)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://api.test/upload", unsized{strings.NewReader("hello")})
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if length != -1 {
			t.Errorf("Handler saw ContentLength %d, TransferEncoding %q; a server sees -1, [chunked]", length, te)
		}
		if string(body) != "hello" {
			t.Errorf("a ReverseProxy Handler passed on the body %q, want %q", body, "hello")
		}
	})
}

// An http.Request whose Method is empty means GET (net/http: "For client
// requests, an empty string means GET"), and a server receives it as GET.
// The Transport's Handler must see the request "shaped like one a server
// receives": Method "GET", so that an http.ServeMux pattern "GET /items"
// matches it as it does over a socket. The Handler saw Method "", and the
// mux answered 405.
func TestTransportEmptyMethodIsGET(t *testing.T) {
	var seen string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "items")
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Method
		mux.ServeHTTP(w, r)
	})
	c := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}
	u, _ := url.Parse("http://example.test/items")
	resp, err := c.Do(&http.Request{URL: u, Header: http.Header{}}) // Method "": GET
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen != http.MethodGet || resp.StatusCode != http.StatusOK {
		t.Errorf("Handler saw Method %q and answered %d; a server sees %q and the mux answers 200", seen, resp.StatusCode, http.MethodGet)
	}
}

// A server receives request header keys in canonical form (textproto
// canonicalizes what it reads), whatever case the client wrote them in.
// The Transport promises the Handler "a copy of the request shaped like one
// a server receives", so a Partition that reads r.Header.Get("X-Api-Key")
// must see the key a client set as req.Header["x-api-key"]. The Handler
// saw the key as written: Get found nothing, every client fell in the ""
// partition, and the second key was refused.
func TestTransportCanonicalRequestHeaderKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies: []ratelimittest.Policy{{
				Quota: 1, Window: time.Hour,
				Partition: func(r *http.Request) string { return r.Header.Get("X-Api-Key") },
			}},
		})
		c := &http.Client{Transport: &ratelimittest.Transport{Handler: h}}
		for _, key := range []string{"alice", "bob"} {
			req, _ := http.NewRequest(http.MethodGet, "http://example.test/", nil)
			req.Header["x-api-key"] = []string{key} // sent as "x-api-key: alice"
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("key %q: status %d, want 200 (its own partition, as over a socket); RateLimit %q",
					key, resp.StatusCode, resp.Header.Get("RateLimit"))
			}
		}
	})
}

// A request whose Header holds a key in two cases ("X-A" and "x-a") is
// written by net/http's client in sorted key order (Header.Write sorts:
// "X-A" before "x-a"), and a server reads X-A: [2 1], always. Merged in
// map order, the Handler saw [2 1] or [1 2] at random, and
// r.Header.Get("X-A") changed from run to run.
func TestTransportRequestValueOrder(t *testing.T) {
	var got [][]string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, slices.Clone(r.Header["X-A"]))
	})
	tr := &ratelimittest.Transport{Handler: h}
	for range 64 {
		req, _ := http.NewRequest(http.MethodGet, "http://example.test/", nil)
		req.Header["X-A"] = []string{"2"}
		req.Header["x-a"] = []string{"1"}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	bad := 0
	for _, vs := range got {
		if !slices.Equal(vs, []string{"2", "1"}) {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d requests: Handler saw X-A in another order than [2 1], the order a server reads (e.g. %v)", bad, len(got), got[slices.IndexFunc(got, func(vs []string) bool { return !slices.Equal(vs, []string{"2", "1"}) })])
	}
}

// The headers the Transport hands its Handler, and its caller, read as
// a loopback server's: request fields net/http's client never writes from
// Header (Host, Trailer) reached the Handler (canonicalised even from
// "host"); and a response's http.TrailerPrefix key ("Trailer:X-U"), which
// no server sends as a header line, was returned in Response.Header.
func TestTransportHeadersMatchServer(t *testing.T) {
	var reqHdr http.Header
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqHdr = r.Header.Clone()
		w.Header()["Trailer:X-U"] = []string{"u"}
		io.WriteString(w, "hi")
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	send := func(rt http.RoundTripper, base string) http.Header {
		req, _ := http.NewRequest(http.MethodGet, base+"/p", nil)
		req.Header["host"] = []string{"hdr-host"}
		req.Header["Trailer"] = []string{"X-Q"}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header
	}
	realResp := send(http.DefaultTransport, srv.URL)
	realReq := reqHdr
	fakeResp := send(&ratelimittest.Transport{Handler: h}, "http://api.example")
	fakeReq := reqHdr
	for _, k := range []string{"Host", "Trailer"} {
		if _, inReal := realReq[k]; fakeReq.Get(k) != "" && !inReal {
			t.Errorf("Handler's request Header[%q] = %q; a server's has none", k, fakeReq[k])
		}
	}
	if _, inReal := realResp["Trailer:X-U"]; fakeResp["Trailer:X-U"] != nil && !inReal {
		t.Errorf("Response.Header has %q = %q; a server sends no such header line", "Trailer:X-U", fakeResp["Trailer:X-U"])
	}
}

// trailerViews returns what a Handler sees of a request, and what the client sees
// of a response declaring a trailer, through rt.
func trailerViews(t *testing.T, rt http.RoundTripper, url string, mk func(string) *http.Request) (string, string) {
	req := mk(url)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// resp.Trailer is left out: the Transport's doc says trailers are
	// not passed on.
	return string(b), fmt.Sprintf("Trailer header %q, X-T header %q", resp.Header["Trailer"], resp.Header["X-T"])
}

// Trailers read as over a loopback server: the Handler's request knew the
// values of a client's trailers before its body was read (cloned), where
// a server knows a chunked body's declared names only, and a body of known
// length none; and the client saw the Trailer line a Handler declares,
// which net/http's server sends chunked and its client moves out of the
// header.
func TestTransportTrailersAsServer(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before := fmt.Sprint(r.Trailer)
		io.ReadAll(r.Body)
		w.Header().Set("Trailer", "X-T")
		// What is read after the body is left out: trailers are not passed on.
		fmt.Fprintf(w, "Trailer header %q, TE %q, CL %d, Trailer before read %s", r.Header["Trailer"], r.TransferEncoding, r.ContentLength, before)
		w.Header().Set("X-T", "v")
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	cases := map[string]func(string) *http.Request{
		"trailer, known length": func(u string) *http.Request {
			r, _ := http.NewRequest("POST", u, strings.NewReader("abc"))
			r.Trailer = http.Header{"X-R": {"1"}}
			return r
		},
		"trailer, chunked": func(u string) *http.Request {
			r, _ := http.NewRequest("POST", u, io.NopCloser(strings.NewReader("abc")))
			r.ContentLength = -1
			r.TransferEncoding = []string{"chunked"}
			r.Trailer = http.Header{"X-R": {"1"}}
			return r
		},
	}
	for name, mk := range cases {
		sreq, sresp := trailerViews(t, srv.Client().Transport, srv.URL, mk)
		treq, tresp := trailerViews(t, &ratelimittest.Transport{Handler: h}, "http://example.com/", mk)
		if sreq != treq {
			t.Errorf("%s: Handler's request\nserver:    %s\nTransport: %s", name, sreq, treq)
		}
		if sresp != tresp {
			t.Errorf("%s: client's response\nserver:    %s\nTransport: %s", name, sresp, tresp)
		}
	}
}

// A response that is not chunked (an explicit Content-Length, a 204, a
// HEAD) keeps its Trailer line in resp.Header over net/http's client
// (fixTrailer, issue #27197); only a chunked response moves it out. A
// change that dropped the line from every response of this Transport
// dropped it from these.
func TestTransportTrailerLineKeptWhenNotChunked(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-R")
		if r.URL.Path == "/204" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("hi"))
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, p := range []string{"/cl", "/204"} {
		var got [2][]string
		for i, rt := range []http.RoundTripper{http.DefaultTransport, &ratelimittest.Transport{Handler: h}} {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+p, nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			got[i] = resp.Header["Trailer"]
		}
		if len(got[0]) != len(got[1]) {
			t.Errorf("%s: Trailer header line: loopback %q, ratelimittest %q", p, got[0], got[1])
		}
	}
}

// A Handler that declares a trailer and flushes gets a chunked response,
// from this Transport as from a server; net/http's client then moves the
// Trailer line out of resp.Header, which this Transport kept.
func TestTransportTrailerLineGoneWhenChunked(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-T")
		w.Write([]byte("hi"))
		w.(http.Flusher).Flush()
		w.Header().Set("X-T", "v")
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	var got [2][]string
	var te [2][]string
	for i, rt := range []http.RoundTripper{http.DefaultTransport, &ratelimittest.Transport{Handler: h}} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got[i], te[i] = resp.Header["Trailer"], resp.TransferEncoding
	}
	if len(got[0]) != len(got[1]) {
		t.Errorf("chunked (TE %q / %q): Trailer header line: loopback %q, ratelimittest %q", te[0], te[1], got[0], got[1])
	}
}

// trailerSummary is what a test compares of a response.
func trailerSummary(resp *http.Response) string {
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return fmt.Sprintf("CL=%d TE=%q Trailer=%q Content-Length=%q body=%q err=%v",
		resp.ContentLength, resp.TransferEncoding, resp.Header["Trailer"], resp.Header["Content-Length"], b, err)
}

// The Transport answers as a loopback net/http server does for a Handler
// that declares trailers and does not flush: no length stated for HEAD
// either, and trailers declared by an empty Trailer line or a key of
// http.TrailerPrefix too.
func TestTransportDeclaredTrailersAsServer(t *testing.T) {
	cases := []struct {
		name, method string
		h            http.HandlerFunc
	}{
		{"200 declared", "GET", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Trailer", "X-T"); w.Write([]byte("hi")) }},
		{"200 declared CL", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-T")
			w.Header().Set("Content-Length", "2")
			w.Write([]byte("hi"))
		}},
		{"204 declared", "GET", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Trailer", "X-T"); w.WriteHeader(204) }},
		{"304 declared", "GET", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Trailer", "X-T"); w.WriteHeader(304) }},
		{"HEAD declared", "HEAD", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Trailer", "X-T"); w.Write([]byte("hi")) }},
		{"HEAD declared empty", "HEAD", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Trailer", "X-T") }},
		{"nothing", "GET", func(w http.ResponseWriter, r *http.Request) {}},
		{"200 empty declared", "GET", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Trailer", "X-T"); w.WriteHeader(200) }},
		{"prefix only", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(http.TrailerPrefix+"X-T", "v")
			w.Write([]byte("hi"))
		}},
		{"empty Trailer value", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Trailer"] = []string{""}
			w.Write([]byte("hi"))
		}},
		{"flushed declared", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-T")
			w.Write([]byte("hi"))
			w.(http.Flusher).Flush()
		}},
		{"flushed declared CL", "GET", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-T")
			w.Header().Set("Content-Length", "2")
			w.Write([]byte("hi"))
			w.(http.Flusher).Flush()
		}},
	}
	for _, c := range cases {
		srv := httptest.NewServer(c.h)
		req, _ := http.NewRequest(c.method, srv.URL, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		want := trailerSummary(resp)
		srv.Close()
		req, _ = http.NewRequest(c.method, "http://h.test/", nil)
		resp, err = (&ratelimittest.Transport{Handler: c.h}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := trailerSummary(resp); got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
}

// Handler sees the URL a server parses from the request target: the path
// and the query, never the scheme, host or userinfo (a credential) of the
// URL the client was given; the host is in Host, and a request to https
// has TLS set, as a server's over TLS does.
func TestTransportServerRequestURL(t *testing.T) {
	for _, c := range []struct {
		url, path, query string
		tls              bool
	}{
		{"http://alice:s3cret@api.test/a/b?k=v", "/a/b", "k=v", false},
		{"https://alice:s3cret@api.test:8443/x%2Fy", "/x/y", "", true},
		{"HTTPS://api.test/", "/", "", true},
		{"http://api.test?k=v", "/", "k=v", false}, // an empty path is sent as "/"
	} {
		var got *http.Request
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r })
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		u := got.URL
		if u.Scheme != "" || u.Host != "" || u.User != nil || u.Path != c.path || u.RawQuery != c.query {
			t.Errorf("%s: Handler's URL %#v, want the path %q and query %q alone", c.url, u, c.path, c.query)
		}
		if got.Host != req.URL.Host || (got.TLS != nil) != c.tls {
			t.Errorf("%s: Handler's Host %q, TLS %v; want %q, TLS %v", c.url, got.Host, got.TLS != nil, req.URL.Host, c.tls)
		}
		if strings.Contains(fmt.Sprint(*got), "s3cret") {
			t.Errorf("%s: the userinfo reached Handler: %v", c.url, *got)
		}
	}
}
