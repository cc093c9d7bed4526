package polite

import (
	"errors"
	"strings"
	"testing"
)

// A key repeated through a Store's error is one span, shown once: every
// occurrence, overlapping or touching, merges.
func TestStoreErrorRepeatedKeyMerged(t *testing.T) {
	msg := "at " + strings.Repeat("a", 1<<16) + " end"
	e := &storeError{err: errors.New(msg), key: "aaaaaa", shown: "key-0123abcd"}
	if got, want := e.Error(), "polite: store: at key-0123abcd end"; got != want {
		t.Errorf("Error() = %.80q..., want %q", got, want)
	}
}

// storeError.Error replaced the key with strings.ReplaceAll, linear. Then
// replaceAll recorded a span for every occurrence of each of the key's
// spellings (four identical ones for a key URL escaping leaves alone, each
// found again), sorted them all and merged them: a Store's error of 1 MiB
// that repeats a 6-byte key took 1.48 s (strings.ReplaceAll: 2.6 ms), and
// four times the text about five times as long. It marks the longest
// occurrence at each byte now, and sweeps once. Error runs for every
// formatting of Event.Err (OnEvent, the log record).
//
//	go test -run '^$' -bench StoreErrorHuge -count 6
func BenchmarkStoreErrorHuge(b *testing.B) {
	e := &storeError{err: errors.New(strings.Repeat("a", 1<<20)), key: "aaaaaa", shown: "key-0123abcd"}
	b.ReportAllocs()
	for b.Loop() {
		_ = e.Error()
	}
}
