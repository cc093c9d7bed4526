package polite_test

import (
	"io"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/politehttp/polite"
)

// A 2xx to CONNECT hands over the connection, as a 101 does (RFC 9110
// §9.3.6: a tunnel, no content): its request ends with its headers, and a
// request beside the open tunnel goes under MaxConcurrency 1, as beside
// an upgraded connection.
func TestConnectTunnelEndsWithHeaders(t *testing.T) {
	for _, method := range []string{http.MethodConnect, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &polite.Transport{MaxConcurrency: 1, Base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if r.URL.Path == "/x" {
						return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
					}
					pr, _ := io.Pipe() // the tunnel: open for as long as it is used
					st := http.StatusOK
					if r.Method != http.MethodConnect {
						st = http.StatusSwitchingProtocols
					}
					return &http.Response{StatusCode: st, Header: http.Header{}, Body: pr, ContentLength: -1, Request: r}, nil
				})}
				req, _ := http.NewRequest(method, "http://proxy.test/", nil)
				if method == http.MethodGet {
					req.Header.Set("Connection", "Upgrade")
					req.Header.Set("Upgrade", "websocket")
				}
				tunnel, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				defer tunnel.Body.Close()
				req2, _ := http.NewRequest(http.MethodGet, "http://proxy.test/x", nil)
				resp, err := tr.RoundTrip(req2)
				if err != nil {
					t.Fatalf("a request beside an open %s tunnel: %v", method, err)
				}
				resp.Body.Close()
			})
		})
	}
}
