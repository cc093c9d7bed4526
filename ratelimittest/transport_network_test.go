package ratelimittest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/politehttp/polite/ratelimittest"
)

// shape is what a client reads of a response, as compared below.
func shape(t *testing.T, resp *http.Response) string {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	ct, hasCT := resp.Header["Content-Type"]
	return fmt.Sprintf("Status %q, Content-Type %q (%v), Content-Length %q, ContentLength %d, TransferEncoding %q, body %q, read error %v",
		resp.Status, ct, hasCT, resp.Header.Get("Content-Length"), resp.ContentLength, resp.TransferEncoding, body, err)
}

// bothWays returns the response of h to a request of method through a
// Transport, and the shape of its response over the network (a loopback
// server and http.Transport).
func bothWays(t *testing.T, method string, h http.Handler) (*http.Response, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest(method, srv.URL+"/", nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	want := shape(t, resp)
	req, _ = http.NewRequest(method, "http://api.test/", nil)
	resp, err = (&ratelimittest.Transport{Handler: h}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, want
}

// Transport's responses read as the same handler's do over the network
// (a loopback server and http.Transport): the server's sniffing of a
// Content-Type, its refusal of a body where the status allows none, a
// flushed answer to HEAD, the text of a status it has none for. Before,
// Transport sniffed only a body written before WriteHeader, and despite a
// Content-Encoding; passed on the body of a 204 or 304; read a flushed
// HEAD answer as chunked; and gave status 599 the text "599 ".
func TestTransportReadsAsNetwork(t *testing.T) {
	cases := []struct {
		name, method string
		h            http.HandlerFunc
	}{
		{"sniffed after WriteHeader", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, "<html><body>slow down</body></html>")
		}},
		{"not sniffed with Content-Encoding", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "identity")
			io.WriteString(w, "<html></html>")
		}},
		{"not sniffed when empty", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Write(nil)
		}},
		{"Content-Type set empty", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			io.WriteString(w, "<html></html>")
		}},
		{"header changed after WriteHeader", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		}},
		{"no body for 204", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
			if _, err := io.WriteString(w, "body"); err != http.ErrBodyNotAllowed {
				t.Errorf("204: Write = %v, want http.ErrBodyNotAllowed", err)
			}
		}},
		{"no body for 304", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotModified)
			if _, err := io.WriteString(w, "body"); err != http.ErrBodyNotAllowed {
				t.Errorf("304: Write = %v, want http.ErrBodyNotAllowed", err)
			}
		}},
		{"flushed HEAD", http.MethodHead, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.(http.Flusher).Flush()
			io.WriteString(w, "body")
		}},
		{"flushed GET", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.(http.Flusher).Flush()
			io.WriteString(w, "body")
		}},
		{"flushed 204", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
			w.(http.Flusher).Flush()
		}},
		{"sniffed from two writes", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<ht")
			io.WriteString(w, "ml></html>")
		}},
		{"sniffed at a flush", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "%PDF-")
			w.(http.Flusher).Flush()
			io.WriteString(w, "<html></html>")
		}},
		{"HEAD", http.MethodHead, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html></html>")
		}},
		{"status with no text", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(599)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, want := bothWays(t, c.method, c.h)
			if got := shape(t, resp); !reflect.DeepEqual(got, want) {
				t.Errorf("through Transport:\n%s\nover the network:\n%s", got, want)
			}
		})
	}
}
