//go:build unix

package replay_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user and system,
// on every thread: what a benchmark costs on a machine others share,
// where its wall time is whatever they leave it.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
