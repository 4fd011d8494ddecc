package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// show --resend prints, for each client request and notification the
// filter lets through, a comment naming it and the command that sends it
// again: on the stdio cassette the handshake piped into the recorded
// server command, on the HTTP one a curl with the recorded headers.
func TestMcpspy_ShowResend(t *testing.T) {
	stdio := readTape(t, shippedCassette(t, "everything-stdio.db")).Sessions[0]
	frame := func(seq int) string { return "'" + string(stdio.Messages[seq-1].Frame) + "'" }
	server := " | node testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio\n"
	web := readTape(t, shippedCassette(t, "everything-http.db")).Sessions[0].Info // its port and session id change when it is recorded again
	curl := `curl -sS -N -X POST '` + web.Upstream + `' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' ` +
		`-H 'Mcp-Protocol-Version: 2025-11-25' -H 'Mcp-Session-Id: ` + web.HTTPSessionID + `' `
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"stdio", []string{"--filter", "tool:echo|get-sum", shippedCassette(t, "everything-stdio.db")},
			"# s1:7 tools/call echo\nprintf '%s\\n' " + frame(1) + " " + frame(3) + " " + frame(7) + server +
				"\n# s1:9 tools/call get-sum\nprintf '%s\\n' " + frame(1) + " " + frame(3) + " " + frame(9) + server},
		{"stdio from the JSONL twin", []string{"--filter", "tool:echo", shippedCassette(t, "everything-stdio.jsonl")},
			"# s1:7 tools/call echo\nprintf '%s\\n' " + frame(1) + " " + frame(3) + " " + frame(7) + server},
		{"streamable HTTP", []string{"--filter", "method:notifications/initialized|tools/list", shippedCassette(t, "everything-http.db")},
			"# s1:3 notifications/initialized\n" + curl + `--data-raw '{"method":"notifications/initialized","jsonrpc":"2.0"}'` + "\n\n" +
				"# s1:4 tools/list\n" + curl + `--data-raw '{"method":"tools/list","jsonrpc":"2.0","id":1}'` + "\n"},
		{"responses and server messages are left out", []string{"--filter", "id:1", shippedCassette(t, "everything-http.db")},
			"# s1:4 tools/list\n" + curl + `--data-raw '{"method":"tools/list","jsonrpc":"2.0","id":1}'` + "\n"},
		{"--session picks one of two", []string{"--session", "s2", "--filter", "tool:echo", twoSessionCassette(t)},
			"# s2:6 tools/call echo\n" + curl + `--data-raw '{"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello from mcptape"}},"jsonrpc":"2.0","id":2}'` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := showOutput(t, append([]string{"--resend"}, tt.args...)...); got != tt.want {
				t.Errorf("show --resend %v:\n%s\nwant:\n%s", tt.args, got, tt.want)
			}
		})
	}
}

// The printed commands work against the real reference server: the
// stdio one as recorded (its command line names the server in
// testdata/npm, from the module root), and the HTTP initialize against a
// live server-everything put where the recorded upstream was.
func TestMcpspy_ShowResendRealServer(t *testing.T) {
	t.Parallel()
	t.Run("stdio", func(t *testing.T) {
		peertest.NPMDir(t)
		peertest.Node(t)
		cmd := showOutput(t, "--resend", "--filter", "tool:echo", shippedCassette(t, "everything-stdio.db"))
		sh := exec.Command("sh", "-c", cmd)
		sh.Dir = peertest.ModuleRoot()
		out, err := sh.Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", cmd, err)
		}
		if want := `{"result":{"content":[{"type":"text","text":"Echo: hello from mcptape"}]},"jsonrpc":"2.0","id":2}` + "\n"; !strings.HasSuffix(string(out), want) {
			t.Errorf("the server answered:\n%s\nwant it to end with %s", out, want)
		}
	})
	t.Run("streamable HTTP", func(t *testing.T) {
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("curl is not installed, and the command under test is a curl command")
		}
		live := peertest.EverythingHTTP(t, "streamableHttp")
		recorded, err := os.ReadFile(shippedCassette(t, "everything-http.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		moved := filepath.Join(t.TempDir(), "moved.jsonl")
		upstream := strings.TrimSuffix(readTape(t, shippedCassette(t, "everything-http.db")).Sessions[0].Info.Upstream, "/mcp")
		if err := os.WriteFile(moved, bytes.ReplaceAll(recorded, []byte(upstream), []byte(live)), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := showOutput(t, "--resend", "--filter", "method:initialize", moved)
		out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("sh -c %q: %v\n%s", cmd, err, out)
		}
		for _, want := range []string{`"protocolVersion":"2025-11-25"`, `"serverInfo":{"name":"mcp-servers/everything"`, `"id":0`} {
			if !strings.Contains(string(out), want) {
				t.Errorf("the server answered:\n%s\nwant %s in it", out, want)
			}
		}
	})
}

// show --resend --follow prints the commands for what a recorder adds,
// a blank line between them as between the first ones.
func TestMcpspy_ShowResendFollow(t *testing.T) {
	db, w, s := liveSession(t)
	const list, call = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"late"}}`
	s.Append(store.C2S, time.Now(), []byte(list), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	show := startShow(t, "--resend", "--follow", db)
	show.wait(t, "# s1:1 tools/list", 1)
	s.Append(store.S2C, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`), nil)
	s.Append(store.C2S, time.Now(), []byte(call), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	show.wait(t, "# s1:3 tools/call late", 1)
	want := "# s1:1 tools/list\nprintf '%s\\n' '" + list + "' | live\n\n# s1:3 tools/call late\nprintf '%s\\n' '" + call + "' | live\n"
	if got := show.stop(t); got != want {
		t.Errorf("show --resend --follow:\n%s\nwant:\n%s", got, want)
	}
}
