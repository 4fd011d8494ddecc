package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// parentPoll is how often --exit-with-parent looks at the parent's pid.
const parentPoll = 200 * time.Millisecond

// watchParent cancels serve's context once the process that started
// mcpmock has ended: a test runner that died without stopping it (an
// uncaught exception skips afterEach) would otherwise leave an --http
// server holding its port for good. A child whose parent ends is given
// to another (init, or a subreaper), so its parent pid changes; polling
// it works on Linux and macOS alike, where Linux's PR_SET_PDEATHSIG does
// not. The stop is SIGTERM's: the report is written, --strict decides
// the exit code. It returns when ctx ends.
func watchParent(ctx context.Context, stop context.CancelFunc, stderr io.Writer) {
	parent := os.Getppid()
	tick := time.NewTicker(parentPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if os.Getppid() != parent {
				fmt.Fprintf(stderr, "mcpmock: the process that started it (pid %d) has ended: stopping (--exit-with-parent)\n", parent)
				stop()
				return
			}
		}
	}
}
