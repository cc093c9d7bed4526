package otelpolite

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/politehttp/polite"
)

// Once MaxKeys keys were held, each event of a key not held (a crawler
// visiting more origins than MaxKeys, or keys coming back after being
// dropped) scanned every key held, under one mutex, to drop the least
// recent one: about 0.1 ms an event at the default 1000 keys and 1.7 ms at
// 10000, every request of the process waiting behind it. Now one scan
// makes room for an eighth of MaxKeys, so that an event scans a few keys
// on average, whatever MaxKeys is; the least recent keys still go first.
func TestKeyChurnScansFewKeysAnEvent(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "http://h.test/", nil)
	for _, maxKeys := range []int{20, 1000, 8000} {
		m, err := New(Config{MaxKeys: maxKeys})
		if err != nil {
			t.Fatal(err)
		}
		tr := &polite.Transport{}
		m.Instrument(tr)
		event := func(i int) {
			tr.OnEvent(polite.Event{Kind: polite.EventObserve, Time: time.Now(), Key: fmt.Sprintf("http://h%d.test", i), Request: req, Attempt: 1, Status: 200, Quotas: 1})
		}
		for i := range maxKeys {
			event(i)
		}
		event(0) // the first key, seen again: the most recent
		churn := 4 * maxKeys
		for i := range churn {
			event(maxKeys + i)
			if i < maxKeys/8 {
				if !holds(m.keys, "http://h0.test") {
					t.Fatalf("MaxKeys %d: the key seen most recently before the churn was dropped after %d new keys", maxKeys, i+1)
				}
			}
		}
		m.keys.mu.Lock()
		n, sweeps := m.keys.n, m.keys.sweeps
		m.keys.mu.Unlock()
		if n > maxKeys {
			t.Errorf("MaxKeys %d: %d keys held", maxKeys, n)
		}
		if scanned := sweeps * (maxKeys + 1); scanned > 10*churn {
			t.Errorf("MaxKeys %d: %d events of new keys scanned about %d keys (%d sweeps), want at most 10 an event", maxKeys, churn, scanned, sweeps)
		}
	}
}

// holds reports whether s holds key, from any source.
func holds(s *keySet, key string) bool {
	found := false
	s.m.Range(func(id, _ any) bool {
		found = id.(keyID).key == key
		return !found
	})
	return found
}
