package replay_test

import (
	"os"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// Most of this package's test time is spent waiting on peers (task poll
// intervals, recorded delays, node starting), so its long peer tests run
// side by side.
func TestMain(m *testing.M) {
	peertest.WaitingParallel(6)
	os.Exit(m.Run())
}
