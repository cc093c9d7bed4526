//go:build race

package polite_test

// raceEnabled reports a build with the race detector, which changes how
// goroutines interleave: how many requests are in flight when a refusal
// arrives, and so how many are refused together.
const raceEnabled = true
