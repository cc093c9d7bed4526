package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// liveLine is a one-line status display on a terminal, redrawn in place with
// a carriage return. Lines written to it appear above the status line.
// When off (the output is not a terminal), draw and finish do nothing and
// Write just writes. A liveLine is safe for concurrent use.
type liveLine struct {
	mu   sync.Mutex
	w    io.Writer
	on   bool
	last string // the status line on screen, if any
}

// newLiveLine returns a liveLine writing to w, live only if w is a terminal.
func newLiveLine(w io.Writer) *liveLine {
	return &liveLine{w: w, on: isTerminal(w)}
}

// draw replaces the status line with s.
func (l *liveLine) draw(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on {
		return
	}
	l.last = s
	fmt.Fprintf(l.w, "\r%s\x1b[K", s)
}

// finish leaves the status line s on screen and moves below it.
func (l *liveLine) finish(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on {
		return
	}
	l.last = ""
	fmt.Fprintf(l.w, "\r%s\x1b[K\n", s)
}

// Write writes b, one or more whole lines, above the status line.
func (l *liveLine) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on && l.last != "" {
		io.WriteString(l.w, "\r\x1b[K")
	}
	n, err := l.w.Write(b)
	if l.on && l.last != "" {
		io.WriteString(l.w, l.last)
	}
	return n, err
}

// every calls f every d until ctx ends or the returned stop is called; stop
// waits for a call in progress to return. If live is false, it does nothing.
func every(ctx context.Context, live bool, d time.Duration, f func()) (stop func()) {
	if !live {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			f()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// seconds formats d as seconds with one decimal, for status lines.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}
