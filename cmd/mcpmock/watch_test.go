package main

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// mcpmock serve --http --watch, with go-sdk's client in both eras: an
// edited script reaches the sessions that start after it; a handshake-era
// session already open keeps its version, while a 2026-07-28 client, which
// has no session to end, gets the new one at its next request. A broken
// edit is reported with file:line while the last good version serves on.
func TestServe_Watch(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	for _, era := range []struct{ version, keptAnswer string }{{"2025-11-25", "first"}, {"", "second"}} {
		t.Run("protocol "+cmp.Or(era.version, "2026-07-28"), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "fake.yaml")
			write := func(text string) {
				t.Helper()
				if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("server: {name: fake, version: '1'}\ntools: [{name: one, answers: [{text: first}]}]\n")
			p := peertest.Start(t, dir, nil, nil, nil, mock, "serve", "--http", "127.0.0.1:0", "--watch", path)
			url := strings.TrimSpace(p.WaitLine(t, "mcpmock: listening on ", 30*time.Second))

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			connect := func() *mcp.ClientSession {
				t.Helper()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: era.version})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			tools := func(cs *mcp.ClientSession) []string {
				t.Helper()
				var names []string
				for tl, err := range cs.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					names = append(names, tl.Name)
				}
				return names
			}
			answer := func(cs *mcp.ClientSession, tool string) string {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				return res.Content[0].(*mcp.TextContent).Text
			}

			before := connect()
			if got := tools(before); !slices.Equal(got, []string{"one"}) {
				t.Fatalf("tools before the edit: %q", got)
			}
			write("server: {name: fake, version: '2'}\ntools: [{name: one, answers: [{text: second}]}, {name: two, answers: [{text: new}]}]\n")
			p.WaitLine(t, "mcpmock: reloaded fake.yaml", 30*time.Second)
			after := connect()
			if got := tools(after); !slices.Equal(got, []string{"one", "two"}) {
				t.Errorf("tools after the edit: %q", got)
			}
			if got := answer(after, "one"); got != "second" {
				t.Errorf("a new session's call: %q", got)
			}
			if got := answer(before, "one"); got != era.keptAnswer {
				t.Errorf("the client connected before the edit: %q, want %q", got, era.keptAnswer)
			}

			write("server: {name: fake, version: '3'}\ntools: [{name: one}]\n")
			line := p.WaitLine(t, "mcpmock: ", 30*time.Second)
			if !strings.Contains(line, "fake.yaml:2:") || !strings.Contains(line, "the last version that loaded goes on serving") {
				t.Errorf("a broken edit said %q", line)
			}
			if got := answer(connect(), "two"); got != "new" {
				t.Errorf("after a broken edit a new session got %q, want the last good version", got)
			}
		})
	}
}

// --watch needs a network transport and a script to watch.
func TestServe_WatchBadInput(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--watch", script}, "--watch is for --http or --ws"},
		{[]string{"serve", "--http", ":0", "--watch", "c.db"}, "no SOURCE is a script"},
	} {
		_, err := parseServe(tc.args[1:], streams{In: strings.NewReader(""), Out: os.Stdout, Err: os.Stderr})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
