package polite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite/internal/control"
)

func TestFloorSpacesStarts(t *testing.T) {
	// A per-key floor (room for a robots.txt Crawl-delay) spaces the
	// Transport's starts to that key, and only that key.
	synctest.Test(t, func(t *testing.T) {
		var sent []time.Time
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == "slow.test" {
				sent = append(sent, time.Now())
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
		})
		tr := &Transport{Base: base}
		tr.ceil.setFloor(originKey("http", "slow.test").m, 500*time.Millisecond)
		start := time.Now()
		for range 5 {
			for _, host := range []string{"slow.test", "fast.test"} {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+host+"/", nil)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
		}
		for i := 1; i < len(sent); i++ {
			if gap := sent[i].Sub(sent[i-1]); gap < 500*time.Millisecond {
				t.Errorf("start %d came %v after the one before, want the floor of 500ms", i, gap)
			}
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("5 requests to a key with a floor of 500ms took %v, want 2s", d)
		}
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func okResponse(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
}

// A Transport.MaxRate so small that 1/MaxRate does not fit a Duration
// (one request per ~317 years), or that its next start does not fit an
// int64 (one per ~285 years), still spaces starts: the second request's
// wait is far beyond MaxWait, so it fails with a *WaitError, as it does
// for MaxRate 1e-6. The interval overflowed, and every request went.
func TestTinyTransportMaxRateSpaces(t *testing.T) {
	for _, rate := range []float64{1e-6, 1e-10, 1.0 / 9e9} {
		t.Run(fmt.Sprint(rate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sent := 0
				tr := &Transport{Base: roundTripper(func(r *http.Request) (*http.Response, error) { sent++; return okResponse(r) }), MaxRate: rate}
				var errs []error
				for range 5 {
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test/", nil)
					resp, err := tr.RoundTrip(req)
					if err == nil {
						resp.Body.Close()
					}
					errs = append(errs, err)
				}
				var we *WaitError
				if sent != 1 || !errors.As(errs[1], &we) {
					t.Errorf("MaxRate %g: %d of 5 back-to-back requests sent (errors %v); want 1 sent, the rest *WaitError", rate, sent, errs)
				}
			})
		})
	}
}

// Budget.Forget: "requests waiting on it look again at once", and
// Store.Wait "must not lose a wake that happened between the Update that
// returned gen and the call to Wait". A request held by the budget (here
// Budget.MaxConcurrency, a slot taken) whose key is forgotten after its
// hold was returned but before it waits looks again at once. It slept
// until the hold's deadline (MaxWait, 10 min, in the Transport): the
// store found no entry, and read that as a key never written.
func TestForgetBetweenHoldAndWaitWakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &Budget{MaxConcurrency: 1}
		b.init()
		k := originKey("http", "a.test")
		now := time.Now()
		var g1, g2 lease
		if _, ok, _, _ := b.acquire(t.Context(), k, now, control.Ask{}, &g1); !ok {
			t.Fatal("first request not granted")
		}
		h, ok, _, _ := b.acquire(t.Context(), k, now, control.Ask{}, &g2)
		if ok {
			t.Fatal("second request granted beyond MaxConcurrency 1")
		}
		b.Forget("http://a.test") // between the hold and the wait
		var timer *time.Timer
		if _, err := b.wait(t.Context(), k, h, now.Add(defaultMaxWait), &timer); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(now); d > 0 {
			t.Errorf("a request held on a key forgotten before it waited slept %v, until its deadline; want it to look again at once", d)
		}
	})
}

// Restraint: "from then on the quotas it states pace it, and Restraint no
// longer applies to it". A request held by Restraint's cap while the first
// response (a stream) brings the origin's first quota goes at once. It
// slept until a slot freed (the stream's end) or MaxWait: lifting
// Restraint woke nobody.
func TestRestraintLiftWakesHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		body := NewStuckBody()
		var sent []time.Time
		tr := &Transport{Restraint: &Restraint{MaxConcurrency: 1}, Base: roundTripper(func(r *http.Request) (*http.Response, error) {
			sent = append(sent, time.Now())
			h := http.Header{}
			h.Set("RateLimit-Policy", `"default";q=100;w=60`)
			h.Set("RateLimit", `"default";r=99;t=60`)
			if len(sent) == 1 {
				<-release
				return &http.Response{StatusCode: 200, Header: h, Body: body, ContentLength: -1, Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: h, Body: http.NoBody, Request: r}, nil
		})}
		get := func() (*http.Response, error) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://a.test/", nil)
			return tr.RoundTrip(req)
		}
		first := make(chan *http.Response, 1)
		go func() { resp, _ := get(); first <- resp }()
		synctest.Wait() // the first is in Base
		done := make(chan error, 1)
		go func() {
			resp, err := get()
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		synctest.Wait() // the second is held by Restraint's cap of 1
		close(release)
		resp := <-first // headers with a quota: Restraint no longer applies
		headers := time.Now()
		err := <-done
		if len(sent) != 2 || err != nil {
			t.Fatalf("sent %d, err %v", len(sent), err)
		}
		if d := sent[1].Sub(headers); d > 0 {
			t.Errorf("the second request went %v after the origin stated a quota (Restraint lifted); want at once", d)
		}
		resp.Body.Close()
	})
}

// The local ceilings' map "drops idle entries lazily": each new key sweeps
// a few idle entries once a shard holds ceilingSweep, whichever way the
// entry is made. An origin whose robots.txt has a Crawl-delay got its
// entry from setFloor, which did not sweep, and reserve then found it:
// a crawler kept one entry per origin it ever saw, while the same crawl
// paced by MaxRate stayed bounded.
func TestFloorEntriesSwept(t *testing.T) {
	const origins = 24_000 // beyond the bound below, 17,408
	base := crawlDelayBase("1")
	paced := crawlOrigins(t, &Transport{Base: base, MaxRate: 1}, origins, 2*time.Second) // every earlier origin is idle
	floored := crawlOrigins(t, &Transport{Base: base, Robots: &Robots{}}, origins, 2*time.Second)
	limit := ceilingShards * (ceilingSweep + 64)
	t.Logf("entries kept after %d idle origins: MaxRate %d, Crawl-delay %d", origins, paced, floored)
	if paced > limit || floored > limit {
		t.Errorf("the local ceilings keep %d (MaxRate) and %d (Crawl-delay) entries for %d idle origins; want at most about %d", paced, floored, origins, limit)
	}
}

// A Transport's local ceilings kept an entry for each origin whose next
// start was ahead, however many: the floor of a robots.txt Crawl-delay
// (capped at 24 hours) put it a day ahead, and sweep dropped no such
// entry, not even past ceilingHard. A crawl led through many origins
// (a server's subdomains) each asking "Crawl-delay: 86400" kept one entry
// per origin for a day, while the Budget (MaxKeys) and the robots cache
// (MaxOrigins) stayed bounded.
func TestFloorEntriesBoundedWhateverTheCrawlDelay(t *testing.T) {
	t.Parallel() // a bubble of its own: only the CPU is shared
	const origins = 100_000
	// Every bound the caller can set is small: only the ceilings grow.
	tr := &Transport{Base: crawlDelayBase("86400"), Robots: &Robots{MaxOrigins: 64}, Budget: &Budget{MaxKeys: 64}}
	n := crawlOrigins(t, tr, origins, 100*time.Millisecond) // the crawl lasts under 3 hours of the day each entry is kept
	if limit := ceilingShards * (ceilingHard + 64); n > limit {
		t.Errorf("the local ceilings keep %d entries after %d origins each asking Crawl-delay: 86400; want at most about %d (ceilingShards*ceilingHard), whatever the servers send", n, origins, limit)
	}
}

// crawlDelayBase answers every request 200, and robots.txt with a
// Crawl-delay of delay seconds.
func crawlDelayBase(delay string) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nCrawl-delay: " + delay + "\n")), ContentLength: -1, Request: r}, nil
		}
		return okResponse(r)
	})
}

// crawlOrigins sends one request to each of origins origins through tr,
// gap apart, in a synctest bubble, and returns the entries its local
// ceilings keep then.
func crawlOrigins(t *testing.T, tr *Transport, origins int, gap time.Duration) int {
	var n int
	synctest.Test(t, func(t *testing.T) {
		for i := range origins {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://o%d.test/", i), nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			time.Sleep(gap)
		}
		for i := range tr.ceil.shards {
			sh := &tr.ceil.shards[i]
			sh.mu.Lock()
			n += len(sh.m)
			sh.mu.Unlock()
		}
	})
	return n
}

// lineLen returns how many tickets the line of the local ceilings of tr
// keeps for the origin of u.
func lineLen(tr *Transport, u string) int {
	k := originKey("http", u).m
	sh := tr.ceil.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.m[k]; e != nil {
		return len(e.wait)
	}
	return -1
}

// Transport.MaxRate of one a minute. One background request (no deadline)
// waits its turn; meanwhile requests with a short deadline each fail at
// once with a WaitError. Each took a ticket in the line before failing and
// left it behind: the line kept one entry per request that ever gave up
// (20,000 here), and passing the turn over them took the square of their
// number under the shard lock (350 ms for 40,000).
func TestLineKeepsOnlyWaiting(t *testing.T) {
	const n = 20000
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{Base: roundTripper(okResponse), MaxRate: 1.0 / 60}
		get := func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://paced.example/", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := get(t.Context()); err != nil { // the first start
			t.Fatal(err)
		}
		bg := make(chan error, 1)
		go func() { bg <- get(t.Context()) }() // waits its turn, 60s
		synctest.Wait()
		failed := 0
		for range n {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			var we *WaitError
			if err := get(ctx); errors.As(err, &we) {
				failed++
			}
			cancel()
		}
		waiting := 1
		g := lineLen(tr, "paced.example")
		if failed != n || g != waiting {
			t.Errorf("%d of %d requests gave up (WaitError); the line of their origin keeps %d tickets, with %d request waiting", failed, n, g, waiting)
		}
		if err := <-bg; err != nil {
			t.Fatal(err)
		}
	})
}

// Tickets given up in any order leave the line, or stay no more than those
// still waiting, and the turn passes in the order the rest were taken.
func TestLineGivenUpInAnyOrder(t *testing.T) {
	var e ceiling
	tks := make([]uint64, 64)
	for i := range tks {
		e.take(&tks[i])
	}
	// Every third stays; the rest give up, from the back, the front and
	// between.
	var stay []uint64
	for i := len(tks) - 1; i >= 0; i -= 2 {
		if i%3 != 0 {
			e.drop(tks[i])
		}
	}
	for i := 0; i < len(tks); i += 2 {
		if i%3 != 0 {
			e.drop(tks[i])
		}
	}
	for i, tk := range tks {
		if i%3 == 0 {
			stay = append(stay, tk)
		}
	}
	live := 0
	for _, tk := range e.wait[e.off:] {
		if tk&gaveUp == 0 {
			live++
		}
	}
	if kept := len(e.wait) - e.off; live != len(stay) || kept > 2*len(stay) {
		t.Fatalf("the line keeps %d tickets, %d of them waiting; want the %d still waiting, and at most as many given up", kept, live, len(stay))
	}
	for _, tk := range stay {
		if tk-1 != e.head {
			t.Fatalf("the turn is ticket %d's, want %d's", e.head+1, tk)
		}
		e.pass()
	}
	if e.head != e.tail || len(e.wait) != 0 {
		t.Errorf("line empty: head %d, tail %d, %d kept", e.head, e.tail, len(e.wait))
	}
}

// Against a model of the line (the tickets still waiting, in the order
// taken), random takes, turns and give-ups: the turn is always the oldest
// ticket still waiting, and the line keeps no more tickets given up than
// waiting ones (passing a turn once cost a copy of every ticket behind it,
// the square of their number to empty a line).
func TestLineModel(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 0))
		var e ceiling
		var model []uint64 // tickets still waiting, oldest first
		for step := range 400 {
			switch op := r.IntN(3); {
			case op == 0 || len(model) == 0:
				var tk uint64
				e.take(&tk)
				model = append(model, tk)
			case op == 1 && r.IntN(2) == 0:
				e.pass() // the head takes its turn
				model = model[1:]
			case op == 1:
				// Those between the head and the last give up, then
				// turns pass.
				for i := len(model) - 2; i > 0 && r.IntN(4) != 0; i-- {
					e.drop(model[i])
					model = slices.Delete(model, i, i+1)
				}
				for len(model) > 1 && r.IntN(3) != 0 {
					e.pass()
					model = model[1:]
				}
			default:
				i := r.IntN(len(model))
				e.drop(model[i])
				model = slices.Delete(model, i, i+1)
			}
			kept := len(e.wait) - e.off
			switch {
			case len(model) == 0 && e.head != e.tail:
				t.Fatalf("seed %d step %d: none waits, yet the turn is ticket %d's (tail %d)", seed, step, e.head+1, e.tail)
			case len(model) > 0 && model[0]-1 != e.head:
				t.Fatalf("seed %d step %d: the turn is ticket %d's, want %d's", seed, step, e.head+1, model[0])
			case kept > 2*len(model)+1:
				t.Fatalf("seed %d step %d: the line keeps %d tickets for %d waiting", seed, step, kept, len(model))
			}
		}
	}
}
