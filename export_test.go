package polite

import (
	"io"
	"sync"
	"sync/atomic"
)

// Test helpers the external tests (package polite_test) share with the
// internal ones.

// StuckBody is a response body that never yields a byte, whatever the
// request's context, until it is closed: a Base whose bodies do not abort
// when a context ends.
type StuckBody struct {
	once   sync.Once
	closed chan struct{}
	closes atomic.Int32
}

// NewStuckBody returns an open StuckBody.
func NewStuckBody() *StuckBody { return &StuckBody{closed: make(chan struct{})} }

// Read blocks until the body is closed, and then fails.
func (b *StuckBody) Read([]byte) (int, error) {
	<-b.closed
	return 0, io.ErrClosedPipe
}

// Close ends the body; it may be called more than once.
func (b *StuckBody) Close() error {
	b.closes.Add(1)
	b.once.Do(func() { close(b.closed) })
	return nil
}

// Closes returns how many times the body was closed.
func (b *StuckBody) Closes() int { return int(b.closes.Load()) }

// Closed reports whether the body was closed.
func (b *StuckBody) Closed() bool {
	select {
	case <-b.closed:
		return true
	default:
		return false
	}
}

// GetUntil is getUntil, for the external tests.
var GetUntil = getUntil

// PeakCounter is peakCounter, for the external tests.
type PeakCounter = peakCounter
