package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// show --lint agrees with the inspector's pairing: ids compare by value,
// so an answer of id "1" answers the client's "\u0031", and a cancel
// naming 3e0 names request 3. A finding still shows the id as written.
func TestMcpspy_ShowLintComparesIDValues(t *testing.T) {
	lines := []string{
		`{"session":"s1","info":{"transport":"stdio","upstream":"escaping-client","start":"2026-11-22T10:00:00Z","end":{"time":"2026-11-22T10:00:01Z","reason":"eof"}}}`,
		`{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-22T10:00:00.1Z","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}`,
		`{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-22T10:00:00.2Z","message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}`,
		`{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-22T10:00:00.3Z","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}`,
		`{"session":"s1","seq":4,"dir":"c2s","time":"2026-11-22T10:00:00.4Z","message":{"jsonrpc":"2.0","id":"\u0031","method":"tools/list"}}`,
		`{"session":"s1","seq":5,"dir":"s2c","time":"2026-11-22T10:00:00.5Z","message":{"jsonrpc":"2.0","id":"1","result":{"tools":[{"name":"slow","inputSchema":{"type":"object"}}]}}}`,
		`{"session":"s1","seq":6,"dir":"c2s","time":"2026-11-22T10:00:00.6Z","message":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}}`,
		`{"session":"s1","seq":7,"dir":"c2s","time":"2026-11-22T10:00:00.7Z","message":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3e0}}}`,
		`{"session":"s1","seq":8,"dir":"s2c","time":"2026-11-22T10:00:00.8Z","message":{"jsonrpc":"2.0","id":"\u0039","result":{}}}`,
	}
	path := filepath.Join(t.TempDir(), "ids.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{"#1", "#2", "#3", "#4", "#5", "#6", "#7", "#8",
		`    lint: error: answers id "\u0039", which the client never sent [response-unknown-id]`,
	}
	if diff := cmp.Diff(want, layout(showOutput(t, "--lint", path))); diff != "" {
		t.Errorf("show --lint (-want +got):\n%s", diff)
	}
}
