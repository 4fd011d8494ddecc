package inspector

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordEverythingHTTP records, through mcpspy, a go-sdk client talking
// to server-everything over Streamable HTTP: a call whose progress and
// answer come on its POST's event stream, and simulated logging, which
// the server sends on the client's GET stream (it names no request).
func recordEverythingHTTP(t *testing.T) string {
	t.Helper()
	base, _ := peertest.StartEverythingHTTP(t, "streamableHttp")
	out := filepath.Join(t.TempDir(), "everything-http.db")
	spy := peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpspy"), "record", "-o", out, "--upstream", base+"/mcp")
	url := spy.WaitLine(t, "mcpspy: listening on ", 30*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	logged := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "inspector-test", Version: "1.0.0"}, &mcp.ClientOptions{
		//lint:ignore SA1019 server-everything speaks 2025-11-25, where logging is current
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
			select {
			case logged <- struct{}{}:
			default:
			}
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect through mcpspy: %v", err)
	}
	params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
	params.SetProgressToken("tok-follow")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "toggle-simulated-logging", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	// The first log message may go out before the GET stream is open, and
	// be dropped; the server sends another every 5 s.
	select {
	case <-logged:
	case <-ctx.Done():
		t.Fatal("no log message on the GET stream in 60 s")
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	spy.Stop(t, 30*time.Second)
	return out
}

// TestFollowStream_RealHTTP: on a real Streamable HTTP recording, F on a
// progress notification keeps its call's POST exchange (the request, the
// progress, the answer) and nothing else, and on a log message the GET
// stream, each as the recording's metadata says, and none of the other
// session's (go-sdk's server/discover, whose stream ids are the same
// small numbers); mcpspy show prints the same lines.
func TestFollowStream_RealHTTP(t *testing.T) {
	path := recordEverythingHTTP(t)
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// go-sdk asks server/discover first, on a connection of its own: a
	// session of its own. The calls are in the other.
	var sess *store.TapeSession
	for i := range tape.Sessions {
		if tape.Sessions[i].Info.Handshake.Method == "initialize" {
			sess = &tape.Sessions[i]
		}
	}
	if sess == nil {
		t.Fatalf("no session of the %d has an initialize", len(tape.Sessions))
	}
	// first returns the first message with that method and its stream.
	first := func(method string) (*store.Message, string) {
		for _, m := range sess.Messages {
			if jsonrpc.Classify(m.Frame).Method == method && m.HTTP != nil {
				return m, fmt.Sprintf("session:%s stream:%d", sess.Info.ID, m.HTTP.StreamID)
			}
		}
		t.Fatalf("the recording has no %s", method)
		return nil, ""
	}
	onStream := func(id uint64) []string {
		var out []string
		for _, m := range sess.Messages {
			if m.HTTP != nil && m.HTTP.StreamID == id {
				out = append(out, fmt.Sprintf("%s:%d", sess.Info.ID, m.Seq))
			}
		}
		return out
	}
	progress, progressFilter := first("notifications/progress")
	logMsg, logFilter := first("notifications/message")
	if progress.HTTP.Stream != store.StreamPostSSE || logMsg.HTTP.Stream != store.StreamGetSSE {
		t.Fatalf("progress came on %s, the log message on %s: want post-sse and get-sse", progress.HTTP.Stream, logMsg.HTTP.Stream)
	}

	m, src := openModel(t, path)
	for _, tt := range []struct {
		msg    *store.Message
		filter string
		// what the stream holds, by method and kind: one call's exchange,
		// or the GET stream's log messages alone
		check func(ms []*store.Message) string
	}{
		{progress, progressFilter, func(ms []*store.Message) string {
			var req, prog, resp int
			for _, m := range ms {
				c := jsonrpc.Classify(m.Frame)
				switch {
				case c.Kind == jsonrpc.Request && c.Method == "tools/call":
					req++
				case c.Method == "notifications/progress":
					prog++
				case c.Kind == jsonrpc.Response:
					resp++
				default:
					return "a " + c.Method + " " + c.Kind.String()
				}
			}
			if req != 1 || prog != 3 || resp != 1 {
				return fmt.Sprintf("%d calls, %d progress, %d answers: want 1, 3, 1", req, prog, resp)
			}
			return ""
		}},
		// The GET stream also brings tools/list_changed and roots/list
		// requests, whose answers the client POSTs: other streams.
		{logMsg, logFilter, func(ms []*store.Message) string {
			for _, m := range ms {
				if c := jsonrpc.Classify(m.Frame); m.Dir != store.S2C || m.HTTP.Stream != store.StreamGetSSE {
					return fmt.Sprintf("#%d: %s %s on %s", m.Seq, c.Method, c.Kind, m.HTTP.Stream)
				}
			}
			return ""
		}},
	} {
		t.Run(tt.filter, func(t *testing.T) {
			idx := -1
			for i := 0; i < m.Len(); i++ {
				if r, _ := m.ByIndex(i); r.Session == sess.Info.ID && r.Seq == tt.msg.Seq {
					idx = i
				}
			}
			got, err := m.StreamFilter(idx, src)
			if err != nil || got != tt.filter {
				t.Fatalf("StreamFilter(#%d) = %q, %v; want %q", tt.msg.Seq, got, err, tt.filter)
			}
			want := onStream(tt.msg.HTTP.StreamID)
			var ms []*store.Message
			for _, msg := range sess.Messages {
				if msg.HTTP != nil && msg.HTTP.StreamID == tt.msg.HTTP.StreamID {
					ms = append(ms, msg)
				}
			}
			if why := tt.check(ms); why != "" {
				t.Fatalf("the recording's stream %d: %s", tt.msg.HTTP.StreamID, why)
			}
			if shown := filtered(t, m, src, tt.filter); !slices.Equal(shown, want) {
				t.Errorf("%q shows %v, want %v", tt.filter, shown, want)
			}
			var text bytes.Buffer
			if _, err := m.WriteText(context.Background(), &text, src, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(text.String(), "\n"); lines != len(want) {
				t.Errorf("show --filter %q: %d lines, want %d:\n%s", tt.filter, lines, len(want), text.String())
			}
		})
	}

	// The key: from the progress rows alone, F on the first one.
	filtered(t, m, src, "method:notifications/progress")
	h := startApp(t, m, src, Options{}, 100, 30)
	h.waitFor(wait, []string{"filter: method:notifications/progress"})
	h.keys("F")
	h.waitFor(wait, []string{"filter: " + progressFilter, fmt.Sprintf(" %d/%d ", len(onStream(progress.HTTP.StreamID)), m.Len()),
		"tools/call trigger-long-running"}, "notifications/message")
	if r := h.selected(); r.Seq != progress.Seq {
		t.Errorf("selected #%d after F, want #%d, the progress F was pressed on", r.Seq, progress.Seq)
	}
}
