//go:build race

package parse

// raceEnabled reports whether the race detector is on, which slows the
// code it watches tenfold.
const raceEnabled = true
