package script_test

import (
	"os"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// The TypeScript SDK scenarios (parallel subtests) spend about half their
// time waiting: on node starting, on scripted delays and poll intervals.
func TestMain(m *testing.M) {
	peertest.WaitingParallel(4)
	os.Exit(m.Run())
}
