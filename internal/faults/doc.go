// Package faults holds the reliability suite of mcptape: black-box tests
// that drive the real mcpspy binary (and the recorder's proxies in
// process, where goroutines must be counted) through the failures a
// recording proxy meets in the field: huge frames, long soaks, SIGKILL at
// random points, servers that crash or hang, clients that vanish or read
// slowly, upstream HTTP errors, and hundreds of concurrent sessions.
//
// TestMemory's tests measure release binaries; under -race it runs them
// in a release build of this package (release_test.go says why).
//
// It has no code of its own, only tests; nothing imports it. The default
// forms are short enough for CI; `go test ./internal/faults -faults.long`
// (or MCPTAPE_LONG=1) runs the long forms the issue names (100 SIGKILLs,
// a soak of 1M messages).
package faults
