package replay_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// statelessMeta is the _meta of a 2026-07-28 request.
const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// subscribedTape is a 2026-07-28 session as go-sdk's server answers it:
// resultType, ttlMs and cacheScope in its results, serverInfo in their
// _meta, the listen's subscriptionId on what its stream carried.
var subscribedTape = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + statelessMeta + `,"notifications":{"toolsListChanged":true}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{"toolsListChanged":true}}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + statelessMeta + `}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"ttlMs":0,"cacheScope":"public","tools":[{"name":"grow","inputSchema":{"type":"object"}}]}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + statelessMeta + `,"name":"grow","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"trace":"t1"},"content":[{"type":"text","text":"grew"}],"resultType":"complete"}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{` + statelessMeta + `,"name":"log","arguments":{}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"level":"info","data":"x"}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"content":[],"resultType":"complete"}}`,
}

// A 2026-07-28 recording replayed to a handshake-era client is sent as a
// server that negotiated the client's version answers: without
// resultType, ttlMs, cacheScope, the serverInfo in result _meta and the
// listen's subscriptionId (an emptied _meta or params left out), every
// other byte as recorded. To a client of the recorded era, everything
// goes as recorded, byte for byte; and so does a handshake-era recording
// to a handshake-era client, members of those names included.
func TestReplay_StatelessRecordingToHandshakeClient(t *testing.T) {
	const hello = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"live","version":"1"}}}`
	tests := []struct {
		name  string
		tape  []string
		hello bool     // initialize first: a handshake-era client
		meta  string   // what the live requests carry besides name and arguments
		sends []string // tools/call names, each answered, then what followed
		want  []string // raw lines, as sent
	}{
		{
			name:  "handshake-era client",
			tape:  subscribedTape,
			hello: true,
			sends: []string{"grow", "log"},
			want: []string{
				`{"jsonrpc":"2.0","id":2,"result":{"_meta":{"trace":"t1"},"content":[{"type":"text","text":"grew"}]}}`,
				`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
				`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
			},
		},
		{
			name:  "2026-07-28 client",
			tape:  subscribedTape,
			meta:  statelessMeta + ",",
			sends: []string{"grow", "log"},
			want: []string{
				`{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"trace":"t1"},"content":[{"type":"text","text":"grew"}],"resultType":"complete"}}`,
				`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"level":"info","data":"x"}}`,
				`{"jsonrpc":"2.0","id":3,"result":{"content":[],"resultType":"complete"}}`,
			},
		},
		{
			name: "handshake-era recording, handshake-era client",
			tape: []string{
				`> ` + hello,
				`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
				`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grow","arguments":{}}}`,
				`< {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{}},"content":[],"resultType":"x","ttlMs":5}}`,
				`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`,
			},
			hello: true,
			sends: []string{"grow"},
			want: []string{
				`{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{}},"content":[],"resultType":"x","ttlMs":5}}`,
				`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, tt.tape...)})
			c := dial(t, s)
			if tt.hello {
				if got := c.roundTrip(hello); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
					t.Fatalf("initialize: %s", got)
				}
				c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			var got []string
			for i, name := range tt.sends {
				c.send(`{"jsonrpc":"2.0","id":` + string(rune('2'+i)) + `,"method":"tools/call","params":{` + tt.meta + `"name":"` + name + `","arguments":{}}}`)
				for {
					l := c.recv()
					got = append(got, l)
					if strings.Contains(l, `"result"`) || strings.Contains(l, `"error"`) {
						break
					}
				}
			}
			// What followed the last answer.
			for len(got) < len(tt.want) {
				got = append(got, c.recv())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// discoverer answers server/discover alone, as a server of 2026-07-28
// does: layered before a handshake-era cassette, it lets go-sdk's client
// speak 2026-07-28 to it.
type discoverer struct{}

func (discoverer) Name() string               { return "discover" }
func (discoverer) Open() replay.SessionSource { return discoverer{} }
func (discoverer) Unused() []string           { return nil }
func (discoverer) Answer(_ context.Context, _ replay.Peer, req *replay.Request) (replay.Reply, bool) {
	if req.Method != "server/discover" {
		return replay.Reply{}, false
	}
	return replay.Reply{Result: json.RawMessage(`{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`)}, true
}

// taskCallTape is a 2025-11-25 host calling a tool as a task, polling it
// once and fetching its result.
var taskCallTape = []string{
	`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}}`,
	`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"research","arguments":{"topic":"tides"},"task":{"ttl":60000}}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"T1","status":"working","createdAt":"2026-11-21T10:00:00Z","lastUpdatedAt":"2026-11-21T10:00:00Z","ttl":60000}}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"T1"}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","status":"completed","createdAt":"2026-11-21T10:00:00Z","lastUpdatedAt":"2026-11-21T10:00:01Z","ttl":60000}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"T1"}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"tides are tidal"}]}}`,
}

// A 2025-11-25 tools/call made as a task (params.task, answered with a
// CreateTaskResult, then polled and fetched) is one a 2026-07-28 client
// cannot make: that version has no tasks, and its tools/call no task
// member. Replayed to go-sdk's client speaking 2026-07-28, the report
// leaves it out of unused, saying why, with the tasks/get and
// tasks/result about its task.
func TestReport_TaskCallLeftOutFor2026Client(t *testing.T) {
	tape := cassetteOf(t, taskCallTape...)
	s := mocktest.New(t, []replay.Source{discoverer{}, tape})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "new", Version: "1"}, nil).Connect(ctx, s.Transport(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "" && v != "2026-07-28" {
		t.Fatalf("go-sdk's client speaks %s; want 2026-07-28", v)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	r := s.Report()
	why := func(what string) string {
		return "a 2026-07-28 client does not send " + what + ", and every live session spoke 2026-07-28"
	}
	want := []replay.LeftOut{
		{Request: "test.db s1#1 initialize", Why: why("initialize")},
		{Request: `test.db s1#6 tools/call {"arguments":{"topic":"tides"},"name":"research","task":{}}`, Why: why("tools/call as a task (params.task)")},
		{Request: `test.db s1#8 tasks/get {"taskId":"T1"}`, Why: why("tasks/get")},
		{Request: `test.db s1#10 tasks/result {"taskId":"T1"}`, Why: why("tasks/result")},
	}
	if d := cmp.Diff(want, r.LeftOut); d != "" || len(r.Unused) > 0 || len(r.Unmatched) > 0 {
		t.Errorf("report: unused %q, unmatched %+v; left_out (-want +got):\n%s", r.Unused, r.Unmatched, d)
	}
}

// A 2026-07-28 server's extensions (capabilities.extensions, which only
// the 2026-07-28 schema's ServerCapabilities has) reach go-sdk's client
// speaking 2026-07-28, from the recorded server/discover, and not the
// same client pinned to 2025-11-25, whose initialize mcpmock answers
// from the session info.
func TestReplay_ExtensionsOnlyTo2026Clients(t *testing.T) {
	caps := `{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	tape := tapeOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+statelessMeta+`}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":`+caps+`,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+statelessMeta+`}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"grow","inputSchema":{"type":"object"}}]}}`,
	)
	tape.Sessions[0].Info.Handshake = store.Handshake{Method: "server/discover", ProtocolVersion: "2026-07-28",
		ServerInfo: json.RawMessage(`{"name":"s","version":"1"}`), Capabilities: json.RawMessage(caps)}
	c, err := replay.NewCassette("test.db", tape)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, version, want string // want: the version spoken
		wantExtensions      bool
	}{{"latest", "", "2026-07-28", true}, {"2025-11-25", "2025-11-25", "2025-11-25", false}} {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{c})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "live", Version: "1"}, nil).Connect(ctx, s.Transport(), &mcp.ClientSessionOptions{ProtocolVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			got := cs.InitializeResult().Capabilities
			if v := cs.InitializeResult().ProtocolVersion; v != tt.want {
				t.Fatalf("go-sdk's client speaks %s; want %s", v, tt.want)
			}
			if got.Tools == nil || (got.Extensions != nil) != tt.wantExtensions {
				t.Errorf("capabilities %+v; want tools, and extensions: %v", got, tt.wantExtensions)
			}
		})
	}
}

// go-sdk's client speaking 2026-07-28 calls plainly a tool the recording
// called only as a task (taskCallTape): it gets the task's recorded
// result, the call counts as matched, and the task call, its poll and
// its fetch as used. When the task failed and the recording never
// fetched its result (tasks/get said failed, with a statusMessage), the
// call gets what mcpspy export --script answers it: an isError result
// whose text is the statusMessage.
func TestReplay_PlainCallOf2026GoSDK(t *testing.T) {
	failed := append(slices.Clone(taskCallTape[:8]),
		`< {"jsonrpc":"2.0","id":3,"result":{"taskId":"T1","status":"failed","statusMessage":"the tide tables are gone","createdAt":"2026-11-21T10:00:00Z","lastUpdatedAt":"2026-11-21T10:00:01Z","ttl":60000}}`)
	for _, tt := range []struct {
		name string
		tape []string
		want string
	}{
		{"fetched", taskCallTape, "tides are tidal"},
		{"failed, never fetched", failed, "the tide tables are gone | isError"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{discoverer{}, cassetteOf(t, tt.tape...)})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "new", Version: "1"}, nil).Connect(ctx, s.Transport(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("go-sdk's client speaks %s; want 2026-07-28", v)
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"topic": "tides"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(res); got != tt.want {
				t.Errorf("call research: %q; want %q", got, tt.want)
			}
			cs.Close()
			r := s.Report()
			if len(r.Unmatched) > 0 || len(r.Unused) > 0 || len(r.LeftOut) != 1 || r.Matched != 3 {
				t.Errorf("report: matched %d, unmatched %+v, unused %q, left out %+v; want discover, tools/list and the call matched, only initialize left out",
					r.Matched, r.Unmatched, r.Unused, r.LeftOut)
			}
		})
	}
}
