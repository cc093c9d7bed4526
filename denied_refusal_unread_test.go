package polite_test

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politehttp/polite"
)

// trickleBody yields head at once and tail after delay; Close interrupts
// a Read waiting for the tail, as net/http's bodies do.
type trickleBody struct {
	head, tail []byte
	delay      time.Duration
	once       sync.Once
	closed     chan struct{}
	state      int
}

func newTrickleBody(doc string, split int, delay time.Duration) *trickleBody {
	return &trickleBody{head: []byte(doc[:split]), tail: []byte(doc[split:]), delay: delay, closed: make(chan struct{})}
}

func (b *trickleBody) Read(p []byte) (int, error) {
	switch b.state {
	case 0:
		b.state = 1
		return copy(p, b.head), nil
	case 1:
		select {
		case <-b.closed:
			return 0, io.ErrClosedPipe
		case <-time.After(b.delay):
		}
		b.state = 2
		return copy(p, b.tail), nil
	}
	return 0, io.EOF
}

func (b *trickleBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// A refusal that cannot be retried goes back to the caller at once, its
// body unread: the package documentation says "the document is read only
// from a refusal that could otherwise be retried", and a refusal beyond
// MaxWait is so (TestRefusalBeyondMaxWaitUnread). Two refusals that the
// retry budget denies were not: while an origin's retries were stopped
// (it had reported abnormal usage), and in an outage (40 refused flights
// in a row). Each waited up to drainTime (1s) for its problem document to
// trickle in, and the caller then got a body cut short, whose read failed
// after its first bytes.
func TestDeniedRefusalGoesBackUnread(t *testing.T) {
	const doc = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"x","detail":"later"}`
	trickling := func(r *http.Request) *http.Response {
		h := http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: newTrickleBody(doc, 40, 5*time.Second), ContentLength: -1, Request: r}
	}
	// check sends one more request, which is refused and not retried,
	// and checks that it came back at once, its body whole.
	check := func(t *testing.T, tr *polite.Transport, ev *[]polite.Event) {
		req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		last := (*ev)[len(*ev)-1]
		if last.Kind != polite.EventGiveUp {
			t.Fatalf("last event %s (%s), want a give-up", last.Kind, last.Reason)
		}
		if elapsed != 0 {
			t.Errorf("the refusal (given up: %s) came back after %v, want at once", last.Reason, elapsed)
		}
		if rerr != nil || string(b) != doc {
			t.Errorf("the refusal's body read %q, %v; want the whole document", b, rerr)
		}
	}
	// Each on the in-memory store, which knows the key's state when the
	// refusal comes, and through a Store, where the request's grant says
	// whether the key denied retries then.
	budgets := []struct {
		name string
		new  func() *polite.Budget
	}{
		{"memory", func() *polite.Budget { return &polite.Budget{} }},
		{"store", func() *polite.Budget { return &polite.Budget{Store: wrappedStore{&polite.MemoryStore{}}} }},
	}
	for _, bk := range budgets {
		t.Run(bk.name, func(t *testing.T) { deniedRefusalUnread(t, bk.new, trickling, check) })
	}
}

func deniedRefusalUnread(t *testing.T, newBudget func() *polite.Budget, trickling func(*http.Request) *http.Response, check func(*testing.T, *polite.Transport, *[]polite.Event)) {
	t.Run("stopped", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const stop = `{"type":"https://iana.org/assignments/http-problem-types#abnormal-usage-detected","title":"stop"}`
			var n atomic.Int32
			var ev []polite.Event
			tr := &polite.Transport{
				Budget:  newBudget(),
				OnEvent: func(e polite.Event) { ev = append(ev, e) },
				Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if n.Add(1) == 1 {
						h := http.Header{"Retry-After": {"1"}, "Content-Type": {"application/problem+json"}}
						return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: io.NopCloser(stringsReader(stop)), ContentLength: int64(len(stop)), Request: r}, nil
					}
					return trickling(r), nil
				}),
			}
			req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			time.Sleep(3 * time.Second) // past the pause, well within the ten minutes' stop
			check(t, tr, &ev)
		})
	})
	t.Run("outage", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var ev []polite.Event
			b := newBudget()
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) { return trickling(r), nil })
			// The flights that make the outage: never retried, never read.
			setup := &polite.Transport{Budget: b, MaxAttempts: 1, Base: base}
			for range 45 {
				req, _ := http.NewRequest(http.MethodGet, "http://api.test/", nil)
				if resp, err := setup.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
				time.Sleep(2 * time.Second)
			}
			// A request that may be retried, but which the outage denies.
			tr := &polite.Transport{Budget: b, Base: base, OnEvent: func(e polite.Event) { ev = append(ev, e) }}
			check(t, tr, &ev)
		})
	})
}

func stringsReader(s string) io.Reader { return &sr{s: s} }

type sr struct{ s string }

func (r *sr) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p, r.s)
	r.s = r.s[n:]
	return n, nil
}
