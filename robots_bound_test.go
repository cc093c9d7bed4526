package polite

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The fetch of a robots.txt was bounded by its context alone: a Base whose
// RoundTrip ignored the context held the fetch, and every request to the
// origin without a deadline waited for it for good. After
// robotsFetchTimeout the robots.txt is unreachable whatever Base does, and
// what Base answers later is dropped.
func TestRobotsFetchBoundedWhateverBase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		base := robotsRT(func(req *http.Request) (*http.Response, error) {
			<-release // ignores req.Context()
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nAllow: /\n"))}, nil
		})
		r := &Robots{}
		done := make(chan error, 1)
		go func() {
			_, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/page"))
			done <- err
		}()
		time.Sleep(robotsFetchTimeout + 2*time.Second)
		select {
		case err := <-done:
			var rerr *RobotsError
			if !errors.As(err, &rerr) || !rerr.Unreachable {
				t.Errorf("check = %v, want unreachable after %v", err, robotsFetchTimeout)
			}
		default:
			t.Errorf("check still waiting for robots.txt after %v", robotsFetchTimeout+2*time.Second)
		}
		close(release)
		synctest.Wait()
		// The late answer did not replace the unreachable one (fetched
		// again a minute later at the soonest).
		if _, err := r.check(t.Context(), base, robotsReq(t, t.Context(), "http://a.example/page")); err == nil {
			t.Error("a late answer of the fetch given up replaced its unreachable result")
		}
	})
}
