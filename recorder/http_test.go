package recorder_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk client talks to a go-sdk StreamableHTTPHandler through the
// proxy: stateless (2026-07-28, no handshake, no session id) and stateful
// (the client's server/discover is refused, it falls back to initialize and
// gets a session). Every POST body the server received is in the cassette,
// byte for byte and in order, and the handshake is noted.
func TestHTTPProxy_GoSDK(t *testing.T) {
	tests := []struct {
		name      string
		stateless bool
		json      bool
	}{
		{name: "stateless 2026-07-28", stateless: true},
		{name: "handshake-era session, SSE answers"},
		{name: "handshake-era session, JSON answers", json: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bodyLog
			srv := goSDKServer()
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{Stateless: tt.stateless, JSONResponse: tt.json})
			up := serveHTTP(t, log.wrap(h))
			px := startHTTPProxy(t, up+"/mcp")

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var progressMu sync.Mutex
			var progress []float64
			client := mcp.NewClient(&mcp.Implementation{Name: "client-go", Version: "0.1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					progressMu.Lock()
					progress = append(progress, req.Params.Progress)
					progressMu.Unlock()
				},
			})
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp"}, nil)
			if err != nil {
				t.Fatalf("connect through proxy: %v", err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hé \u2028 \"q\""}})
			if err != nil {
				t.Fatalf("echo: %v", err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "hé \u2028 \"q\"" {
				t.Errorf("echo through proxy = %q", got)
			}
			params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3}}
			params.SetProgressToken("tok-1")
			if _, err := cs.CallTool(ctx, params); err != nil {
				t.Fatalf("progress: %v", err)
			}
			// With JSON answers the server sends progress on the GET stream,
			// which the client opens on its own schedule: the notifications
			// wait in the server until it does. Closing before they arrive
			// would leave them unsent, so nothing to record (seen once on a
			// loaded machine). Wait until the client has them all.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				progressMu.Lock()
				n := len(progress)
				progressMu.Unlock()
				if n >= 3 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the client got %d of 3 progress notifications in 10 s", n)
				}
			}
			if err := cs.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			px.Stop()

			bodies, sids := log.snapshot()
			got := readCassette(t, px.Cassette)
			// Across sessions (stateless traffic: one per connection) only the
			// recorded times give the order the proxy read frames in.
			var c2sMsgs []*store.Message
			for _, s := range got {
				if s.info.Transport != store.TransportHTTP {
					t.Errorf("session %s transport = %q", s.info.ID, s.info.Transport)
				}
				if s.info.End == nil {
					t.Errorf("session %s has no end", s.info.ID)
				}
				for _, m := range s.msgs {
					if m.Dir == store.C2S {
						c2sMsgs = append(c2sMsgs, m)
					}
					if m.HTTP == nil || m.HTTP.Method != "POST" && m.HTTP.Method != "GET" || m.HTTP.Path != "/mcp" {
						t.Errorf("seq %d: http meta %+v", m.Seq, m.HTTP)
					}
				}
			}
			sort.SliceStable(c2sMsgs, func(i, j int) bool { return c2sMsgs[i].Time.Before(c2sMsgs[j].Time) })
			var c2s [][]byte
			for _, m := range c2sMsgs {
				c2s = append(c2s, m.Frame)
			}
			if len(c2s) != len(bodies) {
				t.Fatalf("recorded %d client frames, server got %d bodies:\n%s", len(c2s), len(bodies), strings.Join(flat(got), "\n"))
			}
			for i := range bodies {
				if !bytes.Equal(c2s[i], bodies[i]) {
					t.Errorf("client frame %d:\nrecorded %s\nserver got %s", i, c2s[i], bodies[i])
				}
			}
			all := flat(got)
			if testing.Verbose() {
				for _, s := range got {
					t.Logf("session %s %+v", s.info.ID, s.info.Handshake.Method)
					for _, m := range s.msgs {
						t.Logf("  %d %s %s %s sid=%d ev=%q prim=%q %.80s", m.Seq, m.Dir, m.HTTP.Method, m.HTTP.Stream, m.HTTP.StreamID, m.HTTP.EventID, m.HTTP.Priming, m.Frame)
					}
				}
			}
			for _, want := range []string{"c2s request tools/call", "s2c notification notifications/progress"} {
				if !slices.Contains(all, want) {
					t.Errorf("cassette lacks %q:\n%s", want, strings.Join(all, "\n"))
				}
			}
			if tt.stateless {
				for _, s := range got {
					if s.info.HTTPSessionID != "" {
						t.Errorf("stateless session %s has Mcp-Session-Id %q", s.info.ID, s.info.HTTPSessionID)
					}
				}
				if h := got[0].info.Handshake; h.Method != "server/discover" || !strings.Contains(string(h.ServerInfo), "upstream-go") {
					t.Errorf("handshake = %+v", h)
				}
				return
			}
			if len(sids) != 1 {
				t.Fatalf("server issued session ids %q, want one", sids)
			}
			// go-sdk probes with a sessionless server/discover first: that
			// exchange is its own sessionless session, apart from the
			// session the server issues on initialize.
			var withSID []recorded
			for _, s := range got {
				if s.info.HTTPSessionID != "" {
					withSID = append(withSID, s)
				} else if m := methods(s.msgs); len(m) != 2 || m[0] != "c2s request server/discover" {
					t.Errorf("sessionless session %s holds %q, want only the discover probe", s.info.ID, m)
				}
			}
			if len(withSID) != 1 {
				t.Fatalf("want 1 cassette session for one Mcp-Session-Id, got %d:\n%s", len(withSID), strings.Join(all, "\n"))
			}
			s := withSID[0]
			if m := methods(s.msgs); m[0] != "c2s request initialize" {
				t.Errorf("session starts with %q, want initialize", m[0])
			}
			if !slices.ContainsFunc(s.info.Bare, func(b store.BareExchange) bool {
				return b.HTTP.Method == http.MethodDelete && b.HTTP.Status/100 == 2
			}) {
				t.Errorf("the session's bare exchanges %+v lack the client's DELETE", s.info.Bare)
			}
			if checkAcceptedPosts(t, s.msgs) == 0 {
				t.Errorf("no client notification recorded (notifications/initialized at least):\n%s", strings.Join(methods(s.msgs), "\n"))
			}
			if s.info.HTTPSessionID != sids[0] {
				t.Errorf("HTTPSessionID = %q, server issued %q", s.info.HTTPSessionID, sids[0])
			}
			if h := s.info.Handshake; h.Method != "initialize" || !strings.Contains(string(h.ServerInfo), "upstream-go") || !strings.Contains(string(h.Capabilities), `"tools"`) {
				t.Errorf("handshake = %+v", h)
			}
			if s.info.End.Reason != store.EndClosed {
				t.Errorf("end = %+v, want closed by DELETE", s.info.End)
			}
			// Progress notifications precede the response to their call.
			lastProgress, callResp := 0, 0
			for i, m := range s.msgs {
				sum := jsonrpc.Classify(m.Frame)
				if sum.Method == "notifications/progress" {
					lastProgress = i
					wantStream := "post-sse"
					if tt.json {
						wantStream = "get-sse"
					}
					if m.HTTP.Stream != wantStream {
						t.Errorf("progress on stream %q, want %q", m.HTTP.Stream, wantStream)
					}
				}
				if m.Dir == store.S2C && sum.Kind == jsonrpc.Response && strings.Contains(string(m.Frame), `"done 3 steps"`) {
					callResp = i
				}
			}
			if !tt.json && lastProgress > callResp {
				t.Errorf("progress (index %d) recorded after the response (index %d)", lastProgress, callResp)
			}
		})
	}
}

func flat(rs []recorded) []string {
	var out []string
	for _, r := range rs {
		out = append(out, methods(r.msgs)...)
	}
	return out
}
