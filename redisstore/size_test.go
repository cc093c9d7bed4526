package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/politehttp/polite/internal/control"
	"github.com/politehttp/polite/parse"
)

// TestStateSize reports the size of a state in Redis: for an origin that
// states one quota, and for a large one (8 policies with names and
// partition keys of 128 bytes, their start logs full, requests in flight).
func TestStateSize(t *testing.T) {
	size := func(policies, nameLen, requests int, step time.Duration) int {
		var s control.State
		cfg := &control.Config{}
		now := time.Unix(1_800_000_000, 0)
		var quotas []parse.Quota
		for i := range policies {
			name := strings.Repeat(string(rune('a'+i)), nameLen)
			quotas = append(quotas, parse.Quota{Policy: name, Partition: []byte(name), Unit: "requests",
				Limit: 100000, Window: time.Hour, Remaining: 99000, Reset: time.Hour})
		}
		var held []control.Lease
		granted := 0
		for i := range requests {
			now = now.Add(step + time.Duration(i%7)*time.Millisecond)
			var l control.Lease
			_, ok := s.Acquire(now, cfg, control.Ask{}, &l)
			if !ok {
				continue
			}
			granted++
			if i >= requests-4 {
				held = append(held, l) // still in flight
				continue
			}
			s.Release(now.Add(time.Millisecond), cfg, &l, &control.Outcome{First: true, Quotas: quotas, Bytes: -1})
		}
		t.Logf("%d policies: %d of %d requests granted, %d in flight", policies, granted, requests, len(held))
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	typical := size(1, 7, 50, 100*time.Millisecond)
	// Starts spread over the hour-long windows: the logs are as long as
	// they get.
	large := size(8, 128, 2000, 1700*time.Millisecond)
	t.Logf("state of an origin with one quota after 50 requests: %d bytes", typical)
	t.Logf("state with 8 policies of 128-byte names and partition keys after 2000 requests: %d bytes", large)
	if typical > 1024 {
		t.Errorf("typical state of %d bytes, want a few hundred", typical)
	}
	if large > maxNotifyState*16 {
		t.Errorf("large state of %d bytes", large)
	}
}
