package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMcpspy_FilterHTTP: show --filter and export --filter select the
// messages of server-everything's Streamable HTTP recording by the HTTP
// status and stream recorded with them (the stream's kind, or its id: one
// exchange), as the recording's own metadata says, from the .db and from
// its .jsonl twin alike.
func TestMcpspy_FilterHTTP(t *testing.T) {
	db := peertest.CopyShipped(t, "everything-http.db")
	twin := peertest.CopyShipped(t, "everything-http.jsonl")
	msgs := readTape(t, db).Sessions[0].Messages
	pick := func(keep func(m *store.Message) bool) []uint64 {
		var out []uint64
		for _, m := range msgs {
			if keep(m) {
				out = append(out, m.Seq)
			}
		}
		return out
	}
	brief := func(m *store.Message) store.HTTPBrief { return m.HTTP.Brief() }
	clientNotifications := pick(func(m *store.Message) bool {
		return m.Dir == store.C2S && jsonrpc.Classify(m.Frame).Kind == jsonrpc.Notification
	})
	if len(clientNotifications) == 0 {
		t.Fatal("the recording has no client notification (notifications/initialized at least)")
	}
	tests := []struct {
		name, filter string
		want         []uint64
	}{
		{"202s are the client's notifications", "status:202", clientNotifications},
		{"202s by the metadata", "status:202", pick(func(m *store.Message) bool { return brief(m).Status == 202 })},
		{"the server's 200s", "status:2xx dir:s2c", pick(func(m *store.Message) bool { return m.Dir == store.S2C && brief(m).Status/100 == 2 })},
		{"no status", "!status:2xx", pick(func(m *store.Message) bool { return brief(m).Status/100 != 2 })},
		{"refusals", "status:4xx|5xx", pick(func(m *store.Message) bool { s, _ := m.HTTP.Refusal(); return s != 0 })},
		{"the GET stream", "stream:get-sse", pick(func(m *store.Message) bool { return brief(m).Stream == store.StreamGetSSE })},
		{"one call's exchange, as F follows it", "session:s1 stream:6", pick(func(m *store.Message) bool { return m.HTTP != nil && m.HTTP.StreamID == 6 })},
		{"an exchange and the GET stream", "stream:6|get-sse", pick(func(m *store.Message) bool {
			return m.HTTP != nil && (m.HTTP.StreamID == 6 || m.HTTP.Stream == store.StreamGetSSE)
		})},
		{"events on POSTs with text", "stream:post-sse progress", pick(func(m *store.Message) bool {
			return brief(m).Stream == store.StreamPostSSE && strings.Contains(string(m.Frame), "progress")
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{db, twin} {
				got, errOut := showSeqs(t, "--filter", tt.filter, path)
				if !slices.Equal(got, tt.want) {
					t.Errorf("show --filter %q %s shows %v, want %v", tt.filter, filepath.Base(path), got, tt.want)
				}
				if none := strings.Contains(errOut, "the filter matched no message"); none != (len(tt.want) == 0) {
					t.Errorf("stderr %q for %d messages shown", errOut, len(got))
				}
			}
			var exported []uint64
			out := filepath.Join(t.TempDir(), "out.jsonl")
			if file := exportWithFilter(t, db, tt.filter, nil, out); len(file) > 0 {
				for _, m := range readTape(t, out).Sessions[0].Messages {
					exported = append(exported, noteSeq(t, m.Note, "everything-http.db"))
				}
			}
			if !slices.Equal(exported, tt.want) {
				t.Errorf("export --filter %q keeps %v, want %v", tt.filter, exported, tt.want)
			}
		})
	}
}

// showSeqs runs show with args and returns the seqs of the lines it
// prints (of one session: "s2:5" is no seq), and its stderr.
func showSeqs(tb testing.TB, args ...string) (seqs []uint64, stderr string) {
	tb.Helper()
	code, out, errOut := runCaptured(append([]string{"show"}, args...)...)
	if code != 0 {
		tb.Fatalf("show %q: exit %d\n%s", args, code, errOut)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var seq uint64
		if _, err := fmt.Sscan(line, &seq); err == nil {
			seqs = append(seqs, seq)
		}
	}
	return seqs, errOut
}

// TestMcpspy_FilterGetStream: a go-sdk server that answers with JSON
// bodies sends a call's progress on the client's GET stream. Recorded
// through the mcpspy binary, stream:get-sse shows what the recording says
// came on that stream: the progress, and nothing else.
func TestMcpspy_FilterGetStream(t *testing.T) {
	server := gosdk.NewServer("upstream-go")
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(up.Close)
	db := filepath.Join(t.TempDir(), "c.db")
	sp := startSpy(t, "-o", db, "--upstream", up.URL+"/mcp")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	progress := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: sp.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3}}
	params.SetProgressToken("tok-1")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	// The GET stream may bring the progress after the call's answer:
	// closing before it has would leave it unsent.
	for range 3 {
		select {
		case <-progress:
		case <-ctx.Done():
			t.Fatal("the client did not get the 3 progress notifications in 30 s")
		}
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if err := sp.stop(t); err != nil {
		t.Fatalf("mcpspy: %v\n%s", err, sp.stderr)
	}

	tape := readTape(t, db)
	var sess *store.TapeSession
	for i := range tape.Sessions {
		if tape.Sessions[i].Info.HTTPSessionID != "" {
			sess = &tape.Sessions[i] // not go-sdk's sessionless server/discover probe
		}
	}
	if sess == nil {
		t.Fatalf("no session with an Mcp-Session-Id among %d", len(tape.Sessions))
	}
	var onGet, progressSeqs []uint64
	for _, m := range sess.Messages {
		if m.HTTP.Brief().Stream == store.StreamGetSSE {
			onGet = append(onGet, m.Seq)
		}
		if jsonrpc.Classify(m.Frame).Method == "notifications/progress" {
			progressSeqs = append(progressSeqs, m.Seq)
		}
	}
	if len(progressSeqs) != 3 || !slices.Equal(onGet, progressSeqs) {
		t.Fatalf("the recording has progress %v and GET-stream messages %v: want the same 3", progressSeqs, onGet)
	}
	for _, filter := range []string{"stream:get-sse", "stream:get-sse|legacy-sse status:200", "status:2xx method:notifications/progress"} {
		got, _ := showSeqs(t, "--session", sess.Info.ID, "--filter", filter, db)
		if !slices.Equal(got, onGet) {
			t.Errorf("show --filter %q shows %v, want the GET stream's %v", filter, got, onGet)
		}
	}
}
