package main

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A client that asks "Expect: 100-continue" before a large upload is
// answered a refusal at once, without sending its body, by a server that
// refuses it (RFC 9110 §10.1.1): that is what the expectation is for.
// serve, reading every body before serving its request (so that a client
// leaving is noticed), sent "100 Continue" and answered nothing until the
// whole body had come, refused or not.
func TestServeExpectContinueRefusedAtOnce(t *testing.T) {
	refusedAtOnce(t, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\nExpect: 100-continue\r\n\r\n")
}

// A client slow to send a large body (or streaming it, awaiting the
// answer, as Go's Transport does) is refused at once, as net/http answers
// a request whose unread body is past 256 KiB, closing the connection
// after; serve, reading every body first, answered nothing until the
// whole body had come.
func TestServeLargeSlowBodyRefusedAtOnce(t *testing.T) {
	refusedAtOnce(t, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\nabc")
}

// refusedAtOnce writes request (its head, and part of its body at most)
// to a serve whose quota of 1 is spent, and fails t unless the answer's
// status line, a 429, comes within 2 s.
func refusedAtOnce(t *testing.T, request string) {
	t.Helper()
	base, _, stop := startServe(t, "-addr", "127.0.0.1:0", "-quota", "1", "-window", "1m")
	defer stop()
	spend(t, base)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte(request))
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 429") {
		t.Errorf("%q to a server refusing all: first line %q, %v; want a 429 at once", request, line, err)
	}
}

// spend spends serve's quota of 1 with a GET.
func spend(t *testing.T, base string) {
	resp, err := http.Get(base + "/spend")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
