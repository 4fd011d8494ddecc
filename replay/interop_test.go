package replay_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

func filepathTemp() (string, error) { return os.MkdirTemp("", "mcptape-replay-") }

// recordGo records goScenario against the Go SDK server through mcpspy
// (stdio) and returns the cassette and what the client saw live.
func recordGo(t *testing.T, version string) (string, transcript) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "gosdk.db")
	spy := peertest.Binary(t, "mcpspy")
	cmd := exec.Command(spy, "record", "-o", db, "--", goServer(t))
	cmd.Stderr = os.Stderr
	live := goScenario(t, &mcp.CommandTransport{Command: cmd}, version)
	return db, live
}

func TestReplay_GoSDKOverStdio(t *testing.T) {
	tests := []struct {
		name    string
		version string // "" = go-sdk's default: server/discover first
	}{
		{"stateless era (server/discover)", ""},
		{"handshake era", "2025-11-25"},
	}
	mock := peertest.Binary(t, "mcpmock")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, live := recordGo(t, tt.version)
			report := filepath.Join(t.TempDir(), "report.json")
			cmd := exec.Command(mock, "serve", "--report", report, db)
			cmd.Stderr = os.Stderr
			replayed := goScenario(t, &mcp.CommandTransport{Command: cmd}, tt.version)
			if d := cmp.Diff(live, replayed); d != "" {
				t.Errorf("replay differs from live (-live +replay):\n%s", d)
			}
			t.Logf("live transcript:\n%v", live)
		})
	}
}
