package polite

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"errors"
	"net/url"
	"strings"

	"github.com/politehttp/polite/ratelimittest"
)

// TestRestraintLiftedWhileBudgetKeepsQuota: an origin states 100 per
// hour once. Twenty minutes later (past IdleTTL's 10 min, within the
// window) the budget still keeps the quota -- it keeps a state while a
// start it logged is within its window -- and paces by it. Read as
// forgotten once unused for IdleTTL, the origin was held under
// Restraint's 4 again; its lifting lasts as long as the longest window
// stated too.
func TestRestraintLiftedWhileBudgetKeepsQuota(t *testing.T) {
	for _, stateAlways := range []bool{false} {
		synctest.Test(t, func(t *testing.T) {
			var stated atomic.Bool
			stated.Store(true)
			var mu sync.Mutex
			in, peak := 0, 0
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				in++
				peak = max(peak, in)
				mu.Unlock()
				time.Sleep(100 * time.Millisecond)
				if stated.Load() {
					w.Header().Set("RateLimit-Policy", `"hour";q=100;w=3600`)
					w.Header().Set("RateLimit", `"hour";r=99;t=3600`)
				}
				io.WriteString(w, "ok")
				mu.Lock()
				in--
				mu.Unlock()
			})
			tr := &Transport{Base: &ratelimittest.Transport{Handler: h}, Restraint: &Restraint{}}
			get := func() {
				resp, err := tr.RoundTrip(robotsReq(t, t.Context(), "http://quoted.example/"))
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			get()
			stated.Store(stateAlways)
			time.Sleep(20 * time.Minute)
			st, ok := tr.Inspect("http://quoted.example", time.Now())
			if !ok || len(st.Policies) == 0 {
				t.Fatalf("the budget forgot the quota: %+v", st)
			}
			mu.Lock()
			peak = 0
			mu.Unlock()
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(get)
			}
			wg.Wait()
			t.Logf("stated on every answer %v: peak %d", stateAlways, peak)
			if peak <= 4 {
				t.Errorf("the budget keeps the quota (%d policies) yet at most %d requests were in flight: Restraint's cap applied", len(st.Policies), peak)
			}
		})
	}
}

// TestLogErrorKeepsHostNamedAsUser: a user name of 6 bytes or more was
// replaced everywhere in the message, not only in the URL's user
// information. A user name that is also the host's label (GitLab's
// "https://gitlab:TOKEN@gitlab.example", "docker", "github"...) then
// erased the host from the dial error: the record no longer said which
// host failed to resolve.
func TestLogErrorKeepsHostNamedAsUser(t *testing.T) {
	req, err := http.NewRequest("GET", "https://gitlab:s3cr3t-tok@gitlab.example/api/v4/projects", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &url.Error{Op: "Get", URL: req.URL.String(), Err: errors.New("dial tcp: lookup gitlab.example: no such host")}
	got := logError(e, req, false)
	if strings.Contains(got, "s3cr3t-tok") {
		t.Fatalf("token leaked: %s", got)
	}
	if !strings.Contains(got, "lookup gitlab.example") {
		t.Errorf("the host was erased from the error: %q", got)
	}
}
