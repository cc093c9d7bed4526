package ratelimittest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"

	"github.com/politehttp/polite/ratelimittest"
)

// abort answers as a server that drops the connection: net/http documents
// panicking with http.ErrAbortHandler as the way for a handler to abort
// its response, and its server recovers any panic of a handler, so that
// the client sees a failed request (an error, or a body cut short).
var abort = map[string]http.HandlerFunc{
	"before the header": func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	},
	"mid-stream": func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	},
}

// Through a Transport the panic ran on in the Handler's goroutine, which
// nothing recovers: it killed the whole test binary, where over loopback
// the same handler gives the client an error. The test runs the requests
// in a child process, so that the crash fails it rather than the run.
func TestTransportHandlerAbort(t *testing.T) {
	if os.Getenv("RATELIMITTEST_ABORT_CHILD") == "1" {
		for name, h := range abort {
			req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
			resp, err := (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if err == nil {
				t.Errorf("%s: the request succeeded, want an error", name)
			}
		}
		return
	}

	// Over loopback the client gets an error, and the process lives on.
	for name, h := range abort {
		srv := httptest.NewUnstartedServer(h)
		srv.Config.ErrorLog = nil
		srv.Start()
		resp, err := srv.Client().Get(srv.URL)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		srv.Close()
		if err == nil {
			t.Fatalf("over loopback, %s: no error", name)
		}
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestTransportHandlerAbort$", "-test.count=1")
	cmd.Env = append(os.Environ(), "RATELIMITTEST_ABORT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if len(out) > 600 {
			out = out[:600]
		}
		t.Errorf("a Handler aborting with http.ErrAbortHandler through a Transport: %v\n%s", err, out)
	}
}
