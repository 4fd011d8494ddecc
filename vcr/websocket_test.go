package vcr_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/vcr"
)

// WebSocketURL serves a host that speaks MCP over WebSocket (here the
// TypeScript SDK client) in both modes: while a stdio server is recorded,
// mcpmock in front of a run of it, as URL serves one over HTTP; then the
// replay, which answers as the server did, the server never started.
func TestServer_WebSocketURL(t *testing.T) {
	goServer := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "ws.db")
	want := []string{"server gosdkserver 1.0.0", "counter: 1", "counter: 2"}
	callOver := func(t *testing.T, srv *vcr.Server) []string {
		t.Helper()
		url := srv.WebSocketURL()
		if !strings.HasPrefix(url, "ws://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") || srv.WebSocketURL() != url {
			t.Errorf("WebSocketURL %s, then %s: want one ws://127.0.0.1:PORT/mcp", url, srv.WebSocketURL())
		}
		return peertest.NodeTranscript(t, 60*time.Second, nil, "ws-call-client.mjs", url, "counter", "counter")
	}
	for _, mode := range []vcr.Mode{vcr.RecordOnce, vcr.ReplayOnly} {
		t.Run(mode.String(), func(t *testing.T) {
			srv := vcr.New(t, path, []string{goServer}, vcr.WithMode(mode))
			if srv.Recording() != (mode == vcr.RecordOnce) {
				t.Fatalf("recording %v in mode %s", srv.Recording(), mode)
			}
			if diff := cmp.Diff(want, callOver(t, srv)); diff != "" {
				t.Errorf("the client saw (-want +got):\n%s", diff)
			}
			if calls := srv.ToolCalls("counter"); len(calls) != 2 {
				t.Errorf("counter called %d times, want 2", len(calls))
			}
			srv.AssertAllUsed()
		})
	}
}

// A server recorded over HTTP has no WebSocket endpoint while recording:
// the recording proxy speaks HTTP alone. The test is told so, not handed
// a URL nothing answers.
func TestServer_WebSocketURLRecordingOverHTTP(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	upstream := httptest.NewServer(http.NotFoundHandler())
	defer upstream.Close()
	path := filepath.Join(t.TempDir(), "http.db")
	tb := runFake(t, func(tb *fakeTB) {
		srv := vcr.NewHTTP(tb, path, upstream.URL+"/mcp")
		srv.WebSocketURL()
		tb.Errorf("WebSocketURL returned")
	})
	want := "vcr: " + upstream.URL + "/mcp is being recorded over HTTP; connect to URL(), not WebSocketURL()"
	if !strings.Contains(tb.log(), want) {
		t.Errorf("log:\n%s\nwant %q", tb.log(), want)
	}
}
