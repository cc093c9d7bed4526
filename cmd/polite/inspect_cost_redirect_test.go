package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// inspect -cost sends its request through a polite Transport, to read the
// answer as polite does. One Transport for a redirect chain paced each hop
// by what the hop before it stated: a redirect stating its quota spent,
// reset in 50 minutes, was not followed within -timeout, and inspect -cost
// failed with a WaitError where inspect without it reports the final 200.
// Each hop has a Transport of its own.
func TestInspectCostRedirectNotPaced(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(50*time.Minute).Unix(), 10))
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()

	plain := inspectJSON(t, srv.URL+"/old")
	if plain.Status != http.StatusOK {
		t.Fatalf("plain inspect: status %d, want 200", plain.Status)
	}
	var stdout, stderr bytes.Buffer
	err := runInspect(t.Context(), []string{"-json", "-cost", "tokens=1", srv.URL + "/old"}, &stdout, &stderr)
	var rep inspectReport
	json.Unmarshal(stdout.Bytes(), &rep)
	if err != nil || rep.Status != plain.Status || rep.Cost == nil {
		t.Errorf("inspect -cost: err %v, status %d; want no error, status %d as inspect without -cost reports, and a cost report\n%s",
			err, rep.Status, plain.Status, stdout.String())
	}
}
