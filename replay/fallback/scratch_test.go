package fallback_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// TestFallback_RecordsFromScratch: with nothing recorded (no SOURCE at
// all, or an empty cassette), the live go-sdk client's own handshake goes
// to the real server (server-everything over stdio, the go-sdk server over
// Streamable HTTP), so the client meets the server's real era, serverInfo
// and capabilities, not a made-up introduction naming mcpmock; the session
// recorded starts with that handshake, and a replay of it alone gives the
// client the same handshake and answers without the server.
//
// The go-sdk client opens with server/discover. server-everything refuses
// it and the go-sdk server in its default mode lists no 2026-07-28 among
// its versions, so the client goes on to initialize; a stateless go-sdk
// server speaks 2026-07-28, and the session stays in that era.
//
// While another process holds the cassette, the server's answers are not
// held up (the session used to be made, waiting for the file, on the
// server's first frame, and went unrecorded past store.LockTimeout), and
// the session is stored once the file is free.
func TestFallback_RecordsFromScratch(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.db")
	if _, err := store.Import(empty, &store.Tape{}); err != nil {
		t.Fatal(err)
	}
	everything := func(t *testing.T) fallback.Options {
		return fallback.Options{Command: peertest.ServerEverything(t, "stdio"), Stderr: io.Discard}
	}
	goSDKHTTP := func(opts *mcp.StreamableHTTPOptions) func(t *testing.T) fallback.Options {
		return func(t *testing.T) fallback.Options {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdk") }, opts)
			real := httptest.NewServer(h)
			t.Cleanup(real.Close)
			u, _ := url.Parse(real.URL)
			return fallback.Options{URL: u}
		}
	}
	none := func(*testing.T) []replay.Source { return nil }
	const (
		handshake = "server/discover server/discover initialize initialize notifications/initialized tools/call"
		stateless = "server/discover server/discover tools/call tools/call"
	)
	for _, tc := range []struct {
		name       string
		sources    func(t *testing.T) []replay.Source
		server     func(t *testing.T) fallback.Options
		serverName string
		echoArgs   map[string]any
		echoed     string
		version    string // what the live client ends up speaking
		recorded   string // the new session's first frames, by method
		answered   int    // requests the server answered
		// locked: another process holds the cassette while the client
		// talks and closes, so the session is stored only at fb.Close.
		locked bool
	}{
		{"no source, stdio", none, everything,
			"mcp-servers/everything", map[string]any{"message": "from scratch"}, "Echo: from scratch", "2025-11-25", handshake, 3, false},
		{"empty cassette, stdio", func(t *testing.T) []replay.Source { return []replay.Source{mocktest.LoadCassette(t, empty)} }, everything,
			"mcp-servers/everything", map[string]any{"message": "from scratch"}, "Echo: from scratch", "2025-11-25", handshake, 3, false},
		{"no source, HTTP", none, goSDKHTTP(nil),
			"gosdk", map[string]any{"text": "from scratch"}, "from scratch", "2025-11-25", handshake, 3, false},
		{"no source, HTTP, cassette locked", none, goSDKHTTP(nil),
			"gosdk", map[string]any{"text": "from scratch"}, "from scratch", "2025-11-25", handshake, 3, true},
		{"no source, stateless HTTP", none, goSDKHTTP(&mcp.StreamableHTTPOptions{Stateless: true}),
			"gosdk", map[string]any{"text": "from scratch"}, "from scratch", "2026-07-28", stateless, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			db := filepath.Join(t.TempDir(), "new.db")
			opts := tc.server(t)
			opts.Record = db
			if tc.locked {
				// A missing cassette is created with the first session,
				// too late to lock: an empty one is there to be locked.
				if err := store.Init(db); err != nil {
					t.Fatal(err)
				}
			}
			fb := newFallback(t, opts)
			unlock := func() {}
			if tc.locked {
				unlock = peertest.HoldLock(t, db)
			}
			srv := mocktest.New(t, append(tc.sources(t), fb))
			live := connect(ctx, t, srv.Transport())
			liveInit := live.cs.InitializeResult()
			liveEcho := live.call(ctx, t, "echo", tc.echoArgs, nil)
			live.cs.Close()
			srv.Close()
			unlock()
			if err := fb.Close(); err != nil {
				t.Fatal(err)
			}

			if liveInit.ServerInfo.Name != tc.serverName || liveInit.Capabilities.Tools == nil {
				t.Errorf("live handshake: serverInfo %+v, capabilities %+v; want %s's own", liveInit.ServerInfo, liveInit.Capabilities, tc.serverName)
			}
			if liveEcho != tc.echoed {
				t.Errorf("live echo: %q, want %q", liveEcho, tc.echoed)
			}
			if v := liveInit.ProtocolVersion; v != tc.version {
				t.Errorf("the live client speaks %s, want %s", v, tc.version)
			}
			if st := fb.Stats(); st.Answered != tc.answered || len(st.Failed) != 0 {
				t.Errorf("stats: %+v, want %d answered (the handshake's requests and tools/call)", st, tc.answered)
			}
			if r := srv.Report(); len(r.Unmatched) != 0 {
				t.Errorf("unmatched: %+v", r.Unmatched)
			}
			all := sessions(t, db)
			if len(all) != 1 {
				t.Fatalf("new cassette has %d sessions, want 1", len(all))
			}
			info := all[0].Info
			if !strings.Contains(string(info.Handshake.ClientInfo), `"host"`) || !strings.Contains(string(info.Handshake.ServerInfo), tc.serverName) {
				t.Errorf("recorded handshake: client %s, server %s; want the live client's and the server's", info.Handshake.ClientInfo, info.Handshake.ServerInfo)
			}
			if methods := recordedMethods(all[0]); !strings.HasPrefix(methods, tc.recorded) {
				t.Errorf("recorded frames: %s\nwant them to start with the client's own handshake: %s", methods, tc.recorded)
			}
			// Over HTTP the 202 that answered notifications/initialized is
			// on it, as the proxy records it.
			for _, m := range all[0].Messages {
				if m.HTTP != nil && m.Dir == store.C2S && strings.Contains(string(m.Frame), `"notifications/initialized"`) && m.HTTP.Status != http.StatusAccepted {
					t.Errorf("seq %d notifications/initialized: status %d, want 202 recorded", m.Seq, m.HTTP.Status)
				}
			}

			srv2 := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db)})
			again := connect(ctx, t, srv2.Transport())
			defer again.cs.Close()
			if got := again.cs.InitializeResult(); got.ServerInfo.Name != liveInit.ServerInfo.Name || got.ProtocolVersion != liveInit.ProtocolVersion {
				t.Errorf("replayed serverInfo %q, version %s; want %q, %s", got.ServerInfo.Name, got.ProtocolVersion, liveInit.ServerInfo.Name, liveInit.ProtocolVersion)
			}
			if got := again.call(ctx, t, "echo", tc.echoArgs, nil); got != liveEcho {
				t.Errorf("replayed echo %q, want %q", got, liveEcho)
			}
		})
	}
}

// recordedMethods lists a session's frames by method ("initialize
// initialize …"), an answer named by the request it answers. The
// server's notifications are left out: they come at the server's own
// time (server-everything's tools/list_changed right after initialized
// lands before or after the client's next request, as the race goes; CI
// once saw it before tools/call).
func recordedMethods(s store.TapeSession) string {
	asked := map[string]string{} // direction of the answer + id → method
	var out []string
	for _, m := range s.Messages {
		var f struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(m.Frame, &f)
		switch {
		case f.Method != "" && f.ID != nil:
			answerDir := store.S2C
			if m.Dir == store.S2C {
				answerDir = store.C2S
			}
			asked[answerDir.String()+string(f.ID)] = f.Method
			out = append(out, f.Method)
		case f.Method != "" && m.Dir == store.S2C:
		case f.Method != "":
			out = append(out, f.Method)
		default:
			out = append(out, asked[m.Dir.String()+string(f.ID)])
		}
	}
	return strings.Join(out, " ")
}
