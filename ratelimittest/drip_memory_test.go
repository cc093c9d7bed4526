package ratelimittest_test

import (
	"io"
	"net/http"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/ratelimittest"
)

// A dripping refusal sends one byte every Drip, but the Handler built the
// whole padded body first, growing it a byte at a time: memory and CPU in
// proportion to DripBytes for every refusal, before its header is sent,
// even when the client reads one byte and closes. A DripBytes meant to
// hold a client for good (math.MaxInt: "held for DripBytes*Drip") never
// sends a header and exhausts memory. 64 MiB of padding, of which one byte
// is read, should not cost 64 MiB.
func TestDripDoesNotBuildWholeBody(t *testing.T) {
	const dripBytes = 64 << 20
	synctest.Test(t, func(t *testing.T) {
		h := ratelimittest.NewHandler(ratelimittest.Config{
			Policies:  []ratelimittest.Policy{{Quota: 0, Window: time.Second}},
			Drip:      time.Second,
			DripBytes: dripBytes,
		})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/", nil)
		resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := io.ReadFull(resp.Body, b); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		synctest.Wait()
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > dripBytes/8 {
			t.Errorf("one dripped byte of a %d-byte refusal allocated %d bytes", dripBytes, got)
		}
	})
}
