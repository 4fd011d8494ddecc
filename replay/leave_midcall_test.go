package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/script"
)

// Why a call is given up when its WebSocket or SSE client leaves, or
// mcpmock stops, mid-delay.
const (
	wsGone  = "the client closed the WebSocket while it waited"
	sseGone = "the client closed its SSE stream while it waited"
	ended   = "the session ended while it waited"
)

// TestConnClientGoneMidCall: over WebSocket and legacy HTTP+SSE the
// connection is the session, so a client that closes it while a call
// waits on a delay has ended its session, as closing stdin does over
// stdio: the call is reported interrupted, not matched, and says the
// client left. mcpmock's own stop (Close) mid-delay returns without
// waiting out the delay and reports the call interrupted by the
// session's end. Real clients: the TypeScript SDK's WebSocket and SSE
// transports, go-sdk's SSE transport.
func TestConnClientGoneMidCall(t *testing.T) {
	tests := []struct {
		name   string
		client string // "ts-ws", "ts-sse", "go-sse"
		stop   bool   // mcpmock stops; else the client leaves
		want   string
	}{
		{"TS WebSocket client leaves", "ts-ws", false, wsGone},
		{"TS SSE client leaves", "ts-sse", false, sseGone},
		{"go-sdk SSE client leaves", "go-sse", false, sseGone},
		{"mcpmock stops, TS WebSocket client", "ts-ws", true, ended},
		{"mcpmock stops, TS SSE client", "ts-sse", true, ended},
		{"mcpmock stops, go-sdk SSE client", "go-sse", true, ended},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := script.Parse("s.yaml", []byte(giveUpScript))
			if err != nil {
				t.Fatal(err)
			}
			playing := make(chan struct{}, 1)
			srv, err := replay.NewServer([]replay.Source{playSignal{src, playing}}, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// connEnded closes when the handler serving the session's
			// connection (the WebSocket, the SSE stream) has returned.
			connEnded := make(chan struct{})
			h, ws := srv.Handler(), srv.WebSocketHandler()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Upgrade") != "" {
					ws.ServeHTTP(w, r)
					close(connEnded)
					return
				}
				h.ServeHTTP(w, r)
				if r.URL.Path == "/sse" {
					close(connEnded)
				}
			}))
			defer hs.Close()
			defer srv.Close()

			leave, ended := startLeavingClient(t, tt.client, hs.URL)
			waitFor(t, playing, "the call's answer to begin")
			if tt.stop {
				closed := make(chan struct{})
				go func() { srv.Close(); close(closed) }()
				waitFor(t, closed, "Close to return while a call waits on a delay")
			}
			leave()
			waitFor(t, connEnded, "the connection's handler to return")
			seen := ended()
			if len(seen) != 2 || !strings.HasPrefix(seen[1], "slow: no answer") {
				t.Errorf("client saw %q, want the call unanswered", seen)
			}
			srv.Close()
			r := srv.Report()
			want := []replay.Interrupted{{Method: "tools/call", Params: `{"name":"slow"}`, Why: tt.want}}
			if r.Matched != 1 || !slices.Equal(r.Interrupted, want) {
				t.Errorf("report %+v, want 1 matched (initialize) and interrupted %+v", r, want)
			}
		})
	}
}

// startLeavingClient connects client to the server at base, calls the
// tool slow without waiting for its answer, and returns leave, which
// closes the client, and ended, which returns what the client saw once
// it has: "server NAME VERSION" and how the call ended.
func startLeavingClient(t *testing.T, client, base string) (leave func(), ended func() []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if client == "go-sse" {
		// go-sdk's ClientSession.Close waits for the calls in flight, so
		// this client leaves as a host that dies does: its connections
		// close under it.
		var mu sync.Mutex
		var conns []net.Conn
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
			return c, err
		}
		hc := &http.Client{Transport: &http.Transport{DialContext: dial}}
		c := mcp.NewClient(&mcp.Implementation{Name: "leaving", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: base + "/sse", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		seen := []string{"server " + cs.InitializeResult().ServerInfo.Name + " " + cs.InitializeResult().ServerInfo.Version}
		called := make(chan string, 1)
		go func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
			if err != nil {
				called <- "slow: no answer (" + err.Error() + ")"
				return
			}
			called <- "slow: answered " + resultText(res)
		}()
		leave = func() {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range conns {
				c.Close()
			}
		}
		return leave, func() []string { return append(seen, waitFor(t, called, "the call to end")) }
	}
	kind, url := "ws", strings.Replace(base, "http://", "ws://", 1)
	if client == "ts-sse" {
		kind, url = "sse", base+"/sse"
	}
	argv := peertest.NodeScript(t, "leave-mid-call-client.mjs", kind, url, "slow")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cancel(); <-done })
	leave = func() {
		if _, err := stdin.Write([]byte("leave\n")); err != nil {
			t.Fatalf("telling the client to leave: %v; stderr:\n%s", err, stderr.String())
		}
	}
	ended = func() []string {
		if err := waitFor(t, done, "the client to exit"); err != nil {
			t.Fatalf("%s: %v\nstdout %s\nstderr:\n%s", client, err, stdout.String(), stderr.String())
		}
		done <- nil // for the cleanup
		var seen []string
		if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &seen); err != nil {
			t.Fatalf("%s: no transcript (%v); stdout %q; stderr:\n%s", client, err, stdout.String(), stderr.String())
		}
		return seen
	}
	return leave, ended
}
