//go:build race

package polite_test

// raceEnabled reports whether the race detector is on, which slows the
// code it watches tenfold.
const raceEnabled = true
