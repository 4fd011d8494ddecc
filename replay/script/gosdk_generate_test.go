package script_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// TestGoSDK_FromTape: a script made from the shipped recordings of
// server-everything (TS SDK client, stdio and Streamable HTTP) answers
// go-sdk's client, in both eras, as server-everything answered: the same
// tools, and for each recorded call the recorded result.
func TestGoSDK_FromTape(t *testing.T) {
	for _, cassette := range []string{"everything-stdio.db", "everything-http.db"} {
		tape, err := store.Load(filepath.Join(peertest.ModuleRoot(), "cassettes", cassette))
		if err != nil {
			t.Fatal(err)
		}
		out, err := script.FromTape(tape)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "everything.yaml")
		if err := os.WriteFile(path, out, 0o600); err != nil {
			t.Fatal(err)
		}
		calls, tools := recordedCalls(t, tape)
		if len(calls) == 0 || len(tools) == 0 {
			t.Fatalf("%s: no tools/call or tools/list recorded", cassette)
		}
		for _, tc := range transports {
			t.Run(cassette+"/"+tc.name, func(t *testing.T) {
				cs := connect(t, tc, path, nil)
				ctx := ctxT(t)
				var listed []string
				for tl, err := range cs.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					listed = append(listed, tl.Name)
				}
				if !slices.Equal(listed, tools) {
					t.Errorf("tools %q, recorded %q", listed, tools)
				}
				for _, c := range calls {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
					if err != nil {
						t.Fatalf("%s: %v", c.name, err)
					}
					if got, want := normalResult(t, res), normalResult(t, c.result); got != want {
						t.Errorf("%s:\n got %s\nwant %s (recorded)", c.name, got, want)
					}
				}
			})
		}
	}
}

type recordedCall struct {
	name   string
	args   map[string]any
	result json.RawMessage
}

// recordedCalls returns the tools/call requests of a tape with their
// results, and the names the last tools/list gave.
func recordedCalls(t *testing.T, tape *store.Tape) (calls []recordedCall, tools []string) {
	t.Helper()
	type frame struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	for _, s := range tape.Sessions {
		asked := map[string]frame{}
		for _, m := range s.Messages {
			var f frame
			if json.Unmarshal(m.Frame, &f) != nil {
				continue
			}
			if m.Dir == store.C2S && f.Method != "" {
				asked[string(f.ID)] = f
				continue
			}
			req, ok := asked[string(f.ID)]
			if m.Dir != store.S2C || !ok || f.Method != "" || f.Result == nil {
				continue
			}
			switch req.Method {
			case "tools/call":
				calls = append(calls, recordedCall{req.Params.Name, req.Params.Arguments, f.Result})
			case "tools/list":
				var l mcp.ListToolsResult
				if err := json.Unmarshal(f.Result, &l); err != nil {
					t.Fatal(err)
				}
				tools = tools[:0]
				for _, tl := range l.Tools {
					tools = append(tools, tl.Name)
				}
			}
		}
	}
	return calls, tools
}

// normalResult is a tool result as go-sdk reads it, written back: the
// same answer gives the same text whichever era carried it.
func normalResult(t *testing.T, v any) string {
	t.Helper()
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(&res)
	if err != nil {
		t.Fatal(err)
	}
	// 2026-07-28 answers say they are complete, and carry the server's
	// identity in _meta.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "resultType")
	delete(m, "_meta")
	b, _ = json.Marshal(m)
	return string(b)
}
