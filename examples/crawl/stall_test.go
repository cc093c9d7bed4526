package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener is a net.Listener of in-memory connections (net.Pipe), so
// that a real http.Server and the crawl's real http.Transport (as
// newBase configures it) run in a synctest bubble.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, errors.New("closed")
	}
}
func (l *pipeListener) Close() error   { close(l.done); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// A server that sends its header and then stalls the body does not hang
// the crawl: colly's request timeout (MaxWait and a minute) bounds the
// body too. It hung for ever when colly's timeout was off, the Base
// bounding only the wait for the header (ResponseHeaderTimeout).
func TestCrawlStalledBodyEnds(t *testing.T) { stallTest(t, true) }

// The same with the header stalled ends too (ResponseHeaderTimeout), which
// shows the harness itself does not hang.
func TestCrawlStalledHeaderEnds(t *testing.T) { stallTest(t, false) }

func stallTest(t *testing.T, header bool) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(w, r)
				return
			}
			if header {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, "<html><body>")
				w.(http.Flusher).Flush()
			}
			select { // stall the body
			case <-release:
			case <-r.Context().Done():
			}
		})
		ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
		srv := &http.Server{Handler: h}
		go srv.Serve(ln)

		base := newBase()
		base.Proxy = nil
		base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c1, c2 := net.Pipe()
			select {
			case ln.conns <- c2:
				return c1, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			crawl(t.Context(), "http://site.example/", "examplebot/1.0", base, 4)
		}()
		time.Sleep(2 * time.Hour) // virtual time
		select {
		case <-done:
		default:
			t.Errorf("crawl still running after 2h (virtual) on a body stalled after its header (ResponseHeaderTimeout %v covers the header only)", base.ResponseHeaderTimeout)
		}
		close(release)
		<-done
		base.CloseIdleConnections()
		srv.Close()
	})
}
