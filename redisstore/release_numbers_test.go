package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What a key keeps of the numbers of the swaps sent with no limit (see
// swapScript), against what no store writes, and how a swap sent again
// reads it: its number kept, it ran; a key that cannot tell (its number at
// or below its store's floor, a store's numbers dropped for room within
// the minute, or a field no store wrote) changes nothing; otherwise it
// runs. Each case plants r, then sends swap
// number "k" (of 36) as a's: once as sent before, then as sent first.
func TestReleaseNumbersKept(t *testing.T) {
	now := time.Now().Unix()
	other := func(i int) string { return fmt.Sprintf("%016x", i+1) }
	many := make([]string, 13)
	for i := range many {
		many[i] = other(i) + ":" + strconv.FormatInt(now, 10) + ":0:1"
	}
	nums := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = strconv.FormatInt(int64(100+i), 36)
		}
		return strings.Join(s, ",")
	}
	for _, tt := range []struct {
		name  string
		r     func(a *Store) string
		again swapResult // the swap sent again
		keep  func(a *Store, r string) string
	}{
		{"its number kept", func(a *Store) string { return a.name + ":" + strconv.FormatInt(now, 10) + ":0:j,k" }, swapAgain, nil},
		{"its floor at its number", func(a *Store) string { return a.name + ":" + strconv.FormatInt(now, 10) + ":k:l,m" }, swapUnknown, nil},
		{"32 others of its store", func(a *Store) string { return a.name + ":" + strconv.FormatInt(now, 10) + ":j:" + nums(32) }, swapDone, func(a *Store, r string) string {
			if !strings.Contains(r, ":"+strconv.FormatInt(100, 36)+":") {
				return "its oldest number not dropped, the floor not raised to it"
			}
			return ""
		}},
		{"dropped 10 s ago", func(*Store) string { return "~:" + strconv.FormatInt(now-10, 10) }, swapUnknown, nil},
		{"dropped 2 minutes ago", func(*Store) string { return "~:" + strconv.FormatInt(now-120, 10) }, swapDone, func(a *Store, r string) string {
			if strings.Contains(r, "~") {
				return "the old drop mark is kept"
			}
			return ""
		}},
		{"past 8 KiB", func(*Store) string { return strings.Repeat("x", 9000) }, swapUnknown, func(a *Store, r string) string {
			if !strings.HasPrefix(r, "~:") || !strings.Contains(r, " "+a.name+":") || len(r) > 100 {
				return "not replaced by a drop mark and its own number"
			}
			return ""
		}},
		{"13 other stores", func(*Store) string { return strings.Join(many, " ") }, swapDone, func(a *Store, r string) string {
			if n := strings.Count(r, ":"); !strings.HasPrefix(r, "~:") || n != 1+3*13 {
				return "not 13 stores and a drop mark"
			}
			return ""
		}},
		{"a store silent for 2 minutes", func(*Store) string { return other(0) + ":" + strconv.FormatInt(now-120, 10) + ":0:1" }, swapDone, func(a *Store, r string) string {
			if strings.Contains(r, other(0)) || strings.Contains(r, "~") {
				return "the silent store kept, or counted as dropped"
			}
			return ""
		}},
		{"others no store writes", func(a *Store) string {
			return "zz:1:0:1 " + other(0) + ":" + strconv.FormatInt(now, 10) + ":0:" + strings.Repeat("1", 2000)
		}, swapDone, func(a *Store, r string) string {
			if strings.Contains(r, "zz") || strings.Contains(r, other(0)) {
				return "kept what no store writes"
			}
			return ""
		}},
		{"its own malformed", func(a *Store) string { return a.name + ":x:k" }, swapUnknown, nil},
		{"its own with an empty number", func(a *Store) string {
			return a.name + ":" + strconv.FormatInt(now, 10) + ":0:" + strings.Repeat(",", 32) + "1"
		}, swapUnknown, nil},
		{"its own with a number no store writes", func(a *Store) string {
			return a.name + ":" + strconv.FormatInt(now, 10) + ":0:!!," + nums(31)
		}, swapDone, func(a *Store, r string) string {
			if !strings.Contains(r, ":zzzzzzzzzzz:") {
				return "the floor not raised past every number, its cut no number"
			}
			return ""
		}},
		{"its own floor of 12 digits", func(a *Store) string { return a.name + ":" + strconv.FormatInt(now, 10) + ":zzzzzzzzzzzz:1" }, swapUnknown, nil},
		{"its own past 1 KiB", func(a *Store) string { return a.name + ":" + strconv.FormatInt(now, 10) + ":0:" + nums(400) }, swapUnknown, nil},
		{"another ahead of the clock", func(*Store) string { return other(0) + ":" + strconv.FormatInt(now+3600, 10) + ":0:1" }, swapDone, func(a *Store, r string) string {
			if strings.Contains(r, other(0)) || !strings.HasPrefix(r, "~:") {
				return "kept, or not counted as dropped"
			}
			return ""
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rdb, a, rkey := bumpedKey(t)
			ctx := t.Context()
			if err := rdb.HSet(ctx, rkey, "r", tt.r(a)).Err(); err != nil {
				t.Fatal(err)
			}
			v, err := rdb.HGet(ctx, rkey, "v").Int64()
			if err != nil {
				t.Fatal(err)
			}
			for _, again := range []bool{true, false} {
				if !again && tt.again == swapDone {
					continue // it ran
				}
				state, err := rdb.HGet(ctx, rkey, "s").Bytes()
				if err != nil {
					t.Fatal(err)
				}
				r := swap{expect: v, mode: modeWrite, state: append(state, 0), ttl: time.Minute, id: id("k"), rel: "k", again: again,
					tok: a.name + "." + strconv.FormatBool(again)}
				res, nv, _, _, err := a.swap(ctx, rkey, r)
				want := tt.again
				if !again {
					want = swapDone // sent first, it runs whatever r holds
				}
				if err != nil || res != want {
					t.Fatalf("sent again %v: %v, %v; want %v", again, res, err, want)
				}
				if res == swapDone {
					v = nv
				}
			}
			got, err := rdb.HGet(ctx, rkey, "r").Result()
			if err != nil {
				t.Fatal(err)
			}
			if kept := strings.Contains(got, ":k") || strings.Contains(got, ",k"); !strings.Contains(got, a.name+":") || !kept {
				t.Errorf("r after the swap ran: %.200q; want its number kept", got)
			}
			if tt.keep != nil {
				if why := tt.keep(a, got); why != "" {
					t.Errorf("r after the swap ran: %.200q: %s", got, why)
				}
			}
		})
	}
}
