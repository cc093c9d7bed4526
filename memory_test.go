package polite_test

import (
	"fmt"
	"net/http"
	"runtime"
	"testing"
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
