//go:build !race

package polite_test

// raceEnabled reports a build with the race detector.
const raceEnabled = false
