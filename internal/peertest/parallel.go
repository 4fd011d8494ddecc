package peertest

import (
	"flag"
	"strconv"
)

// WaitingParallel sets how many of a package's t.Parallel tests run at
// once, unless -test.parallel was given. Call it from TestMain before
// m.Run.
//
// The default is GOMAXPROCS, which suits tests that keep a core busy.
// Tests that talk to real peers mostly wait: on a task's poll interval,
// a scripted delay, a process starting. replay's ran 327 s for 88 s of
// CPU. Letting n such tests wait side by side costs no more CPU and
// takes a fraction of the time.
func WaitingParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			given = true
		}
	})
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
