package recorder_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientOut is what testdata/npm/http-client.mjs prints.
type clientOut struct {
	SessionID      string `json:"sessionId"`
	Server         string `json:"server"`
	Tools          int    `json:"tools"`
	Echo           string `json:"echo"`
	Progress       int    `json:"progress"`
	ProgressResult string `json:"progressResult"`
}

// runTSClient runs the TypeScript SDK client script to completion.
func runTSClient(tb testing.TB, args ...string) clientOut {
	tb.Helper()
	argv := peertest.NodeScript(tb, "http-client.mjs", args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = peertest.NPMDir(tb)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			tb.Fatalf("ts client %v: %v\nstderr:\n%s", args, err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		tb.Fatalf("ts client %v did not finish in 60s\nstderr:\n%s", args, stderr.String())
	}
	var out clientOut
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &out); err != nil {
		tb.Fatalf("ts client output %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	return out
}

// The TS SDK client talks to server-everything through the proxy, over
// Streamable HTTP (with a GET stream, SSE answers with event ids, DELETE
// at the end) and over legacy HTTP+SSE (endpoint event, POST /message).
func TestHTTPProxy_ServerEverything(t *testing.T) {
	tests := []struct {
		name, mode, path, client string
	}{
		{name: "streamable HTTP", mode: "streamableHttp", path: "/mcp", client: "streamable"},
		{name: "legacy HTTP+SSE", mode: "sse", path: "/sse", client: "sse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := peertest.EverythingHTTP(t, tt.mode)
			px := startHTTPProxy(t, up+tt.path)
			out := runTSClient(t, tt.client, px.URL+tt.path, "echo", `{"message":"hi there"}`,
				"trigger-long-running-operation", `{"duration":0.3,"steps":3}`)
			// Peer surprise (TS SDK 1.32.2): the client dispatches
			// notifications a task later than responses, so progress that
			// arrives in the same read as the result is dropped ("unknown
			// token"), with or without mcpspy (TestTSClient_ProgressRace).
			// The client's count is a lower bound; the cassette's is exact.
			if !strings.Contains(out.Echo, "hi there") || out.Progress > 3 || out.Progress < 1 || out.Tools == 0 {
				t.Errorf("client saw %+v", out)
			}
			px.Stop()
			got := readCassette(t, px.Cassette)
			if testing.Verbose() {
				for _, s := range got {
					t.Logf("session %s %s sid=%q end=%+v bare=%+v", s.info.ID, s.info.Transport, s.info.HTTPSessionID, s.info.End, s.info.Bare)
					for _, m := range s.msgs {
						t.Logf("  %d %s %s %s %s st=%d sid=%d ev=%q type=%q retry=%q prim=%q %.70s", m.Seq, m.Dir, m.HTTP.Method, m.HTTP.Path, m.HTTP.Stream, m.HTTP.Status, m.HTTP.StreamID, m.HTTP.EventID, m.HTTP.EventType, m.HTTP.Retry, m.HTTP.Priming, m.Frame)
					}
				}
			}
			if len(got) != 1 {
				t.Fatalf("want one session, got %d:\n%s", len(got), strings.Join(flat(got), "\n"))
			}
			s := got[0]
			if h := s.info.Handshake; h.Method != "initialize" || !strings.Contains(string(h.ServerInfo), "everything") || !strings.Contains(string(h.Capabilities), `"tools"`) || !strings.Contains(h.Instructions, "Everything Server") {
				t.Errorf("handshake = %+v", h)
			}
			progress := 0
			streams := map[string]int{}
			for _, m := range s.msgs {
				streams[m.HTTP.Stream]++
				sum := jsonrpc.Classify(m.Frame)
				if sum.Method == "notifications/progress" {
					progress++
				}
				if m.Dir == store.S2C && m.HTTP.Stream != "json" && m.HTTP.Status != 200 {
					t.Errorf("seq %d: status %d", m.Seq, m.HTTP.Status)
				}
			}
			if progress != 3 {
				t.Errorf("recorded %d progress notifications, want 3", progress)
			}
			if checkAcceptedPosts(t, s.msgs) == 0 {
				t.Errorf("no client notification recorded (notifications/initialized at least)")
			}
			switch tt.mode {
			case "streamableHttp":
				if s.info.Transport != store.TransportHTTP || s.info.HTTPSessionID != out.SessionID || out.SessionID == "" {
					t.Errorf("session info %+v, client session %q", s.info, out.SessionID)
				}
				if s.info.End == nil || s.info.End.Reason != store.EndClosed {
					t.Errorf("end = %+v, want closed (DELETE)", s.info.End)
				}
				// The DELETE carried no message either way: the info keeps it.
				if !slices.ContainsFunc(s.info.Bare, func(b store.BareExchange) bool {
					return b.HTTP.Method == http.MethodDelete && b.HTTP.Status == http.StatusOK && b.HTTP.RequestHeader.Get("Mcp-Session-Id") == out.SessionID
				}) {
					t.Errorf("the session's bare exchanges %+v lack the client's DELETE", s.info.Bare)
				}
				for _, m := range s.msgs {
					if m.HTTP.Stream == "post-sse" && m.HTTP.EventID == "" {
						t.Errorf("seq %d: SSE event without its id (server-everything keeps an event store)", m.Seq)
					}
				}
			case "sse":
				if s.info.Transport != store.TransportLegacySSE {
					t.Errorf("transport = %q", s.info.Transport)
				}
				first := s.msgs[0]
				if first.HTTP.EventType != "endpoint" || !bytes.HasPrefix(first.Frame, []byte("/message?sessionId=")) {
					t.Errorf("first frame = %s (%+v), want the endpoint event", first.Frame, first.HTTP)
				}
				for _, m := range s.msgs[1:] {
					want := "legacy-sse"
					if m.Dir == store.C2S {
						want = "post-body"
						if !strings.HasPrefix(m.HTTP.Path, "/message?sessionId=") {
							t.Errorf("seq %d posted to %q", m.Seq, m.HTTP.Path)
						}
						// Every legacy POST is answered 202, requests too: their
						// answers travel on the stream.
						if m.HTTP.Status != http.StatusAccepted {
							t.Errorf("seq %d: POST answered %d, want 202 recorded", m.Seq, m.HTTP.Status)
						}
					}
					if m.HTTP.Stream != want {
						t.Errorf("seq %d on stream %q, want %q", m.Seq, m.HTTP.Stream, want)
					}
				}
				if s.info.End == nil || !slices.Contains([]string{store.EndEOF, store.EndClosed}, s.info.End.Reason) {
					t.Errorf("end = %+v", s.info.End)
				}
			}
		})
	}
}

// server-everything (Node) closes a keep-alive connection after 5 s idle.
// A go-sdk client that waits longer between calls keeps its connection to
// mcpspy, and its next call must still be answered: the proxy sees the
// upstream connection closed before it writes to it, and dials anew.
func TestHTTPProxy_ServerEverythingIdleUpstream(t *testing.T) {
	t.Parallel()
	up := peertest.EverythingHTTP(t, "streamableHttp")
	px := startHTTPProxy(t, up+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{}} // keeps its idle connection to mcpspy
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "idle", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i, wait := range []time.Duration{0, 8 * time.Second} {
		time.Sleep(wait) // past Node's keepAliveTimeout (5 s), with room for a late timer on a loaded machine
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "call " + fmt.Sprint(i+1)}})
		if err != nil {
			t.Fatalf("call %d (after %v idle): %v", i+1, wait, err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, fmt.Sprintf("call %d", i+1)) {
			t.Errorf("call %d: answer %q", i+1, text)
		}
	}
}
