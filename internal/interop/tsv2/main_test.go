package tsv2_test

import (
	"os"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// These tests mostly wait on node and on the peers' own timers, so the
// three of them run side by side.
func TestMain(m *testing.M) {
	peertest.WaitingParallel(3)
	os.Exit(m.Run())
}
