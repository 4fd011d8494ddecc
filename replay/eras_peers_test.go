package replay_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestReplay_StatelessRecordingAcrossEras records go-sdk's client and
// server speaking 2026-07-28 and replays the cassette, through mcpspy
// (which keeps what mcpmock sends byte for byte), to clients of the
// handshake era: the TypeScript SDK's, and go-sdk's pinned to
// 2025-11-25. Each answer and notification they get is the recorded one
// without what only 2026-07-28 has (resultType, ttlMs, cacheScope, the
// serverInfo in result _meta, the listen's subscriptionId), as a server
// that negotiated their version answers; nothing else differs. The
// report leaves the recorded server/discover and subscriptions/listen,
// which such a client never sends, out of unused, saying why.
func TestReplay_StatelessRecordingAcrossEras(t *testing.T) {
	t.Parallel()
	db, live := recordGo(t, "stdio", "")
	spy, mock := peertest.Binary(t, "mcpspy"), peertest.Binary(t, "mcpmock")
	tests := []struct {
		name string
		run  func(t *testing.T, argv []string)
	}{
		{"TypeScript SDK client", func(t *testing.T, argv []string) {
			seen := peertest.NodeTranscript(t, 90*time.Second, []string{"TOKEN=tok-replay"}, "gosdk-client.mjs", argv...)
			want := []string{
				"server gosdkserver 1.0.0", "tools add,confirm,counter,echo,grow,progress,slow,sum",
				"call echo: hello", `call sum: {"sum":42}`, "call counter: 1", "call counter: 2", "call slow: done",
				"progress 1/3 step 1, 2/3 step 2, 3/3 step 3", "call confirm: hello Ada", "call grow: grew", "list_changed", "tools add,confirm,counter,echo,grow,grown,progress,slow,sum",
			}
			if d := cmp.Diff(want, seen); d != "" {
				t.Errorf("the TypeScript client saw (-want +got):\n%s", d)
			}
		}},
		{"go-sdk client, 2025-11-25", func(t *testing.T, argv []string) {
			replayed := goScenario(t, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, "2025-11-25", "tok-replay")
			want := slices.Clone(live)
			want[0] = strings.Replace(want[0], "protocol 2026-07-28", "protocol 2025-11-25", 1)
			if d := cmp.Diff(want, replayed); d != "" {
				t.Errorf("replay differs from live (-live +replay):\n%s", d)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			wire, report := filepath.Join(dir, "wire.db"), filepath.Join(dir, "report.json")
			tt.run(t, []string{spy, "record", "-o", wire, "--", mock, "serve", "--report", report, db})
			compareAcrossEras(t, exportFrames(t, spy, db), exportFrames(t, spy, wire))
			r := pollReport(t, report)
			var left []string
			for _, l := range r.LeftOut {
				left = append(left, l.Request[strings.Index(l.Request, "#"):]+": "+l.Why)
			}
			want := []string{
				"#1 server/discover: only a 2026-07-28 client sends server/discover, and every live session spoke the handshake era",
				`#3 subscriptions/listen {"notifications":{"toolsListChanged":true}}: only a 2026-07-28 client sends subscriptions/listen, and every live session spoke the handshake era`,
			}
			if d := cmp.Diff(want, left); d != "" || len(r.Unused) > 0 || len(r.Unmatched) > 0 {
				t.Errorf("report: unused %q, unmatched %+v; left_out (-want +got):\n%s", r.Unused, r.Unmatched, d)
			}
		})
	}
}

// exportFrames is every message of a cassette, as mcpspy export has them.
func exportFrames(t *testing.T, spy, db string) []exportedFrame {
	t.Helper()
	out, err := exec.Command(spy, "export", db).Output()
	if err != nil {
		t.Fatalf("mcpspy export %s: %v", db, err)
	}
	var frames []exportedFrame
	for l := range bytes.Lines(out) {
		var f exportedFrame
		if err := json.Unmarshal(l, &f); err != nil {
			t.Fatalf("export of %s: %v: %s", db, err, l)
		}
		if f.Dir != "" {
			frames = append(frames, f)
		}
	}
	return frames
}

type exportedFrame struct {
	Dir     string          `json:"dir"`
	Message json.RawMessage `json:"message"`
}

// compareAcrossEras checks what a handshake-era client was sent (replayed)
// against a 2026-07-28 recording: each answer to a request (keyed by
// method and tool name, in order) and each notification is the recorded
// one without 2026-07-28's members. A recorded input_required answer is
// left out: the replay asks such a client for the input instead, and
// answers with the recorded retry's answer.
func compareAcrossEras(t *testing.T, recorded, replayed []exportedFrame) {
	t.Helper()
	for _, f := range replayed {
		for _, only := range []string{`"resultType"`, `"ttlMs"`, `"cacheScope"`, `io.modelcontextprotocol/serverInfo`, `io.modelcontextprotocol/subscriptionId`} {
			if f.Dir == "s2c" && bytes.Contains(f.Message, []byte(only)) {
				t.Errorf("the handshake-era client was sent %s: %s", only, f.Message)
			}
		}
	}
	recAnswers, recNotes := answersAndNotes(t, recorded)
	gotAnswers, gotNotes := answersAndNotes(t, replayed)
	delete(gotAnswers, "initialize") // mcpmock's, from the session info
	for key, got := range gotAnswers {
		want := recAnswers[key]
		if len(want) < len(got) {
			t.Errorf("%s: answered %d times, recorded %d", key, len(got), len(want))
			continue
		}
		for i := range got {
			if d := cmp.Diff(handshakeEraOf(want[i]), got[i]); d != "" {
				t.Errorf("%s #%d: (-recorded without 2026-07-28's members +replayed):\n%s", key, i+1, d)
			}
		}
	}
	var want []map[string]any
	for _, n := range recNotes {
		if n["method"] != "notifications/subscriptions/acknowledged" {
			want = append(want, handshakeEraOf(n))
		}
	}
	if d := cmp.Diff(want, gotNotes); d != "" {
		t.Errorf("notifications (-recorded without 2026-07-28's members +replayed):\n%s", d)
	}
}

// answersAndNotes takes a session apart: the results of client requests,
// by method and tool name, in order (input_required ones left out), and
// the server's notifications, their progress tokens left out.
func answersAndNotes(t *testing.T, frames []exportedFrame) (answers map[string][]map[string]any, notes []map[string]any) {
	t.Helper()
	answers = map[string][]map[string]any{}
	asked := map[string]string{}
	for _, f := range frames {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(f.Message, &m); err != nil {
			t.Fatalf("%v: %s", err, f.Message)
		}
		switch {
		case f.Dir == "c2s" && m.Method != "" && m.ID != nil:
			asked[string(m.ID)] = strings.TrimSpace(m.Method + " " + m.Params.Name)
		case f.Dir == "s2c" && m.Method == "" && m.Result != nil && m.Result["resultType"] != "input_required":
			key := asked[string(m.ID)]
			answers[key] = append(answers[key], m.Result)
		case f.Dir == "s2c" && m.Method != "" && m.ID == nil:
			var n map[string]any
			_ = json.Unmarshal(f.Message, &n)
			if p, ok := n["params"].(map[string]any); ok {
				delete(p, "progressToken")
			}
			notes = append(notes, n)
		}
	}
	return answers, notes
}

// handshakeEraOf is a 2026-07-28 result or notification without what only
// that version has: the spec's Result and CacheableResult members, the
// reserved _meta keys, and a _meta or params that held nothing else.
func handshakeEraOf(v map[string]any) map[string]any {
	strip := func(m map[string]any) {
		delete(m, "resultType")
		delete(m, "ttlMs")
		delete(m, "cacheScope")
		if meta, ok := m["_meta"].(map[string]any); ok {
			delete(meta, "io.modelcontextprotocol/serverInfo")
			delete(meta, "io.modelcontextprotocol/subscriptionId")
			if len(meta) == 0 {
				delete(m, "_meta")
			}
		}
	}
	strip(v)
	if p, ok := v["params"].(map[string]any); ok {
		strip(p)
		if len(p) == 0 {
			delete(v, "params")
		}
	}
	return v
}
