package script_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// A script made from a recording declares the capabilities it serves,
// not the recorded server's: where they differ, its foot says what the
// recorded server declared, so that a user whose host adapts to them
// sees why it acts otherwise. server-everything declares prompts,
// resources, logging and completions; the recording listed only tools.
func TestFromTape_SaysRecordedCapabilities(t *testing.T) {
	tape, err := store.Load(filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := script.FromTape(tape)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `# The recorded server declared the capabilities {"tools":{"listChanged":true},"prompts":`) {
		t.Errorf("the script does not say what the recorded server declared:\n%s", tail(out))
	}

	// A server that declared what the script derives: nothing to say.
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}
	for i, frame := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"s","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`,
	} {
		m := &store.Message{Session: "s1", Seq: uint64(i + 1), Dir: []store.Dir{store.C2S, store.S2C}[i%2], Time: t0, Frame: []byte(frame)}
		s.Messages = append(s.Messages, m)
		sum := store.Summarize(m)
		store.ObserveHandshake(&s.Info, m, &sum)
	}
	out, err = script.FromTape(&store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "declared the capabilities") {
		t.Errorf("the script declares what the server did, yet says otherwise:\n%s", out)
	}
}

// tail is the end of a script, where its notes are.
func tail(out []byte) string {
	if len(out) > 1500 {
		return "…" + string(out[len(out)-1500:])
	}
	return string(out)
}
