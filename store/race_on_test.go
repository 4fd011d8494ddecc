//go:build race

package store

// raceEnabled: this test binary was built with -race (and so with
// checkptr, which turns bbolt's unsafe slices over damaged lengths into a
// fatal error).
const raceEnabled = true
