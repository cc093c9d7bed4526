package polite_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: a waiter, a
// timer or a connection the Transport should have ended.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
