package script

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/replay"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// traffic is fixed client traffic per example script: method and params.
var traffic = map[string][][2]string{
	"script-basic.yaml": {
		{"initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"g","version":"1"}}`},
		{"tools/list", `{}`},
		{"tools/list", `{"cursor":"bWNwbW9jazp0b29sczoxOndlYXRoZXI"}`},
		{"tools/list", `{"cursor":"bWNwbW9jazp0b29sczozOmFkZA"}`},
		{"tools/list", `{"cursor":"garbage"}`},
		{"tools/call", `{"name":"greet","arguments":{"name":"Ada"}}`},
		{"tools/call", `{"name":"greet","arguments":{"name":"Bo"}}`},
		{"tools/call", `{"name":"greet","arguments":{}}`},
		{"tools/call", `{"name":"weather","arguments":{"city":"Paris"}}`},
		{"tools/call", `{"name":"picture","arguments":{"z":1,"a":[1,2]}}`},
		{"tools/call", `{"name":"add","arguments":{"a":1,"b":2.25}}`},
		{"server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`},
		{"tools/call", `{"name":"shout","arguments":{"text":"quiet"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`},
	},
	"script-match.yaml": {
		{"tools/call", `{"name":"lookup","arguments":{"id":1}}`},
		{"tools/call", `{"name":"lookup","arguments":{"id":2,"options":{"verbose":true}}}`},
		{"tools/call", `{"name":"lookup","arguments":{"name":"admin"}}`},
		{"tools/call", `{"name":"lookup","arguments":{"name":"eve"}}`},
		{"tools/call", `{"name":"flaky"}`},
		{"tools/call", `{"name":"flaky"}`},
		{"tools/call", `{"name":"flaky"}`},
		{"tools/call", `{"name":"flaky"}`},
	},
	"script-errors.yaml": {
		{"tools/call", `{"name":"divide","arguments":{"a":1,"b":0}}`},
		{"tools/call", `{"name":"divide","arguments":{"a":"1","b":0}}`},
		{"tools/call", `{"name":"strict","arguments":{}}`},
		{"tools/call", `{"name":"broken","arguments":{"b":2,"a":1}}`},
		{"tools/call", `{"name":"missing"}`},
	},
	"script-progress.yaml": {
		{"tools/call", `{"name":"build","arguments":{"target":"x"},"_meta":{"progressToken":7}}`},
		{"logging/setLevel", `{"level":"info"}`},
		{"tools/call", `{"name":"build","arguments":{"target":"y"},"_meta":{"progressToken":"t"}}`},
		{"tools/call", `{"name":"build","arguments":{"target":"no token"}}`},
		{"tools/call", `{"name":"build","arguments":{"target":"z"},"_meta":{"progressToken":8,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`},
		{"tools/call", `{"name":"build","arguments":{"target":"z2"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug"}}`},
	},
	"script-faults.yaml": {
		{"tools/call", `{"name":"hang"}`},
		{"tools/call", `{"name":"close"}`},
		{"tools/call", `{"name":"malformed"}`},
		{"tools/call", `{"name":"duplicate"}`},
		{"tools/call", `{"name":"wrong-id"}`},
		{"tools/call", `{"name":"unavailable"}`},
		{"tools/call", `{"name":"expire"}`},
	},
	"script-events.yaml": {
		{"tools/call", `{"name":"unlock"}`},
		{"tools/list", `{}`},
		{"tools/call", `{"name":"unlock"}`},
		{"tools/list", `{}`},
		{"tools/call", `{"name":"old"}`},
		{"tools/call", `{"name":"secret"}`},
		{"resources/list", `{}`},
		{"resources/read", `{"uri":"file:///readme.txt"}`},
		{"prompts/get", `{"name":"summarize","arguments":{"text":"long story"}}`},
		{"prompts/get", `{"name":"summarize"}`},
		{"resources/list", `{}`},
		{"prompts/list", `{}`},
	},
	"script-override.yaml": {
		{"initialize", `{"protocolVersion":"2025-11-25"}`},
		{"tools/list", `{}`},
		{"tools/call", `{"name":"echo","arguments":{"message":"failing"}}`},
		{"tools/call", `{"name":"echo","arguments":{"message":"hello"}}`},
	},
	"script-complete.yaml": {
		{"initialize", `{"protocolVersion":"2025-11-25"}`},
		{"resources/templates/list", `{}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"language","value":"Gr"}}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"dialect","value":"B"},"context":{"arguments":{"language":"English"}}}`},
		{"completion/complete", `{"ref":{"type":"ref/resource","uri":"file:///logs/{service}/{date}.log"},"argument":{"name":"date","value":"2026-11-2"}}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"text","value":""}}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"language","value":"F"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`},
	},
	"script-json.json": {
		{"initialize", `{"protocolVersion":"2025-03-26"}`},
		{"server/discover", `{}`},
		{"tools/call", `{"name":"ping-tool"}`},
	},
}

// transcript runs the traffic through one session and writes every byte
// the script produced: results, errors, raw frames, notifications.
func transcript(t *testing.T, s *Script, steps [][2]string) string {
	t.Helper()
	var b strings.Builder
	ss := s.Open()
	peer := &fakePeer{}
	for i, st := range steps {
		id := json.RawMessage(fmt.Sprint(i + 1))
		req := &replay.Request{ID: id, Method: st[0], Params: json.RawMessage(st[1])}
		ctx, cancel := context.WithCancel(context.Background())
		r, ok := ss.Answer(ctx, peer, req)
		cancel()
		fmt.Fprintf(&b, "→ %s %s %s\n", id, st[0], st[1])
		for _, n := range peer.take() {
			fmt.Fprintf(&b, "  notify %s\n", strings.TrimRight(n, " "))
		}
		switch {
		case !ok:
			b.WriteString("  (falls through)\n")
		case len(r.Raw) > 0:
			for _, f := range r.Raw {
				fmt.Fprintf(&b, "← raw %s\n", f)
			}
		case r.HTTPStatus != 0:
			fmt.Fprintf(&b, "← HTTP status %d\n", r.HTTPStatus)
		case r.ExpireSession:
			b.WriteString("← session expired\n")
		case r.NoReply:
			fmt.Fprintf(&b, "← no reply (close after: %v)\n", r.CloseAfter)
		case r.Error != nil:
			e, _ := json.Marshal(r.Error)
			fmt.Fprintf(&b, "← error %s\n", e)
		default:
			fmt.Fprintf(&b, "← result %s\n", r.Result)
		}
		for _, a := range r.After {
			fmt.Fprintf(&b, "  after %s %s\n", a.Method, a.Params)
		}
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for name, steps := range traffic {
		t.Run(name, func(t *testing.T) {
			s := mustLoad(t, name)
			got := transcript(t, s, steps)
			if again := transcript(t, mustLoad(t, name), steps); again != got {
				t.Fatalf("the same traffic gave different bytes:\n%s", cmp.Diff(got, again))
			}
			path := filepath.Join("testdata", strings.TrimSuffix(name, filepath.Ext(name))+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("transcript differs from %s (-want +got):\n%s", path, d)
			}
		})
	}
}
