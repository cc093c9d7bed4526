package polite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// dialedHost returns the host[:port] net/http dials for rawURL.
func dialedHost(t *testing.T, rawURL string) string {
	t.Helper()
	var dialed string
	tr := &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		dialed = addr
		return nil, errors.New("no network here")
	}}
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.RoundTrip(req)
	return dialed
}

// answerOK answers every request 200, with no fields.
func answerOK(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// "STRAẞE.example" (capital sharp s, U+1E9E) is dialed by net/http as
// "strasse.example" (IDNA/UTS #46 maps ẞ to "ss"). Lower-cased with the
// simple mapping to "ß", it was keyed as "straße.example"
// (xn--strae-oqa), another host net/http dials: two servers shared one
// budget (a refusal of one paused the other), and the server reached got
// a budget of its own beside its ASCII spelling's.
func TestCapitalSharpSKeyedAsDialed(t *testing.T) {
	upper, sharp, ascii := "http://STRA\u1e9eE.example/", "http://stra\u00dfe.example/", "http://strasse.example/"
	if a, b := dialedHost(t, upper), dialedHost(t, sharp); a == b {
		t.Skipf("net/http dials %q and %q alike: nothing to tell apart", a, b)
	}
	tr := &polite.Transport{Base: roundTripFunc(answerOK)}
	resp, err := tr.RoundTrip(mustReq(t, upper))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	now := time.Now()
	if st, ok := tr.Inspect(sharp, now); ok {
		t.Errorf("a request to %s (dialed %s) made the state of %s (key %q, dialed %s): two servers, one budget",
			upper, dialedHost(t, upper), sharp, st.Key, dialedHost(t, sharp))
	}
	if _, ok := tr.Inspect(ascii, now); !ok {
		t.Errorf("a request to %s (dialed %s) is not under the key of %s, the host it reached", upper, dialedHost(t, upper), ascii)
	}
}

func mustReq(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// One IPv6 address written two ways is one server (net/http connects to
// the same address), and one budget: "[2001:db8::1]" and
// "[2001:0DB8:0:0:0:0:0:1]" got two keys, and a client alternating
// spellings sent twice the rate.
func TestIPv6SpellingsShareOneBudget(t *testing.T) {
	a, b := "http://[2001:db8::1]/", "http://[2001:0DB8:0:0:0:0:0:1]/"
	ha, _ := url.Parse(a)
	hb, _ := url.Parse(b)
	if !net.ParseIP(ha.Hostname()).Equal(net.ParseIP(hb.Hostname())) {
		t.Fatal("not one address")
	}
	oneBudget(t, a, b)
}

// Two partition keys (pk) that differ only after their 128th byte are
// two partitions (draft-11 §3.1.4: the pk identifies the partition). A
// key kept the first 128 bytes of a pk, and merged them into one policy
// whose observations overwrote each other's; it keeps a long pk's SHA-256
// digest now, which Inspect hashes (PolicyState.Partition).
func TestLongPartitionKeysKeptApart(t *testing.T) {
	pk := func(c byte) []byte { return append(bytes.Repeat([]byte("p"), 160), c) }
	pkA, pkB := pk('a'), pk('b')
	n := 0
	tr := &polite.Transport{Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		p := pkA
		if n++; n%2 == 0 {
			p = pkB
		}
		b64 := base64.StdEncoding.EncodeToString(p)
		h := http.Header{}
		h.Set("RateLimit-Policy", fmt.Sprintf(`"api";q=100;w=60;pk=:%s:`, b64))
		h.Set("RateLimit", fmt.Sprintf(`"api";r=50;t=30;pk=:%s:`, b64))
		return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, Request: r}, nil
	})}
	for range 2 {
		resp, err := tr.RoundTrip(mustReq(t, "http://pk.test/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	st, ok := tr.Inspect("http://pk.test", time.Now())
	if !ok {
		t.Fatal("no state")
	}
	hash := func(p []byte) string {
		d := sha256.Sum256(p)
		s := sha256.Sum256(d[:])
		return "sha256:" + hex.EncodeToString(s[:8])
	}
	got := map[string]bool{}
	for _, p := range st.Policies {
		got[p.Partition] = true
	}
	for _, want := range []string{hash(pkA), hash(pkB)} {
		if !got[want] {
			t.Errorf("no policy with Partition %s; policies: %+v", want, st.Policies)
		}
	}
}

// TestIPv4MappedSharesOneBudget: "[::ffff:192.0.2.1]" is the IPv4
// address 192.0.2.1 (a socket to it reaches the IPv4 host); kept an IPv6
// key, it gave one server two budgets.
func TestIPv4MappedSharesOneBudget(t *testing.T) {
	a, b := "http://192.0.2.1/", "http://[::ffff:192.0.2.1]/"
	if netip.MustParseAddr("::ffff:192.0.2.1").Unmap() != netip.MustParseAddr("192.0.2.1") {
		t.Fatal("not one address")
	}
	oneBudget(t, a, b)
}

// oneBudget checks that a request to a makes the state Inspect finds for
// b, one address spelled two ways.
func oneBudget(t *testing.T, a, b string) {
	t.Helper()
	tr := &polite.Transport{Base: roundTripFunc(answerOK)}
	resp, err := tr.RoundTrip(mustReq(t, a))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sa, _ := tr.Inspect(a, time.Now())
	if sb, ok := tr.Inspect(b, time.Now()); !ok || sb.Key != sa.Key {
		t.Errorf("Inspect(%s) = key %q (found %v); the request to %s used %q: one address, two budgets", b, sb.Key, ok, a, sa.Key)
	}
}
