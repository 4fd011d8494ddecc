package replay_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// A server→client request the recording holds goes to a live client only
// if the client declared the capability it needs, by the names of the
// 2025-11-25 schema's ClientCapabilities: the recorded client may have
// declared more than the live one. One not sent is counted as skipped,
// and the call it came with gets its recorded answer at once; a client
// that declared nothing at all (no capabilities in its initialize) is
// asked as before.
func TestServer_ServerRequestsNeedDeclaredCapabilities(t *testing.T) {
	const (
		roots     = `"method":"roots/list"`
		sampling  = `"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}`
		samplingT = `"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
		form      = `"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}`
		url       = `"method":"elicitation/create","params":{"mode":"url","message":"sign in","url":"https://example.com/x","elicitationId":"e1"}`
		taskList  = `"method":"tasks/list"`
	)
	tests := []struct {
		name    string
		request string // the server's request during tools/call, after its id
		caps    string // the live client's capabilities member, "" for none
		need    string // the capability it lacks; "" when it is sent
	}{
		{"roots to a client without roots", roots, `"capabilities":{}`, "roots"},
		{"roots to a client with roots", roots, `"capabilities":{"roots":{}}`, ""},
		{"sampling to a client with roots only", sampling, `"capabilities":{"roots":{"listChanged":true}}`, "sampling"},
		{"sampling to a client with sampling", sampling, `"capabilities":{"sampling":{}}`, ""},
		{"sampling with tools to a client without sampling.tools", samplingT, `"capabilities":{"sampling":{}}`, "sampling.tools"},
		{"sampling with tools to a client with sampling.tools", samplingT, `"capabilities":{"sampling":{"tools":{}}}`, ""},
		{"elicitation to a client without it", form, `"capabilities":{"sampling":{}}`, "elicitation"},
		{"form elicitation to an empty elicitation capability", form, `"capabilities":{"elicitation":{}}`, ""},
		{"form elicitation to a client of url mode only", form, `"capabilities":{"elicitation":{"url":{}}}`, "elicitation.form"},
		{"url elicitation to an empty elicitation capability", url, `"capabilities":{"elicitation":{}}`, "elicitation.url"},
		{"url elicitation to a client of url mode", url, `"capabilities":{"elicitation":{"url":{}}}`, ""},
		{"tasks/list to a client without tasks.list", taskList, `"capabilities":{"tasks":{"cancel":{}}}`, "tasks.list"},
		{"roots to a client that said nothing of its capabilities", roots, "", ""},
		{"roots to a client whose capabilities are null", roots, `"capabilities":null`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cassetteOf(t,
				`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}},"tasks":{"list":{},"cancel":{}}},"clientInfo":{"name":"rec","version":"1"}}}`,
				`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"1"}}}`,
				`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`,
				`< {"jsonrpc":"2.0","id":0,`+tt.request+`}`,
				`> {"jsonrpc":"2.0","id":0,"result":{}}`,
				`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"asked"}]}}`,
			)
			s := mocktest.New(t, []replay.Source{c})
			cl := dial(t, s)
			caps := ""
			if tt.caps != "" {
				caps = "," + tt.caps
			}
			cl.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"` + caps + `,"clientInfo":{"name":"live","version":"1"}}}`)
			cl.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			cl.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}`)
			got := norm(t, cl.recv())
			method, _, _ := strings.Cut(tt.request, ",")
			if tt.need == "" {
				if !strings.Contains(got, method) {
					t.Fatalf("the client was not asked %s; got %s", method, got)
				}
				id := strings.TrimSuffix(strings.SplitN(got, `"id":`, 2)[1], "}")
				id, _, _ = strings.Cut(id, ",")
				cl.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)
				got = norm(t, cl.recv())
			}
			if want := `{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"asked","type":"text"}]}}`; got != want {
				t.Fatalf("the call got %s, want its recorded answer %s", got, want)
			}
			var want []replay.Skipped
			if tt.need != "" {
				m := strings.Trim(strings.TrimPrefix(method, `"method":`), `"`)
				want = []replay.Skipped{{Method: m, When: "during tools/call", Why: "the client did not declare the " + tt.need + " capability", Count: 1}}
			}
			r := s.Report()
			for i := range r.Skipped {
				r.Skipped[i].Params = "" // the request's, as any skipped one's
			}
			if diff := cmp.Diff(want, r.Skipped); diff != "" {
				t.Errorf("report's skipped requests (-want +got):\n%s", diff)
			}
			if len(r.Unmatched) != 0 || len(r.Unused) != 0 {
				t.Errorf("report: unmatched %+v, unused %v", r.Unmatched, r.Unused)
			}
		})
	}
}

// Outside any request, too: server-everything asks a client that declared
// roots for them right after notifications/initialized, and a replay to
// one that declared none sends nothing then, and says so once on stderr.
func TestServer_SessionRequestNeedsDeclaredCapability(t *testing.T) {
	c := cassetteOf(t,
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"rec","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
	)
	s := mocktest.New(t, []replay.Source{c})
	cl := dial(t, s)
	cl.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"live","version":"1"}}}`)
	cl.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// No roots/list in between (one sent would most likely come first;
	// the report below says for sure).
	if got, want := cl.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), `{"id":2,"jsonrpc":"2.0","result":{"tools":[]}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	want := []replay.Skipped{{Method: "roots/list", When: "after notifications/initialized", Why: "the client did not declare the roots capability", Count: 1}}
	if diff := cmp.Diff(want, s.Report().Skipped); diff != "" {
		t.Errorf("report's skipped requests (-want +got):\n%s", diff)
	}
	const warning = "mcpmock: roots/list not sent to the client after notifications/initialized: the client did not declare the roots capability"
	if !strings.Contains(s.Warnings(), warning) {
		t.Errorf("stderr lacks %q:\n%s", warning, s.Warnings())
	}
}

// TestReplay_RootsNotSentToClientWithoutRoots is the case that showed it:
// server-everything recorded with the TypeScript SDK client, which
// declares roots and so is asked for them after initialized, replayed by
// mcpmock to go-sdk's client declaring no capabilities. It is not asked
// (go-sdk's client would answer anyway; mcp-go's would not, and the call
// in flight waited --call-timeout), and the report says what was left
// out.
func TestReplay_RootsNotSentToClientWithoutRoots(t *testing.T) {
	db, live := recordEverything(t, "stdio")
	if !slices.ContainsFunc(live, func(l string) bool { return strings.HasPrefix(l, "roots: ") }) {
		t.Fatalf("live transcript has no roots: %q", live)
	}
	mock := peertest.Binary(t, "mcpmock")
	t.Cleanup(func() { logCassette(t, peertest.Binary(t, "mcpspy"), db) })
	report := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "no-roots", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			mu.Lock()
			asked = append(asked, method)
			mu.Unlock()
			return next(ctx, method, req)
		}
	})
	cmd := exec.Command(mock, "serve", "--report", report, db)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The recorded client's scenario: server-everything asks for roots
	// a while after initialized, during whichever call is in flight then.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"message": "hi"}, "Echo: hi"},
		{"get-sum", map[string]any{"a": 2, "b": 3}, "The sum of 2 and 3 is 5."},
		{"trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3}, "Long running operation completed."},
		{"get-roots-list", map[string]any{}, "Current MCP Roots (1 total)"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil || !strings.HasPrefix(resultText(res), call.want) {
			t.Fatalf("%s: %v %+v", call.name, err, res)
		}
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	r := pollReport(t, report)
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(asked, "roots/list") {
		t.Errorf("a client without roots was asked roots/list; it got %q\nmcpmock's stderr:\n%s", asked, stderr.String())
	}
	// How often, and during which call, depends on the live run:
	// get-roots-list may ask again.
	if len(r.Skipped) == 0 {
		t.Errorf("report's skipped requests: none; want the recorded roots/list")
	}
	for _, got := range r.Skipped {
		where := strings.HasPrefix(got.When, "during ") || strings.HasPrefix(got.When, "after ")
		if got.Method != "roots/list" || !where || got.Why != "the client did not declare the roots capability" || got.Count < 1 {
			t.Errorf("report's skipped request: %+v; want roots/list, not declared", got)
		}
	}
	if len(r.Unmatched) != 0 || len(r.Unused) != 0 {
		t.Errorf("report: unmatched %+v, unused %q", r.Unmatched, r.Unused)
	}
}

// pollReport waits for mcpmock's --report (written at exit) and reads it.
func pollReport(t *testing.T, path string) replay.Report {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return readReport(t, path)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report at %s", path)
		}
		time.Sleep(10 * time.Millisecond) // polling for a file, with a deadline
	}
}
