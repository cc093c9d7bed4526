//go:build race

package control

// raceEnabled reports whether the race detector is on: it slows the code
// it watches tenfold, and a simulation on one goroutine has no race for
// it to find.
const raceEnabled = true
