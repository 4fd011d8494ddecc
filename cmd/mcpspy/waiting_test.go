package main

import (
	"os"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// The longest of these tests wait on the programs they start (a live
// recorder followed, a server's answers, node starting): the package ran
// 82 s for 26 s of CPU. Those run side by side.
func TestMain(m *testing.M) {
	peertest.WaitingParallel(4)
	os.Exit(m.Run())
}
