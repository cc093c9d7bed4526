//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	fd, err := syscall.Open("/dev/ptmx", syscall.O_RDWR|syscall.O_NOCTTY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	m := os.NewFile(uintptr(fd), "/dev/ptmx") // non-blocking: read deadlines work
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open the pty's slave: %v", err)
	}
	return m, s
}

// get's help: "When stderr is a terminal, a progress bar shows … (not
// when the bodies go to the same terminal)". isTerminal took any
// character device for a terminal, and /dev/null is one: "polite get
// URLs > /dev/null", the way to watch a fetch whose bodies are not wanted,
// showed no progress bar on the terminal stderr is.
func TestIsTerminalNotDevNull(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Errorf("isTerminal(%s) = true, want false: it is no terminal", os.DevNull)
	}
}

func TestGetProgressBarWithBodiesToDevNull(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	defer slave.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer devnull.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "body")
	}))
	defer srv.Close()

	if err := getMain(t.Context(), []string{srv.URL + "/a"}, strings.NewReader(""), devnull, slave); err != nil {
		t.Fatalf("get: %v", err)
	}
	// What get wrote to the terminal waits in the pty: read it until
	// nothing more comes.
	var seen bytes.Buffer
	master.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	io.Copy(&seen, master)
	if out := seen.String(); !strings.Contains(out, "1/1") {
		t.Errorf("stderr a terminal, bodies to %s: no progress bar; the terminal got %q", os.DevNull, out)
	}
}
