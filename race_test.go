//go:build race

package polite_test

// raceEnabled reports whether the race detector is on, which slows the
// code it watches tenfold and changes how goroutines interleave: how many
// requests are in flight when a refusal arrives, and so how many are
// refused together.
const raceEnabled = true
