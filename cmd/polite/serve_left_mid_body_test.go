package main

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A client that leaves while sending its body (the connection closed
// after 10 of 100 bytes stated, or mid-chunk) gets no answer: serve logs
// "- (no answer)", as its help says of a client that left before its
// answer, and neither serves nor counts the request.
func TestServeClientLeftMidBodyUnanswered(t *testing.T) {
	for _, tc := range []struct{ name, request string }{
		{"content-length", "POST /left HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"},
		{"chunked", "POST /left HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, out, stop := startServe(t, "-addr", "127.0.0.1:0", "-quota", "5", "-window", "1m")
			defer stop()
			conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			conn.Write([]byte(tc.request))
			time.Sleep(100 * time.Millisecond) // loopback socket, not a pacing wait
			conn.Close()                       // the client leaves, unanswered
			log := out.String()
			for end := time.Now().Add(2 * time.Second); !strings.Contains(log, "POST /left ") && time.Now().Before(end); log = out.String() {
				time.Sleep(10 * time.Millisecond)
			}
			if want := "POST /left - (no answer)"; !strings.Contains(log, want) {
				t.Errorf("client left mid-body before any answer; log has no %q:\n%s", want, log)
			}
			resp, err := http.Get(base + "/next")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("RateLimit"); !strings.Contains(got, "r=4;") {
				t.Errorf("the next request, the first served, got RateLimit %q, want r=4 of 5: the request left unanswered was counted", got)
			}
		})
	}
}
