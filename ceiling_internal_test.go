package polite

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"
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
