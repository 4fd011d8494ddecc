package replay_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
)

// testdata/refused.jsonl records a server that refused a tools/call with
// a bare 503, answered the same call when the client tried again, and
// was down for the next (mcpspy's own 502).

func refusedServer(t *testing.T) *replay.Server { return testdataServer(t, "refused.jsonl") }

// testdataServer serves the cassette testdata/name.
func testdataServer(t *testing.T, name string) *replay.Server {
	t.Helper()
	c, err := replay.LoadCassette(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer([]replay.Source{c}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestReplay_RecordedStatus: go-sdk's client meets the recorded statuses
// again, over Streamable HTTP as the statuses, over stdio as the JSON-RPC
// errors that name them; the call between them gets its recorded answer.
func TestReplay_RecordedStatus(t *testing.T) {
	stdioErr := func(status string) string {
		return "HTTP " + status + " (fault http-" + status[:3] + "; this transport has no HTTP status)"
	}
	tests := []struct {
		transport string
		want      [3]string // per call: the answer's text, or the error's
	}{
		{"http", [3]string{"Service Unavailable", "a", "Bad Gateway"}},
		{"stdio", [3]string{stdioErr("503 Service Unavailable"), "a", stdioErr("502 Bad Gateway")}},
	}
	for _, tt := range tests {
		t.Run(tt.transport, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			srv := refusedServer(t)
			var tr mcp.Transport
			if tt.transport == "http" {
				hs := httptest.NewServer(srv.Handler())
				t.Cleanup(func() { srv.Close(); hs.Close() })
				tr = &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}
			} else {
				cr, sw := io.Pipe()
				sr, cw := io.Pipe()
				done := make(chan error, 1)
				go func() { done <- srv.ServeStdio(ctx, sr, sw); sw.Close() }()
				t.Cleanup(func() {
					cw.Close()
					if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
						t.Errorf("ServeStdio: %v", err)
					}
				})
				tr = &mcp.IOTransport{Reader: cr, Writer: cw}
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1.0.0"}, nil)
			cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for i, text := range []string{"a", "a", "b"} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
				var rpc *jsonrpc.Error
				switch {
				case i == 1 && (err != nil || resultText(res) != tt.want[i]):
					t.Errorf("call %d: %v, want the answer %q", i+1, err, tt.want[i])
				case i != 1 && (err == nil || !strings.Contains(err.Error(), tt.want[i])):
					t.Errorf("call %d: %v, want an error with %q", i+1, err, tt.want[i])
				case i != 1 && tt.transport == "stdio" && (!errors.As(err, &rpc) || rpc.Code != -32603):
					t.Errorf("call %d: %v, want a JSON-RPC error -32603", i+1, err)
				}
			}
		})
	}
}

// TestReplay_RecordedStatusWire: the POST gets the recorded status and
// no JSON-RPC message.
func TestReplay_RecordedStatusWire(t *testing.T) {
	srv := refusedServer(t)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	c := &peertest.RawHTTP{T: t, URL: hs.URL + "/mcp"}
	steps := []struct {
		body   string
		status int
		text   string // in the body
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, 200, `"serverInfo":{"name":"flaky"`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`, 503, "Service Unavailable (mcpmock fault http-503)\n"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`, 200, `"text":"a"`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}`, 502, "Bad Gateway (mcpmock fault http-502)\n"},
	}
	for _, st := range steps {
		resp := c.Do(http.MethodPost, st.body, nil)
		if c.SessionID == "" {
			c.SessionID = resp.Header.Get("Mcp-Session-Id")
		}
		if b := bodyOf(t, resp); resp.StatusCode != st.status || !strings.Contains(b, st.text) {
			t.Errorf("%s:\ngot %d %q, want %d with %q", st.body, resp.StatusCode, b, st.status, st.text)
		}
	}
}

// testdata/expired.jsonl records a server that answered a tools/call
// with 404 for the session it named (the session had expired), and the
// same call answered in the session the client then began. A replay
// expires the session as the server did, and a client that begins
// another gets the recorded answer: the refusal is given once, not to
// every session that starts over.
func TestReplay_RecordedExpiry(t *testing.T) {
	const (
		initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1.0.0"}}}`
		inited     = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		call       = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`
	)
	expiredServer := func(t *testing.T) string {
		srv := testdataServer(t, "expired.jsonl")
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { srv.Close(); hs.Close() })
		return hs.URL + "/mcp"
	}
	t.Run("wire", func(t *testing.T) {
		url := expiredServer(t)
		type step struct {
			body   string
			status int
			text   string // in the answer's body
		}
		session := func(steps ...step) string {
			c := &peertest.RawHTTP{T: t, URL: url}
			for _, st := range steps {
				resp := c.Do(http.MethodPost, st.body, nil)
				if c.SessionID == "" {
					c.SessionID = resp.Header.Get("Mcp-Session-Id")
				}
				if b := bodyOf(t, resp); resp.StatusCode != st.status || !strings.Contains(b, st.text) {
					t.Errorf("session %s, %.40s: got %d %q, want %d with %q", c.SessionID, st.body, resp.StatusCode, b, st.status, st.text)
				}
			}
			return c.SessionID
		}
		first := session(step{initialize, 200, `"forgetful"`}, step{inited, 202, ""},
			step{call, 404, "session expired"}, step{call, 404, "no such session"})
		second := session(step{initialize, 200, `"forgetful"`}, step{inited, 202, ""}, step{call, 200, `"text":"a"`})
		if first == "" || second == "" || first == second {
			t.Errorf("session ids %q then %q, want two", first, second)
		}
	})
	t.Run("go-sdk", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		url := expiredServer(t)
		connect := func() *mcp.ClientSession {
			c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1.0.0"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			return cs
		}
		args := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "a"}}
		cs := connect()
		if _, err := cs.CallTool(ctx, args); !errors.Is(err, mcp.ErrSessionMissing) {
			t.Errorf("first session's call: %v, want mcp.ErrSessionMissing", err)
		}
		cs.Close()
		// go-sdk does not begin a session again by itself: the host does.
		cs = connect()
		defer cs.Close()
		if res, err := cs.CallTool(ctx, args); err != nil || resultText(res) != "a" {
			t.Errorf("the next session's call: %v, %v; want the recorded answer", res, err)
		}
	})
}
