package lint

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// session builds an ended stdio session from lines "> frame" (client to
// server) and "< frame" (server to client), numbered from 1.
func session(lines ...string) *store.TapeSession {
	s := &store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio, End: &store.EndInfo{Reason: store.EndEOF}}}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, l := range lines {
		dir := store.C2S
		if strings.HasPrefix(l, "<") {
			dir = store.S2C
		}
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(i + 1), Dir: dir, Time: t0.Add(time.Duration(i) * time.Millisecond), Frame: []byte(strings.TrimSpace(l[1:]))})
	}
	return s
}

// found lists findings as "rule@seq", in order.
func found(fs []Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s@%d", f.Rule, f.Seq))
	}
	return out
}

// A handshake-era opening both sides declare everything in, so that the
// cases below only show what they are about.
const (
	initReq     = `> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`
	initResp    = `< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"logging":{},"completions":{}},"serverInfo":{"name":"s","version":"1"}}}`
	initialized = `> {"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func opened(lines ...string) []string {
	return append([]string{initReq, initResp, initialized}, lines...)
}

// tasked opens a session with a server that takes tasks for tools/call
// and lists three tools: slow (taskSupport required), either (optional)
// and quick (none).
func tasked(lines ...string) []string {
	return append([]string{
		initReq,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}}`,
		initialized,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"either","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},{"name":"quick","inputSchema":{"type":"object"}}]}}`,
	}, lines...)
}

// clientTasked opens a session with a client that takes tasks for the
// server's sampling and elicitation requests.
func clientTasked(lines ...string) []string {
	return append([]string{
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{},"tasks":{"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}},"clientInfo":{"name":"c","version":"1"}}}`,
		initResp,
		initialized,
	}, lines...)
}

// task is a Task object's JSON with every required member.
func task(id, status string) string {
	return `{"taskId":"` + id + `","status":"` + status + `","createdAt":"2026-11-27T08:00:00Z","lastUpdatedAt":"2026-11-27T08:00:00Z","ttl":null,"pollInterval":100}`
}

// stateless is a 2026-07-28 request's _meta, declaring the client
// capabilities caps (JSON members).
func stateless(caps string) string {
	return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{` + caps + `}}`
}

// mrtr opens a 2026-07-28 session: server/discover, answered with tools
// and prompts.
func mrtr(lines ...string) []string {
	return append([]string{
		`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":` + stateless(``) + `}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"prompts":{}}}}`,
	}, lines...)
}

func TestSession_Rules(t *testing.T) {
	bareServer := strings.Replace(initResp, `"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"logging":{},"completions":{}`, `"tools":{}`, 1)
	bareClient := strings.Replace(initReq, `"roots":{"listChanged":true},"sampling":{},"elicitation":{}`, ``, 1)
	tools := `< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"weather","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"temp":{"type":"number"},"city":{"type":"string"}},"required":["temp"]}}]}}`
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"a clean session", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, tools,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"weather","arguments":{},"_meta":{"progressToken":"p"}}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2.5}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"temp":21,"city":"Oslo"}}}`,
			`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`, `> {"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`,
			`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		), nil},
		{"a malformed frame", opened(`< not json`), []string{"malformed@4"}},
		{"a fractional id", opened(`> {"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1.5,"result":{}}`), []string{"id-not-integer@4", "id-not-integer@5"}},
		{"an id used twice", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`,
		), []string{"id-reused@6"}},
		{"1 and \"1\" are different ids", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`> {"jsonrpc":"2.0","id":"1","method":"ping"}`, `< {"jsonrpc":"2.0","id":"1","result":{}}`,
		), nil},
		{"stateless requests may share an id: there is no session", []string{
			`> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
			`> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		}, nil},
		{"an answer to nothing", opened(`< {"jsonrpc":"2.0","id":7,"result":{}}`), []string{"response-unknown-id@4"}},
		{"an answer in the wrong direction", opened(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `> {"jsonrpc":"2.0","id":1,"result":{}}`), []string{"unanswered@4", "response-unknown-id@5"}},
		{"two answers", opened(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`), []string{"response-duplicate@6"}},
		{"a parse error without id pairs with nothing", opened(`> {oops`, `< {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`), []string{"malformed@4"}},
		{"unanswered, and cancelled", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"y"}}`,
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		), []string{"unanswered@4"}},
		{"answered after cancel", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`,
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		), []string{"answered-after-cancel@6"}},
		{"cancelling what was never sent, and initialize", []string{initReq,
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`, initResp, initialized,
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		}, []string{"cancel-initialize@2", "cancel-unknown@5"}},
		{"a batch in 2025-11-25", opened(`> [{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `< [{"jsonrpc":"2.0","id":1,"result":{}}]`), []string{"batch@4", "batch@5"}},
		{"a batch in 2025-03-26", []string{
			strings.Replace(initReq, "2025-11-25", "2025-03-26", 1), strings.Replace(initResp, "2025-11-25", "2025-03-26", 1), initialized,
			`> [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
			`< [{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}}]`,
		}, nil},
		{"no handshake", []string{`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`}, []string{"no-handshake@0"}},
		{"requests before initialize was answered", []string{`> {"jsonrpc":"2.0","id":9,"method":"tools/list"}`, initReq, `> {"jsonrpc":"2.0","id":1,"method":"ping"}`, initResp, initialized,
			`< {"jsonrpc":"2.0","id":9,"result":{"tools":[]}}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`}, []string{"request-before-initialize@1"}},
		{"initialized before initialize was answered", []string{initReq, initialized, initResp,
			`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`}, []string{"initialized-early@2"}},
		{"server asks before initialized", []string{initReq, initResp, `< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`, `> {"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`, initialized},
			[]string{"server-request-before-initialized@3"}},
		{"initialized never sent", []string{initReq, initResp, `> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`}, []string{"initialized-missing@4"}},
		{"handshake members missing", []string{`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
			`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`, initialized}, []string{"handshake-fields@1", "handshake-fields@2"}},
		{"an unknown version", []string{initReq, strings.Replace(initResp, "2025-11-25", "2099-01-01", 1), initialized}, []string{"version-unknown@2"}},
		{"undeclared capabilities", []string{bareClient, bareServer, initialized,
			`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
			`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
			`< {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}`,
			`> {"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"no"}}`,
			`> {"jsonrpc":"2.0","id":1,"method":"prompts/list"}`,
			`< {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		}, []string{"undeclared-capability@4", "undeclared-capability@5", "undeclared-capability@6", "undeclared-capability@8"}},
		{"progress gone wrong", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":7}}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":5}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":5}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"7","progress":6}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":9}}`,
		), []string{"progress-not-increasing@6", "progress-unknown-token@7", "progress-after-response@9"}},
		{"progress after cancel, and after the answer that crossed it", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":7}}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`,
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":3}}`,
		), []string{"progress-after-cancel@7", "answered-after-cancel@8", "progress-after-response@9"}},
		{"string tokens match however escaped", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"a"}}}`,
			`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"\u0061","progress":1}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		), nil},
		{"tool listings", opened(`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a b","inputSchema":{"type":"object"}},{"name":"x"},{"name":"y","inputSchema":{"type":"string"}},{"name":"x","inputSchema":{"type":"object"}},{"inputSchema":{}}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`,
			`< {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"unknown tool"}}`,
		), []string{"tool-name@5", "tool-input-schema@5", "tool-input-schema@5", "tool-duplicate@5", "tools-list@5", "tool-unknown@6"}},
		{"tool results", opened(`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, tools,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text"},{"type":"image","data":"AA=="},{"type":"video"},{"text":"x"}]}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"structuredContent":{}}}`,
		), []string{"tool-result@7", "tool-result@7", "tool-result@7", "tool-result@7", "tool-result@9"}},
		{"structured content against the output schema", opened(`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, tools,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"weather"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"weather"}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{"city":"Oslo"}}}`,
			`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"weather"}}`,
			`< {"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"temp":"hot"}}}`,
			`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"weather"}}`,
			`< {"jsonrpc":"2.0","id":5,"result":{"content":[],"structuredContent":[1]}}`,
			`> {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"weather"}}`,
			`< {"jsonrpc":"2.0","id":6,"result":{"content":[],"isError":true}}`,
			`> {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"weather"}}`,
			`< {"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"temp":20.0}}}`,
		), []string{"structured-content@7", "structured-content@9", "structured-content@11", "structured-content@13"}},
		// A task, not content, so no tool-result; but this server declared
		// no tasks, and the task lacks most of its members.
		{"a task-augmented call returns a task, not content", opened(`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{}}}`, `< {"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t"}}}`), []string{"task-support@4", "task-fields@5"}},
		{"tasks methods to a server without tasks", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tasks/list"}`,
			`< {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t"}}`,
			`< {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`,
		), []string{"undeclared-capability@4", "undeclared-capability@6"}},
		{"tasks as the spec has them", tasked(
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"task":{"ttl":1000}}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"task":`+task("t1", "working")+`}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t1"}}`,
			`< {"jsonrpc":"2.0","id":3,"result":`+task("t1", "working")+`}`,
			`< {"jsonrpc":"2.0","method":"notifications/tasks/status","params":`+task("t1", "completed")+`}`,
			`> {"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"t1"}}`,
			`< {"jsonrpc":"2.0","id":4,"result":{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}}`,
			`> {"jsonrpc":"2.0","id":5,"method":"tasks/list"}`,
			`< {"jsonrpc":"2.0","id":5,"result":{"tasks":[`+task("t1", "completed")+`]}}`,
			`> {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"either","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":6,"result":{"content":[]}}`,
		), nil},
		{"tasks against the spec", tasked(
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"quick","arguments":{},"task":{}}}`, // forbidden
			`< {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no tasks"}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, // required
			`< {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"a task, please"}}`,
			`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"either","arguments":{},"task":{}}}`,
			`< {"jsonrpc":"2.0","id":4,"result":{"task":`+task("t2", "completed")+`}}`, // begins completed
			`> {"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"t2"}}`,
			`< {"jsonrpc":"2.0","id":5,"result":{"taskId":"t2","status":"working","createdAt":"2026-11-27T08:00:00Z","lastUpdatedAt":"2026-11-27T08:00:00Z"}}`, // leaves completed, no ttl
			`> {"jsonrpc":"2.0","id":6,"method":"tasks/result","params":{"taskId":"t2"}}`,
			`< {"jsonrpc":"2.0","id":6,"result":{"content":[]}}`, // no related-task
			`> {"jsonrpc":"2.0","id":7,"method":"tasks/cancel","params":{"taskId":"t2"}}`,
			`< {"jsonrpc":"2.0","id":7,"result":`+task("t2", "paused")+`}`,
		), []string{"task-support@6", "task-support@8", "task-status@11", "task-fields@13", "task-status@13", "task-result-meta@15", "task-status@17"}},
		{"a client runs the server's sampling as its task", clientTasked(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"task":{"ttl":1000},"messages":[],"maxTokens":5}}`,
			`> {"jsonrpc":"2.0","id":0,"result":{"task":`+task("c1", "working")+`}}`, // no role, content, model: a CreateTaskResult
			`> {"jsonrpc":"2.0","method":"notifications/tasks/status","params":`+task("c1", "completed")+`}`,
			`< {"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"c1"}}`,
			`> {"jsonrpc":"2.0","id":1,"result":`+task("c1", "completed")+`}`,
			`< {"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"c1"}}`,
			`> {"jsonrpc":"2.0","id":2,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"c1"}}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		), nil},
		{"an elicitation run as the client's task gives content that breaks its form", append(clientTasked(),
			`< {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"task":{},"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`,
			`> {"jsonrpc":"2.0","id":0,"result":{"task":`+task("c3", "working")+`}}`,
			`< {"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"taskId":"c3"}}`,
			`> {"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"age":3},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"c3"}}}}`,
		), []string{"elicitation-content@7"}},
		// Over HTTP the client's status notification and its answer are
		// POSTs of their own: the recorder may read the notification
		// first (the TypeScript SDK client, recorded by mcpspy).
		{"a task's status heard before the answer that created it", clientTasked(
			`< {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"task":{},"messages":[],"maxTokens":5}}`,
			`> {"jsonrpc":"2.0","method":"notifications/tasks/status","params":`+task("c4", "completed")+`}`,
			`> {"jsonrpc":"2.0","id":0,"result":{"task":`+task("c4", "working")+`}}`,
			`< {"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"c4"}}`,
			`> {"jsonrpc":"2.0","id":1,"result":`+task("c4", "working")+`}`, // this one does go back
		), []string{"task-status@8"}},
		{"a client that takes sampling tasks answers one as usual", clientTasked(
			`< {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"task":{},"messages":[],"maxTokens":5}}`,
			`> {"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`,
		), []string{"task-fields@5"}},
		{"a tools/call asks a server that takes no tasks for one, and is answered as usual", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`, // no content: checked as a CallToolResult
		), []string{"task-support@4", "tool-result@5"}},
		{"a server asks for tasks the client does not take", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"task":{},"messages":[],"maxTokens":5}}`,
			`> {"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"hi"}}}`, // answered as usual, as it must: no task; but no model
			`< {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"task":{},"message":"ok?","requestedSchema":{"type":"object","properties":{}}}}`,
			`> {"jsonrpc":"2.0","id":1,"result":{"task":`+task("c2", "working")+`}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		), []string{"task-ask-support@5", "result-shape@6", "task-ask-support@7"}},
		{"a cursor loop", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"a"}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"a"}}`, `< {"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":"b"}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"b"}}`, `< {"jsonrpc":"2.0","id":3,"result":{"tools":[],"nextCursor":"a"}}`,
			// Listing again from the start is no loop.
			`> {"jsonrpc":"2.0","id":4,"method":"tools/list"}`, `< {"jsonrpc":"2.0","id":4,"result":{"tools":[],"nextCursor":"a"}}`,
		), []string{"cursor-loop@9"}},
		{"shapes of other methods", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","text":"x"},{"uri":"file:///b"}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"resources/list"}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"resources":{}}}`,
			`> {"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}`,
			`< {"jsonrpc":"2.0","id":4,"result":{"completion":{"values":[`+strings.Repeat(`"v",`, 100)+`"v"]}}}`,
			`> {"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}`,
			`< {"jsonrpc":"2.0","id":5,"result":{"completion":{}}}`,
			`< {"jsonrpc":"2.0","id":1,"method":"ping"}`, `> {"jsonrpc":"2.0","id":1,"result":{"pong":true}}`,
		), []string{"result-shape@5", "params-shape@6", "result-shape@9", "result-shape@11", "result-shape@13", "ping-result@15"}},
		{"log levels, subscriptions and elicitation forms", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"verbose"}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","data":"ok"}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///a"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{}}`,
			`< {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}`,
			`< {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///b"}}`,
			`< {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string","enum":["a"]}},"address":{"type":"object"}}}}}`,
			`> {"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"x"}}}`,
			`< {"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}`,
			`> {"jsonrpc":"2.0","id":2,"result":{"action":"maybe"}}`,
		), []string{"log-level@4", "resource-not-subscribed@10", "elicitation-schema@11", "result-shape@14"}},
		{"elicitation content against its form", opened(append(formReplies(
			`{"name":"Ada","age":36,"color":"red","hero":"hero-1","fish":["fish-1"],"agree":true}`,
			`{"age":36}`,
			`{"name":"Ada","age":"36"}`,
			`{"name":"Ada","color":"blue"}`,
			`{"name":"Ada","fish":["fish-1","fish-9"]}`,
			`{"name":"Ada","fish":["fish-1","fish-2","fish-3"]}`,
			`{"name":"Ada","age":200}`,
			`{"name":"A"}`,
			`{"name":"Ada","hero":"hero-7"}`,
		),
			`< {"jsonrpc":"2.0","id":99,"method":"elicitation/create","params":{"message":"m","requestedSchema":`+form+`}}`,
			`> {"jsonrpc":"2.0","id":99,"result":{"action":"decline"}}`,
		)...), []string{"elicitation-content@7", "elicitation-content@9", "elicitation-content@11", "elicitation-content@13", "elicitation-content@15", "elicitation-content@17", "elicitation-content@19", "elicitation-content@21"}},
		{"elicitation content in a retry", mrtr(
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{},"_meta":`+stateless(`"elicitation":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"s1","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Who?","requestedSchema":`+form+`}}}}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","arguments":{},"requestState":"s1","inputResponses":{"who":{"action":"accept","content":{"age":1}}},"_meta":`+stateless(`"elicitation":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}],"resultType":"complete"}}`,
		), []string{"elicitation-content@5"}},
		{"a multi round-trip tools/call, asked and answered", mrtr(
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{},"_meta":`+stateless(`"elicitation":{},"sampling":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"content":null,"resultType":"input_required","requestState":"s1","inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"Sure?","requestedSchema":{"type":"object","properties":{"yes":{"type":"boolean"}}}}},"llm":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":9}}}}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","arguments":{},"requestState":"s1","inputResponses":{"ok":{"action":"accept","content":{"yes":true}},"llm":{"role":"assistant","content":{"type":"text","text":"go"},"model":"m"}},"_meta":`+stateless(`"elicitation":{},"sampling":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}],"resultType":"complete"}}`,
		), []string{"deprecated@4"}}, // sampling, asked by input request
		{"input_required in the handshake era", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}`,
		), []string{"input-required@5"}},
		{"input_required where it cannot be", mrtr(
			`> {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":`+stateless(``)+`}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{}}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"deploy","_meta":`+stateless(``)+`}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required"}}`,
			`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"deploy","_meta":`+stateless(``)+`}}`,
			`< {"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{"x":{"method":"tools/list"},"ok":{"method":"elicitation/create","params":{"message":"Sure?"}}}}}`,
		), []string{"input-required@4", "input-required@6", "undeclared-capability@8", "input-required@8"}},
		{"retries that answer wrong", mrtr(
			`> {"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p","requestState":"never","inputResponses":{},"_meta":`+stateless(`"elicitation":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"messages":[]}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p","_meta":`+stateless(`"elicitation":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"A?"}},"b":{"method":"roots/list"}}}}`,
			`> {"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"other","inputResponses":{"a":{"action":"accept"}},"_meta":`+stateless(`"elicitation":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":4,"result":{"messages":[]}}`,
			`> {"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"p","inputResponses":{"a":{"action":"maybe?","content":{}},"c":{}},"_meta":`+stateless(`"elicitation":{}`)+`}}`,
			`< {"jsonrpc":"2.0","id":5,"result":{"messages":[]}}`,
		), []string{"input-responses@3", "undeclared-capability@6", "deprecated@6", "input-responses@7", "input-responses@9", "input-responses@9", "input-responses@9"}},
		{"an update after unsubscribing", opened(
			`> {"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///a"}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"resources/unsubscribe","params":{"uri":"file:///a"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{}}`,
			`< {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}`,
		), []string{"resource-not-subscribed@8"}},
		{"notifications without what they need: params-shape, not a bad level", opened(
			`< {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}`,
			`< {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{}}`,
			`< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":null}}`,
		), []string{"params-shape@4", "params-shape@5"}},
		{"tool names of 128 characters pass, of 129 do not", opened(`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"`+strings.Repeat("a", 128)+`","inputSchema":{"type":"object"}}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"`+strings.Repeat("a", 129)+`","inputSchema":{"type":"object"}}]}}`,
		), []string{"tool-name@7"}},
		{"stateless requests without their version", []string{
			`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"prompts":[]}}`,
			`> {"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"info","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			`< {"jsonrpc":"2.0","id":4,"result":{}}`,
		}, []string{"meta-version-missing@3", "undeclared-capability@5", "undeclared-capability@7", "deprecated@7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := found(Session(session(tt.lines...), Options{}))
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
				for _, f := range Session(session(tt.lines...), Options{}) {
					t.Log(f)
				}
			}
		})
	}
}

// Over Streamable HTTP, 2026-07-28 traffic is recorded one session per
// connection, and go-sdk's client may retry on another connection than
// the call: a retry whose ask is in another session is not judged by
// Session alone (a real-peer recording caught this; Tape judges it, see
// TestTape_RetryOnAnotherConnection). Over stdio, the same retry is.
func TestSession_RetryOnAnotherConnection(t *testing.T) {
	retry := []string{
		`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"confirm","requestState":"step=1","inputResponses":{"who":{"action":"accept","content":{"name":"Ada"}}},"_meta":` + stateless(`"elicitation":{}`) + `}}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hello Ada"}],"resultType":"complete"}}`,
	}
	if got := found(Session(session(retry...), Options{})); !slices.Equal(got, []string{"input-responses@1"}) {
		t.Errorf("over stdio: findings %q, want the retry of nothing", got)
	}
	h := withHTTP(session(retry...), func(*store.Message) http.Header {
		return http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"confirm"}, "Mcp-Protocol-Version": {"2026-07-28"}}
	}, func(*store.Message) (string, http.Header) {
		return "post-sse", http.Header{"Content-Type": {"text/event-stream"}}
	})
	if got := Session(h, Options{}); len(got) != 0 {
		t.Errorf("over HTTP: findings %v, want none", got)
	}
}

// A client of a server without sessions may put its initialize, its
// initialized and its requests each on a connection of its own, each
// recorded as a session: one that begins with a request whose
// MCP-Protocol-Version says the client negotiated is judged as begun
// elsewhere, by that version; one that begins without it still has no
// handshake, and one with a session id is judged whole.
func TestSession_ConnectionShareOfSessionlessClient(t *testing.T) {
	call := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	}
	json := func(*store.Message) (string, http.Header) {
		return "json", http.Header{"Content-Type": {"application/json"}}
	}
	negotiated := func(*store.Message) http.Header { return http.Header{"Mcp-Protocol-Version": {"2025-11-25"}} }
	firstBare := func(m *store.Message) http.Header {
		if m.Seq == 1 {
			return http.Header{}
		}
		return negotiated(m)
	}
	withSID := withHTTP(session(call...), negotiated, json)
	withSID.Info.HTTPSessionID = "abc"
	tests := []struct {
		name string
		s    *store.TapeSession
		want []string
	}{
		{"negotiated elsewhere", withHTTP(session(call...), negotiated, json), []string{}},
		{"its first request says nothing", withHTTP(session(call...), firstBare, json), []string{"no-handshake@0"}},
		{"a session with its own id", withSID, []string{"no-handshake@0"}},
		{"initialize here, initialized elsewhere", withHTTP(session(append([]string{initReq, initResp}, call...)...), firstBare, json), []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := found(Session(tt.s, Options{})); !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
}

// Checked with its cassette (Tape), a retry recorded in another session
// than its call is judged against the call's input_required result: well
// answered, it passes; answering what was not asked, or nothing asked
// before it in any session, it is reported, in its own session.
func TestTape_RetryOnAnotherConnection(t *testing.T) {
	overHTTP := func(id string, t0 time.Time, lines ...string) store.TapeSession {
		s := withHTTP(session(lines...), func(*store.Message) http.Header {
			return http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"confirm"}, "Mcp-Protocol-Version": {"2026-07-28"}}
		}, func(*store.Message) (string, http.Header) {
			return "post-sse", http.Header{"Content-Type": {"text/event-stream"}}
		})
		s.Info.ID = id
		for i, m := range s.Messages {
			m.Session, m.Time = id, t0.Add(time.Duration(i)*time.Millisecond)
		}
		return *s
	}
	call := `> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"confirm","_meta":` + stateless(`"elicitation":{}`) + `}}`
	ask := `< {"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","requestState":"step=1","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}}}`
	retry := func(responses string) []string {
		return []string{
			`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"confirm","requestState":"step=1","inputResponses":` + responses + `,"_meta":` + stateless(`"elicitation":{}`) + `}}`,
			`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hello Ada"}],"resultType":"complete"}}`,
		}
	}
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	later := t0.Add(time.Second)
	tests := []struct {
		name      string
		askAt     time.Time
		responses string
		want      []string
	}{
		{"answered as asked", t0, `{"who":{"action":"accept","content":{"name":"Ada"}}}`, nil},
		{"answers what was not asked", t0, `{"who":{"action":"accept"},"other":{"action":"accept"}}`, []string{`s2:1: error: answers input request "other", which the server did not ask (asked in s1:2) [input-responses]`}},
		{"retried before any ask", later, `{"who":{"action":"accept"}}`, []string{"s2:1: error: tools/call carries requestState \"step=1\", but the server answered no earlier tools/call with input_required that it could retry [input-responses]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tape := &store.Tape{Sessions: []store.TapeSession{
				overHTTP("s1", tt.askAt, call, ask),
				overHTTP("s2", t0.Add(500*time.Millisecond), retry(tt.responses)...),
			}}
			var got []string
			for _, f := range Tape(tape, Options{}) {
				got = append(got, f.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// A session with no end is not blamed for its unanswered requests while
// the process recording it runs; once none does (it was killed, or the
// session was imported without an end), they are reported, saying that
// the recording broke off. They were never reported.
func TestSession_StillRecordingIsNotUnanswered(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	s := session(opened(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`)...)
	s.Info.End = nil
	s.Info.RecorderProcess = &store.RecorderProcess{PID: os.Getpid(), Host: host}
	if got := Session(s, Options{}); len(got) != 0 {
		t.Errorf("findings %v in a session still recording", got)
	}
	s.Info.RecorderProcess = nil
	got := Session(s, Options{})
	if len(got) != 1 || got[0].String() != "s1:4: warning: ping 1 (client) has no answer before the recording broke off (no end recorded) [unanswered]" {
		t.Errorf("findings %q in a session whose recorder is gone, want the ping unanswered", got)
	}
	s.Info.End = &store.EndInfo{Reason: store.EndEOF}
	if got := found(Session(s, Options{})); !slices.Equal(got, []string{"unanswered@4"}) {
		t.Errorf("findings %q once ended", got)
	}
}

func TestSession_Skip(t *testing.T) {
	s := session(opened(`< not json`, `> {"jsonrpc":"2.0","id":1,"method":"ping"}`)...)
	if got := found(Session(s, Options{Skip: []string{"malformed"}})); !slices.Equal(got, []string{"unanswered@5"}) {
		t.Errorf("findings %q with malformed skipped", got)
	}
}

func TestFinding_String(t *testing.T) {
	f := Finding{Session: "s2", Seq: 7, Rule: "unanswered", Severity: Warning, Message: "ping 1 (client) was never answered"}
	if got, want := f.String(), "s2:7: warning: ping 1 (client) was never answered [unanswered]"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	f.Seq = 0
	if got, want := f.String(), "s2: warning: ping 1 (client) was never answered [unanswered]"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestRules_NamesAndSeverities(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.Name] || r.Summary == "" || !KnownRule(r.Name) {
			t.Errorf("rule %q: repeated, unnamed or without summary", r.Name)
		}
		seen[r.Name] = true
		if s, ok := ParseSeverity(r.Severity.String()); !ok || s != r.Severity {
			t.Errorf("rule %q: severity %v does not round-trip", r.Name, r.Severity)
		}
	}
}

// withHTTP gives every message of s Streamable HTTP metadata: client
// messages are POST bodies with the headers hdr returns for them, server
// messages come on the streams stream returns.
func withHTTP(s *store.TapeSession, hdr func(m *store.Message) http.Header, stream func(m *store.Message) (string, http.Header)) *store.TapeSession {
	s.Info.Transport = store.TransportHTTP
	for _, m := range s.Messages {
		if m.Dir == store.C2S {
			h := hdr(m)
			if _, set := h["Accept"]; !set { // as every real client sends it, unless the case says
				h.Set("Accept", "application/json, text/event-stream")
			}
			m.HTTP = &store.HTTPMeta{Method: "POST", Path: "/mcp", Stream: "post-body", RequestHeader: h}
			continue
		}
		st, resp := stream(m)
		m.HTTP = &store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200, Stream: st, ResponseHeader: resp, RequestHeader: http.Header{}}
		if st == "get-sse" {
			m.HTTP.Method = "GET"
		}
	}
	return s
}

func TestSession_HTTPRules(t *testing.T) {
	versioned := func(m *store.Message) http.Header {
		if m.Seq == 1 {
			return http.Header{}
		}
		return http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	}
	sse := func(*store.Message) (string, http.Header) {
		return "post-sse", http.Header{"Content-Type": {"text/event-stream"}}
	}
	lines := opened(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`)
	if got := Session(withHTTP(session(lines...), versioned, sse), Options{}); len(got) != 0 {
		t.Errorf("clean HTTP session: %v", got)
	}

	unversioned := func(m *store.Message) http.Header {
		if m.Seq == 4 {
			return http.Header{}
		}
		return versioned(m)
	}
	plain := func(m *store.Message) (string, http.Header) {
		if m.Seq == 5 {
			return "json", http.Header{"Content-Type": {"text/html"}}
		}
		return sse(m)
	}
	got := found(Session(withHTTP(session(lines...), unversioned, plain), Options{}))
	if want := []string{"http-protocol-version@4", "http-content-type@5"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}

	onGet := func(m *store.Message) (string, http.Header) {
		if m.Seq == 5 {
			return "get-sse", http.Header{"Content-Type": {"text/event-stream"}}
		}
		return sse(m)
	}
	got = found(Session(withHTTP(session(lines...), versioned, onGet), Options{}))
	if want := []string{"get-stream-response@5"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	stateless := session(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a",`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"contents":[]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`,
	)
	headers := func(m *store.Message) http.Header {
		h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}
		switch m.Seq {
		case 1:
			h.Set("Mcp-Method", "tools/call")
			h.Set("Mcp-Name", "echo")
		case 3:
			h.Set("Mcp-Method", "resources/read")
			h.Set("Mcp-Name", "file:///b")
		case 5:
			h.Set("Mcp-Method", "tools/call")
			h.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		return h
	}
	got = found(Session(withHTTP(stateless, headers, sse), Options{}))
	if want := []string{"http-method-header@3", "http-protocol-version@5", "http-method-header@5"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}

	encoded := func(m *store.Message) http.Header {
		h := headers(m)
		if m.Seq == 1 {
			h.Set("Mcp-Name", "=?base64?ZWNobw==?=") // "echo", in 2026-07-28's Value Encoding
		}
		return h
	}
	got = found(Session(withHTTP(session(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	), encoded, sse), Options{}))
	if len(got) != 0 {
		t.Errorf("an Mcp-Name in Base64 form: findings %q, want none", got)
	}
}

func TestSession_HTTPAccept(t *testing.T) {
	sse := func(*store.Message) (string, http.Header) {
		return "post-sse", http.Header{"Content-Type": {"text/event-stream"}}
	}
	lines := opened(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`)
	tests := []struct {
		name   string
		accept []string // on every POST from seq 3 on; nil: leave Accept out
		want   []string
	}{
		{"both listed", []string{"application/json, text/event-stream"}, nil},
		{"in two headers, other case", []string{"Application/JSON", "text/event-stream;q=0.5"}, nil},
		{"JSON only, once per session", []string{"application/json"}, []string{"http-accept@3"}},
		{"a media range is not a listing", []string{"*/*"}, []string{"http-accept@3"}},
		{"none", nil, []string{"http-accept@3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := func(m *store.Message) http.Header {
				h := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
				if m.Seq == 1 {
					h = http.Header{}
				}
				if m.Seq >= 3 {
					h["Accept"] = tt.accept
				}
				return h
			}
			got := found(Session(withHTTP(session(lines...), hdr, sse), Options{}))
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
	// Request headers not recorded at all (mcpspy rerun -o, mcpmock's
	// fallback): not judged, as neither Accept nor the version header
	// was seen.
	unseen := withHTTP(session(lines...), func(*store.Message) http.Header { return http.Header{} }, sse)
	for _, m := range unseen.Messages {
		if m.Dir == store.C2S {
			m.HTTP.RequestHeader = nil
		}
	}
	if got := found(Session(unseen, Options{})); len(got) != 0 {
		t.Errorf("POSTs whose request headers were not recorded: %q, want no finding", got)
	}
	legacy := withHTTP(session(lines...), func(*store.Message) http.Header { return http.Header{"Accept": nil} }, sse)
	legacy.Messages[0].HTTP.Path = "/message?sessionId=1"
	legacy.Info.Transport = store.TransportLegacySSE
	if got := found(Session(legacy, Options{})); len(got) != 0 {
		t.Errorf("legacy HTTP+SSE, whose POSTs need neither Accept nor MCP-Protocol-Version: %q", got)
	}
}

// The answers that carried no message, which the recorder keeps on the
// client's message: an error status is reported, with who answered; a
// notification accepted with anything but 202, in Streamable HTTP only.
func TestSession_HTTPBareAnswers(t *testing.T) {
	versioned := func(m *store.Message) http.Header {
		return http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
	}
	sse := func(*store.Message) (string, http.Header) {
		return "post-sse", http.Header{"Content-Type": {"text/event-stream"}}
	}
	tests := []struct {
		name      string
		transport string
		status    int    // the answer to notifications/initialized (seq 3)
		note      string // and who gave it
		want      []string
		wantText  string
	}{
		{name: "202", transport: store.TransportHTTP, status: 202},
		{name: "not recorded (an older cassette)", transport: store.TransportHTTP},
		{name: "200", transport: store.TransportHTTP, status: 200, want: []string{"http-accepted@3"},
			wantText: "the POST of notifications/initialized was answered 200 OK; a server that accepts a notification or response must answer 202 Accepted"},
		{name: "200 in the legacy transport", transport: store.TransportLegacySSE, status: 200},
		{name: "400", transport: store.TransportHTTP, status: 400, want: []string{"http-status@3"},
			wantText: "the POST of notifications/initialized was answered 400 Bad Request, with no JSON-RPC answer"},
		{name: "mcpspy's 502", transport: store.TransportLegacySSE, status: 502, note: "answered by mcpspy, not the upstream: upstream down",
			want:     []string{"http-status@3"},
			wantText: "the POST of notifications/initialized was answered 502 Bad Gateway, with no JSON-RPC answer (answered by mcpspy, not the upstream: upstream down)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := withHTTP(session(opened(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`)...), versioned, sse)
			s.Info.Transport = tt.transport
			inited := s.Messages[2]
			if !strings.Contains(string(inited.Frame), "notifications/initialized") {
				t.Fatalf("seq 3 is %s", inited.Frame)
			}
			inited.HTTP.Status, inited.Note = tt.status, tt.note
			findings := Session(s, Options{})
			if got := found(findings); !slices.Equal(got, tt.want) {
				t.Fatalf("findings %q, want %q", got, tt.want)
			}
			if tt.wantText != "" && findings[0].Message != tt.wantText {
				t.Errorf("message %q\nwant    %q", findings[0].Message, tt.wantText)
			}
		})
	}
}

// A client whose session the server answered 404 for must initialize a
// new one: a later POST with the dead Mcp-Session-Id is reported, once,
// pointing at the 404.
func TestSession_SessionGoneReused(t *testing.T) {
	call := func(id int) string {
		return fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, id)
	}
	tests := []struct {
		name   string
		status map[uint64]int    // the bare answers, by seq
		sid    map[uint64]string // Mcp-Session-Id by seq, where not "dead"
		want   []string
	}{
		{name: "reused twice, reported once", status: map[uint64]int{4: 404, 5: 404, 6: 404}, want: []string{"http-status@4", "session-gone-reused@5", "http-status@5", "http-status@6"}},
		{name: "a new session after the 404", status: map[uint64]int{4: 404}, sid: map[uint64]string{5: "", 6: "new"}, want: []string{"http-status@4"}},
		{name: "a 404 for a request without the id", status: map[uint64]int{4: 404}, sid: map[uint64]string{4: ""}, want: []string{"http-status@4"}},
		{name: "a 503 keeps the session", status: map[uint64]int{4: 503}, want: []string{"http-status@4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := func(m *store.Message) http.Header {
				h := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
				sid, ok := tt.sid[m.Seq]
				if !ok {
					sid = "dead"
				}
				if m.Seq > 1 && sid != "" {
					h.Set("Mcp-Session-Id", sid)
				}
				return h
			}
			sse := func(*store.Message) (string, http.Header) {
				return "post-sse", http.Header{"Content-Type": {"text/event-stream"}}
			}
			s := withHTTP(session(opened(call(1), call(2), call(3))...), hdr, sse)
			for seq, status := range tt.status {
				s.Messages[seq-1].HTTP.Status = status
			}
			// Only the calls not refused are unanswered: a refused one is
			// owed no answer.
			want := slices.Clone(tt.want)
			for seq := uint64(4); seq <= 6; seq++ {
				if tt.status[seq] == 0 {
					want = append(want, fmt.Sprintf("unanswered@%d", seq))
				}
			}
			findings := Session(s, Options{})
			if got := found(findings); !slices.Equal(got, want) {
				t.Fatalf("findings %q, want %q", got, want)
			}
			for _, f := range findings {
				if f.Rule == "session-gone-reused" && (f.Related != 4 || !strings.Contains(f.Message, `Mcp-Session-Id "dead" again after the server answered 404 for it (#4)`)) {
					t.Errorf("finding %+v", f)
				}
			}
		})
	}
}

// A text body of an HTTP error answer (go-sdk's "session not found") is an
// error page, not a malformed message: the refusal is reported on the
// request (http-status). A body that claims to be JSON must parse, and a
// success must carry a message.
func TestSession_HTTPErrorPage(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		want        []string
	}{
		{name: "404 text", status: 404, contentType: "text/plain; charset=utf-8", want: []string{"http-status@4"}},
		{name: "502 html, no content type", status: 502, want: []string{"http-status@4"}},
		{name: "404 claiming JSON", status: 404, contentType: "application/json", want: []string{"http-status@4", "malformed@5"}},
		{name: "200 text", status: 200, contentType: "text/plain", want: []string{"malformed@5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := session(opened(`> {"jsonrpc":"2.0","id":1,"method":"ping"}`, `< session not found`)...)
			s = withHTTP(s, func(*store.Message) http.Header {
				return http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
			}, func(m *store.Message) (string, http.Header) {
				if m.Seq != 5 {
					return "json", http.Header{"Content-Type": {"application/json"}}
				}
				return "json", http.Header{"Content-Type": {tt.contentType}}
			})
			s.Messages[4].HTTP.Status = tt.status
			if tt.status >= 400 { // as the recorder keeps a refusal
				s.Messages[3].HTTP.Status = tt.status
			}
			if got := found(Session(s, Options{Skip: []string{"unanswered"}})); !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
}

// form is an elicitation form with a field of each kind a form may have.
const form = `{"type":"object","required":["name"],"properties":{` +
	`"name":{"type":"string","minLength":2},"age":{"type":"integer","minimum":0,"maximum":150},` +
	`"color":{"type":"string","enum":["red","green"]},"hero":{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"}]},` +
	`"fish":{"type":"array","maxItems":2,"items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"},{"const":"fish-3","title":"Trout"}]}},` +
	`"agree":{"type":"boolean"}}}`

// formReplies is the server eliciting form once for each content, and the
// client accepting it with that content.
func formReplies(contents ...string) []string {
	var frames []string
	for i, c := range contents {
		frames = append(frames,
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"method":"elicitation/create","params":{"message":"m","requestedSchema":%s}}`, i+1, form),
			fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"result":{"action":"accept","content":%s}}`, i+1, c))
	}
	return frames
}
