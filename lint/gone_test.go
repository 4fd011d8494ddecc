package lint_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
	"github.com/mcptape/mcptape/vcr"
)

// TestRealPeers_SessionGoneReused records two real clients through the
// HTTP recorder while mcpmock (script-faults.yaml's tool "expire")
// answers a call with 404 for their session. The spec says the client
// must then initialize a new session. The TypeScript SDK client 1.32.2
// sends its next call with the dead Mcp-Session-Id (and gets 404 again):
// lint reports it once. go-sdk's client ends its session
// (ErrSessionMissing); a new one initializes afresh: nothing to report.
func TestRealPeers_SessionGoneReused(t *testing.T) {
	root := peertest.ModuleRoot()
	mock := peertest.Binary(t, "mcpmock")
	p := peertest.Start(t, root, nil, nil, nil, mock, "serve", "--http", "127.0.0.1:0", filepath.Join(root, "cassettes", "script-faults.yaml"))
	mockURL := strings.TrimSpace(p.WaitLine(t, "mcpmock: listening on ", 30*time.Second))

	tests := []struct {
		name  string
		drive func(t *testing.T, url string)
		want  int // session-gone-reused findings
	}{
		{"TypeScript SDK client", func(t *testing.T, url string) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			argv := peertest.NodeScript(t, "script-client.mjs", "expire", "--url", url)
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir = root
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			// What it saw: the 404, a second 404 for the dead id, then a
			// new client served (TestTSClient_Faults checks it whole).
			if err != nil || !strings.Contains(string(out), `"sameSession":{"code":404`) || !strings.Contains(string(out), `"again":{"text":"fine"}`) {
				t.Fatalf("client: %v\n%s\nstderr:\n%s", err, out, stderr.String())
			}
		}, 1},
		{"go-sdk client", func(t *testing.T, url string) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// The handshake era: 2026-07-28 has no session to lose.
			open := func() *mcp.ClientSession {
				c := mcp.NewClient(&mcp.Implementation{Name: "lint-test", Version: "1"}, nil)
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					t.Fatal(err)
				}
				return cs
			}
			cs := open()
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "expire", Arguments: map[string]any{}}); !errors.Is(err, mcp.ErrSessionMissing) {
				t.Fatalf("expire: %v, want ErrSessionMissing", err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ok", Arguments: map[string]any{}}); err == nil {
				t.Fatal("a call in the session after its 404 worked")
			}
			again := open()
			defer again.Close()
			call(t, again, "ok", map[string]any{}, nil)
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rec.db")
			t.Run("record", func(t *testing.T) {
				rec := vcr.NewHTTP(t, path, mockURL, vcr.WithMode(vcr.Record))
				tt.drive(t, rec.URL())
			})
			tape, err := store.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var reused []lint.Finding
			refused := 0
			for _, f := range lint.Tape(tape, lint.Options{}) {
				switch f.Rule {
				case "session-gone-reused":
					reused = append(reused, f)
				case "http-status":
					refused++
				}
			}
			if len(reused) != tt.want || refused == 0 {
				t.Fatalf("session-gone-reused %v, want %d; %d http-status findings, want the 404s", reused, tt.want, refused)
			}
			for _, f := range reused {
				gone := messageAt(t, tape, f.Session, f.Related)
				if status, sessionGone := gone.HTTP.Refusal(); status != 404 || !sessionGone || !strings.Contains(string(gone.Frame), `"expire"`) {
					t.Errorf("%s points at %s:%d, %s (HTTP %+v), want the POST of expire answered 404", f, f.Session, f.Related, gone.Frame, gone.HTTP)
				}
			}
		})
	}
}

func messageAt(t *testing.T, tape *store.Tape, session string, seq uint64) *store.Message {
	t.Helper()
	for _, s := range tape.Sessions {
		if s.Info.ID == session && seq >= 1 && int(seq) <= len(s.Messages) {
			return s.Messages[seq-1]
		}
	}
	t.Fatalf("no message %s:%d", session, seq)
	return nil
}
