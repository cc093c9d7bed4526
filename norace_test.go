//go:build !race

package polite_test

const raceEnabled = false
