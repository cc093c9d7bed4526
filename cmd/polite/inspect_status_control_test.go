package main

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"testing"
)

// inspect printed the status line's reason phrase as the server sent it.
// net/http rejects control bytes in header fields but not in the reason
// phrase, so a hostile server's "429 \x1b]0;…\x07\x1b[2J" reaches the
// terminal: it retitles the window, clears the screen, or (OSC 52) writes
// the clipboard. Every other server-controlled text in the report is
// quoted with %q or parsed; the status was not.
func TestInspectStatusControlBytesNotPrinted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				c.Write([]byte("HTTP/1.1 429 Slow down\x1b]0;owned\x07\x1b[2J\r\nRetry-After: 5\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{"http://" + ln.Addr().String() + "/"}, &stdout, &stderr); err != nil {
		t.Fatalf("inspect: %v; stderr:\n%s", err, stderr.String())
	}
	if out := stdout.String(); strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("inspect printed the server's control bytes to the terminal:\n%q", out)
	}
}
