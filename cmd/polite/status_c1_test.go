package main

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"testing"
)

// printable quoted a status line only when one of its runes was not
// printable, ranging over the string: a byte that is no UTF-8 (such as
// 0x9b, the 8-bit form of CSI, or 0x9d, OSC) decodes as U+FFFD, which
// strconv.IsPrint accepts, so the raw byte was printed as the server sent
// it. A terminal in an 8-bit (Latin-1) locale, or one honouring 8-bit C1
// controls, reads "\x9b2J" as ESC [ 2 J: the escape the fix keeps out.
// strconv.Quote itself would have escaped the byte (\x9b).
func TestInspectStatusInvalidUTF8Quoted(t *testing.T) {
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
				c.Write([]byte("HTTP/1.1 429 Slow down\x9b2J\x9d0;owned\x9c\r\nRetry-After: 5\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	var stdout, stderr bytes.Buffer
	if err := runInspect(t.Context(), []string{"http://" + ln.Addr().String() + "/"}, &stdout, &stderr); err != nil {
		t.Fatalf("inspect: %v; stderr:\n%s", err, stderr.String())
	}
	if out := stdout.String(); strings.IndexByte(out, 0x9b) >= 0 || strings.IndexByte(out, 0x9d) >= 0 {
		t.Errorf("inspect printed the server's raw C1 bytes (not UTF-8) to the terminal:\n%q", out)
	}
}
