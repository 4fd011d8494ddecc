//go:build race

package faults_test

// raceEnabled: this test binary has the race detector, whose shadow
// memory would distort a measure of its own RSS.
const raceEnabled = true
