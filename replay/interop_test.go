package replay_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
)

// recordGo records goScenario against the Go SDK server through mcpspy,
// over stdio or Streamable HTTP, and returns the cassette and what the
// client saw live.
func recordGo(t *testing.T, transport, version string) (string, transcript) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "gosdk.db")
	spy := peertest.Binary(t, "mcpspy")
	t.Cleanup(func() { logCassette(t, spy, db) })
	if transport == "stdio" {
		cmd := exec.Command(spy, "record", "-o", db, "--", goServer(t))
		cmd.Stderr = os.Stderr
		return db, goScenario(t, &mcp.CommandTransport{Command: cmd}, version, "tok-rec")
	}
	srv := peertest.Start(t, "", nil, nil, nil, goServer(t), "-http", "127.0.0.1:0")
	url := srv.WaitLine(t, "gosdkserver: listening on ", 20*time.Second)
	p := peertest.Start(t, "", nil, nil, nil, spy, "record", "-o", db, "--listen", "127.0.0.1:0", "--upstream", strings.TrimSuffix(url, "/"))
	purl := p.WaitLine(t, "mcpspy: listening on ", 20*time.Second)
	live := goScenario(t, &mcp.StreamableClientTransport{Endpoint: purl + "/mcp"}, version, "tok-rec")
	p.Stop(t, 15*time.Second)
	return db, live
}

// mockTransport starts mcpmock on a cassette and returns a Go SDK
// transport to it.
func mockTransport(t *testing.T, transport, db, report string) mcp.Transport {
	t.Helper()
	mock := peertest.Binary(t, "mcpmock")
	switch transport {
	case "stdio":
		cmd := exec.Command(mock, "serve", "--report", report, db)
		cmd.Stderr = os.Stderr
		return &mcp.CommandTransport{Command: cmd}
	case "http":
		p := peertest.Start(t, "", nil, nil, nil, mock, "serve", "--http", "127.0.0.1:0", "--report", report, db)
		url := p.WaitLine(t, "mcpmock: listening on ", 20*time.Second)
		t.Cleanup(func() {
			p.Stop(t, 15*time.Second)
			if t.Failed() {
				t.Logf("mcpmock stderr:\n%s", p.Stderr())
			}
		})
		return &mcp.StreamableClientTransport{Endpoint: url}
	}
	t.Fatalf("unknown transport %q", transport)
	return nil
}

func readReport(t *testing.T, path string) replay.Report {
	t.Helper()
	var r replay.Report
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("report %s: %v", path, err)
	}
	return r
}

// TestReplay_GoSDK records the Go SDK server with mcpspy and replays it with
// mcpmock to the same Go SDK client code, across transports and eras. The
// client sends another progress token when replaying. Its confirm call
// has the server ask the client for input: by an elicitation/create
// request in the handshake era, by an input_required result and a retry
// in 2026-07-28; both replay.
func TestReplay_GoSDK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		recordOver    string
		recordVersion string // "" = go-sdk's default: server/discover first
		replayOver    string
		replayVersion string
	}{
		{name: "stdio, stateless era", recordOver: "stdio", replayOver: "stdio"},
		{name: "stdio, handshake era", recordOver: "stdio", recordVersion: "2025-11-25", replayOver: "stdio", replayVersion: "2025-11-25"},
		{name: "handshake-era cassette, client probing server/discover", recordOver: "stdio", recordVersion: "2025-11-25", replayOver: "stdio"},
		{name: "recorded on stdio, replayed over HTTP", recordOver: "stdio", recordVersion: "2025-11-25", replayOver: "http", replayVersion: "2025-11-25"},
		{name: "recorded over HTTP, replayed over HTTP", recordOver: "http", recordVersion: "2025-11-25", replayOver: "http", replayVersion: "2025-11-25"},
		{name: "recorded over HTTP, replayed on stdio", recordOver: "http", recordVersion: "2025-11-25", replayOver: "stdio", replayVersion: "2025-11-25"},
		{name: "stateless era over HTTP", recordOver: "http", replayOver: "http"},
		{name: "stateless era, recorded on stdio, replayed over HTTP", recordOver: "stdio", replayOver: "http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, live := recordGo(t, tt.recordOver, tt.recordVersion)
			report := filepath.Join(t.TempDir(), "report.json")
			replayed := goScenario(t, mockTransport(t, tt.replayOver, db, report), tt.replayVersion, "tok-replay")
			if d := cmp.Diff(live, replayed); d != "" {
				t.Errorf("replay differs from live (-live +replay):\n%s", d)
			}
			if tt.replayOver == "stdio" { // the HTTP mock writes its report when stopped
				waitReport(t, report)
			}
		})
	}
}

// waitReport waits for mcpmock to write its report and checks it.
func waitReport(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report at %s", path)
		}
		time.Sleep(10 * time.Millisecond) // polling for a file, with a deadline
	}
	r := readReport(t, path)
	if len(r.Unmatched) > 0 || len(r.Unused) > 0 {
		t.Errorf("unmatched requests: %+v; unused: %q", r.Unmatched, r.Unused)
	}
	if r.Matched == 0 {
		t.Errorf("report counts no matched request: %+v", r)
	}
}

// logCassette shows a failed test's cassette, one short line a message.
func logCassette(t *testing.T, spy, db string) {
	if !t.Failed() {
		return
	}
	out, err := exec.Command(spy, "export", db).CombinedOutput()
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if len(l) > 240 {
			l = l[:240] + "…"
		}
		lines = append(lines, l)
	}
	t.Logf("cassette %s (%v):\n%s", db, err, strings.Join(lines, "\n"))
}

// TestReplay_InputRequiredAcrossEras replays a 2026-07-28 recording in
// which the server asked for input (an input_required answer, then the
// client's retry) to clients of the handshake era, which know no such
// answer: mcpmock asks them with an elicitation/create request mid-call,
// as a server of their era would, and answers the call with the recorded
// answer to the retry. go-sdk's client is told to leave input_required
// answers alone, so that only mcpmock's asking can get it its answer; the
// TypeScript SDK's client never knew them.
func TestReplay_InputRequiredAcrossEras(t *testing.T) {
	t.Parallel()
	db, _ := recordGo(t, "stdio", "")

	for _, name := range []string{"Ada", "Bob"} {
		t.Run("go-sdk client, 2025-11-25, answering "+name, func(t *testing.T) {
			var asked []string
			c := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, &mcp.ClientOptions{
				MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			report := filepath.Join(t.TempDir(), "report.json")
			cs, err := c.Connect(ctx, mockTransport(t, "stdio", db, report), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{}})
			cs.Close()
			if len(asked) != 1 || asked[0] != "What is your name?" {
				t.Errorf("asked %q; want one elicitation", asked)
			}
			if name == "Ada" { // what the recorded client answered
				if err != nil || resultText(res) != "hello Ada" || res.NeedsInput() {
					t.Errorf("confirm: %v %+v; want hello Ada", err, res)
				}
				return
			}
			// Other input: no recorded retry has it. The call gets an
			// error naming the nearest, and the report counts it.
			if err == nil || !strings.Contains(err.Error(), "matches no recorded retry") || !strings.Contains(err.Error(), `"Bob"`) {
				t.Errorf("confirm answered %v, %+v; want the unmatched retry's error", err, res)
			}
			deadline := time.Now().Add(15 * time.Second)
			for _, err := os.Stat(report); err != nil; _, err = os.Stat(report) {
				if time.Now().After(deadline) {
					t.Fatalf("no report at %s", report)
				}
				time.Sleep(10 * time.Millisecond) // polling for a file, with a deadline
			}
			if r := readReport(t, report); len(r.Unmatched) != 1 || r.Unmatched[0].Method != "tools/call" || !strings.Contains(r.Unmatched[0].Diff, "Ada") {
				t.Errorf("report's unmatched: %+v; want the retry, nearest the recorded one", r.Unmatched)
			}
		})
	}

	t.Run("TypeScript SDK client", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		argv := peertest.NodeScript(t, "script-client.mjs", "confirm", "--", peertest.Binary(t, "mcpmock"), "serve", db)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("TS client: %v\n%s", err, stderr.String())
		}
		if want := `{"server":"gosdkserver","protocolVersion":null,"text":"hello Ada","asked":["What is your name?"]}`; strings.TrimSpace(string(out)) != want {
			t.Errorf("TS client saw\n%s\nwant\n%s\nstderr:\n%s", out, want, stderr.String())
		}
	})
}
