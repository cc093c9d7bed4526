package polite_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// draft11 answers every request at once with one draft-11 field pair.
func draft11(req *http.Request) (*http.Response, error) {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"default";q=100;w=60`)
	h.Set("RateLimit", `"default";r=99;t=60`)
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: http.NoBody, ContentLength: 0, Request: req}, nil
}

// heap returns the bytes allocated on the heap after a full collection.
func heap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// visit sends one GET to each of http://o<from>.test ... http://o<to-1>.test.
func visit(t *testing.T, tr *polite.Transport, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://o%d.test/", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("origin %d: %v", i, err)
		}
		resp.Body.Close()
	}
}

func TestMemoryPerOrigin(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates state for 100 000 origins")
	}
	const origins = 100_000
	b := &polite.Budget{MaxKeys: origins} // the default keeps 65536
	tr := &polite.Transport{Base: roundTripFunc(draft11), Budget: b}
	visit(t, tr, 0, 1) // the Budget's own structures
	before := heap()
	visit(t, tr, 1, origins)
	after := heap()
	runtime.KeepAlive(b)

	for _, i := range []int{0, origins / 2, origins - 1} {
		if st, ok := b.Inspect(fmt.Sprintf("http://o%d.test", i), time.Now()); !ok || len(st.Policies) != 1 {
			t.Fatalf("origin %d: Inspect = %+v, %v; want its policy", i, st, ok)
		}
	}
	perOrigin := float64(int64(after)-int64(before)) / (origins - 1)
	t.Logf("bytes per idle origin: %.0f (%d origins, heap %d → %d)", perOrigin, origins, before, after)
	if perOrigin > 4096 {
		t.Errorf("bytes per idle origin = %.0f, want at most 4096", perOrigin)
	}
}

func TestMaxKeysCapsOrigins(t *testing.T) {
	const maxKeys, origins = 1000, 5000
	b := &polite.Budget{MaxKeys: maxKeys}
	tr := &polite.Transport{Base: roundTripFunc(draft11), Budget: b}
	visit(t, tr, 0, origins)
	kept := 0
	for i := range origins {
		_, ok := b.Inspect(fmt.Sprintf("http://o%d.test", i), time.Now())
		if ok {
			kept++
		}
		if want := i >= origins-maxKeys; ok != want {
			t.Fatalf("Inspect(o%d) found %v, want %v: MaxKeys %d keeps the most recent", i, ok, want, maxKeys)
		}
	}
	if kept != maxKeys {
		t.Errorf("%d origins kept, want MaxKeys = %d", kept, maxKeys)
	}
}

// storeOnly is a Store that is not a *MemoryStore, as redisstore's is not.
type storeOnly struct{ m *polite.MemoryStore }

func (s storeOnly) Update(ctx context.Context, key string, fn func(*polite.KeyState)) error {
	return s.m.Update(ctx, key, fn)
}

func (s storeOnly) Wait(ctx context.Context, key string, gen uint64, until time.Time) error {
	return s.m.Wait(ctx, key, gen, until)
}

// policy4K returns a RateLimit-Policy value just under the 4096 bytes a
// parse.Reader remembers, of policies with partition keys, different for
// each origin i.
func policy4K(i int) string {
	pk := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 60)))
	var b strings.Builder
	for j := 0; ; j++ {
		m := fmt.Sprintf(`"a%d-%d";q=%d;w=60;pk=:%s:`, i, j, 1000+j, pk)
		if b.Len()+2+len(m) > 4096 {
			return b.String()
		}
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m)
	}
}

// With a Store other than a MemoryStore, what the Transport keeps to read
// each origin's responses is bounded whatever the number of origins: a
// fixed few parse.Readers. Before, each origin had its own, in an entry of
// the local ceilings that neither Budget.MaxKeys nor IdleTTL bound; one
// that remembered two 4 KiB policy values kept about 19 KB an origin (189
// MB for 10 000 origins, idle past IdleTTL, with MaxKeys 100).
func TestStoreReadersBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds thousands of 4 KiB headers")
	}
	synctest.Test(t, func(t *testing.T) {
		const maxKeys = 100
		b := &polite.Budget{MaxKeys: maxKeys, Store: storeOnly{&polite.MemoryStore{MaxKeys: maxKeys}}, IdleTTL: time.Minute}
		tr := &polite.Transport{Budget: b, Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			var i int
			fmt.Sscanf(req.URL.Host, "o%d.test", &i)
			v := policy4K(i)
			h := http.Header{"Content-Type": {"text/plain"}, "Ratelimit-Policy": {v}, "Beta-Ratelimit-Policy": {v}}
			return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: req}, nil
		})}
		visit(t, tr, 0, 1)
		base := heap()
		total := map[int]int64{}
		from := 1
		for _, n := range []int{1000, 5000} {
			visit(t, tr, from, n+1)
			from = n + 1
			time.Sleep(2 * b.IdleTTL) // every origin idle past IdleTTL
			total[n] = int64(heap()) - int64(base)
		}
		runtime.KeepAlive(tr)
		grown := float64(total[5000]-total[1000]) / 4000
		t.Logf("retained: %d origins: %.1f MB, %d origins: %.1f MB; %.0f B an origin added", 1000, float64(total[1000])/1e6, 5000, float64(total[5000])/1e6, grown)
		if grown > 1024 {
			t.Errorf("each origin past MaxKeys %d, idle past IdleTTL, retains %.0f bytes; want at most the ~200 B of a ceiling entry", maxKeys, grown)
		}
	})
}

// A host longer than any DNS name is kept in its key as a digest of 72
// bytes: a server that redirects to ever new hosts of 64 KiB each makes
// the Budget keep no more per origin than for short ones. Before, each key
// kept the whole host: 73 KB more an origin for 64 KiB hosts than for
// 256-byte ones. Requests to one long host still share its key.
func TestLongHostKeptAsDigest(t *testing.T) {
	perKey := map[int]float64{}
	for _, hostLen := range []int{200, 64 << 10} {
		pad := strings.Repeat("a", hostLen)
		b := &polite.Budget{}
		tr := &polite.Transport{Budget: b, Base: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			return nil, errors.New("dial tcp: lookup: no such host")
		})}
		get := func(i int) {
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://h%d.%s.invalid/", i, pad), nil)
			tr.RoundTrip(req)
		}
		get(0)
		before := heap()
		const origins = 500
		for i := 1; i <= origins; i++ {
			get(i)
		}
		perKey[hostLen] = float64(int64(heap())-int64(before)) / origins
		st, ok := b.Inspect(fmt.Sprintf("http://h7.%s.invalid", pad), time.Now())
		if !ok {
			t.Errorf("host of %d bytes: Inspect finds no state for it", hostLen)
		} else if hostLen > 1000 && (len(st.Key) > 100 || !strings.HasPrefix(st.Key, "http://~sha256-")) {
			t.Errorf("host of %d bytes: key %.100q, want http://~sha256- and a digest", hostLen, st.Key)
		}
		runtime.KeepAlive(tr)
	}
	t.Logf("bytes kept an origin: host of 200 B: %.0f, of 64 KiB: %.0f", perKey[200], perKey[64<<10])
	if grown := perKey[64<<10] - perKey[200]; grown > 1024 {
		t.Errorf("an origin with a 64 KiB host keeps %.0f bytes more than one of 200 B; want about the same", grown)
	}
}
