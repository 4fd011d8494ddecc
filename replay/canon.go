package replay

import (
	"encoding/json"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Canonical params: the form in which a live request and a recorded one are
// compared. Two clients asking the same thing differ in key order, white
// space, ids, progress tokens, tracing headers and who they say they are;
// none of that may stop a match.

// volatileMetaKeys are _meta keys that change from run to run.
var volatileMetaKeys = map[string]bool{
	"progressToken": true,
	"traceparent":   true,
	"tracestate":    true,
	"baggage":       true,
	"sentry-trace":  true,
}

// isVolatileMetaKey: the fixed set, the 2026-07-28 per-request client
// fields (io.modelcontextprotocol/…: version, clientInfo, capabilities) and
// OpenTelemetry keys.
func isVolatileMetaKey(k string) bool {
	return volatileMetaKeys[k] || strings.HasPrefix(k, "io.modelcontextprotocol/") || strings.HasPrefix(k, "otel")
}

// volatileTopKeys are the params fields ignored for a method: who the
// client is and what it can do. initialize's protocolVersion is ignored
// too; the engine warns when the recording answers another version. A
// 2026-07-28 retry's requestState (SEP-2322) is the server's opaque state,
// echoed: a server may make it afresh each run, and the input the retry
// carries is what it asks.
//
// A tasks/get, tasks/result or tasks/cancel names its task by taskId
// alone (2025-11-25 schema: params {taskId}), and no tasks/ request is
// task-augmented: a task member on one means nothing to the server, yet
// the TypeScript SDK's callToolStream sends its call's task metadata
// along on every poll. A host polling with another ttl, or with none,
// still asks the same.
func volatileTopKeys(method string) []string {
	switch {
	case method == "initialize":
		return initializeVolatile
	case jsonrpc.MayAskForInput(method):
		return requestStateVolatile
	case isTaskMethod(method):
		return taskVolatile
	}
	return nil
}

var (
	initializeVolatile   = []string{"clientInfo", "capabilities", "protocolVersion"}
	requestStateVolatile = []string{"requestState"}
	taskVolatile         = []string{"task"}
)

// isTaskMethod says whether method is one of the requests about tasks
// already made (tasks/get, tasks/result, tasks/cancel name one by taskId;
// tasks/list).
func isTaskMethod(method string) bool { return strings.HasPrefix(method, "tasks/") }

// taskPresenceOnly says whether a request's params.task counts by its
// presence alone: on a request that may be task-augmented (2025-11-25:
// tools/call, sampling/createMessage, elicitation/create) it says "run
// this as a task", which the answer follows (a CreateTaskResult, not the
// result), but its ttl is only a wish: the server decides the task's ttl
// and says so in the answer (server-everything keeps every task 5
// minutes whatever is asked).
func taskPresenceOnly(method string) bool { return jsonrpc.TaskAugmentable(method) }

// argumentsOptional says whether method's params.arguments may be left
// out, sent as {} or sent as null, all meaning no arguments: the
// TypeScript SDK leaves it out of a call to a tool that takes none, where
// go-sdk sends {} (tools/call, prompts/get).
func argumentsOptional(method string) bool { return method == "tools/call" || method == "prompts/get" }

// answerCanonMethod is the method whose volatile top-level fields an
// answer to method drops when compared: the requestState of an
// input_required answer, which is the server's opaque state. No other
// answer drops any (initialize's answer keeps its protocolVersion).
func answerCanonMethod(method string) string {
	if jsonrpc.MayAskForInput(method) {
		return method
	}
	return ""
}

// canonAnswer is canonParams for the answer to a request of method (a
// result or an error), as compared: its task, a CreateTaskResult's, is
// the server's and compares whole.
func canonAnswer(method string, body json.RawMessage) (canon []byte, ok bool) {
	p := trimWS(body)
	if len(p) == 0 || string(p) == "null" || string(p) == "{}" {
		return nil, true
	}
	c := canonizer{b: p, top: volatileTopKeys(answerCanonMethod(method))}
	out, end, ok := c.value(nil, 0, 0, 0)
	if !ok || end != len(p) {
		return nil, false
	}
	return out, true
}

// canonParams returns params in canonical form: parsed, volatile fields
// removed, re-encoded with sorted keys. Absent, null and {} params are all
// "". ok is false when params is not valid JSON.
func canonParams(method string, params json.RawMessage) (canon string, ok bool) {
	out, ok := appendCanonParams(nil, method, params)
	return string(out), ok
}

// appendCanonParams appends the canonical params to dst.
func appendCanonParams(dst []byte, method string, params json.RawMessage) ([]byte, bool) {
	out, _, ok := appendCanonToken(dst, method, params)
	return out, ok
}

// appendCanonToken is appendCanonParams that also returns the raw
// _meta.progressToken it dropped, if any: loading takes both in one pass.
func appendCanonToken(dst []byte, method string, params json.RawMessage) (out, token []byte, ok bool) {
	out, token, _, ok = appendCanonNoted(dst, method, params)
	return out, token, ok
}

// appendCanonNoted is appendCanonToken that also says whether the
// canonical params may hold a "[redacted]" member (redactedNames.add):
// false when no string in them is "[redacted]".
func appendCanonNoted(dst []byte, method string, params json.RawMessage) (out, token []byte, redacted, ok bool) {
	p := trimWS(params)
	if len(p) == 0 || string(p) == "null" || string(p) == "{}" {
		return dst, nil, false, true
	}
	c := canonizer{b: p, top: volatileTopKeys(method), taskShape: taskPresenceOnly(method), argsOptional: argumentsOptional(method)}
	out, end, ok := c.value(dst, 0, 0, 0)
	if !ok || end != len(p) {
		return dst, nil, false, false
	}
	return out, c.token, c.redacted, true
}

// trimWS is bytes.Trim(b, " \t\r\n"): JSON's white space, no more.
func trimWS(b []byte) []byte {
	b = b[jsonrpc.SkipWS(b, 0):]
	for len(b) > 0 && b[len(b)-1] <= ' ' && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// appendKey appends the match key of a request to dst: the method, NUL,
// the canonical params. It also returns the raw _meta.progressToken it
// dropped, if any.
func appendKey(dst []byte, method string, params json.RawMessage) (key, token []byte, ok bool) {
	key, token, _, ok = appendKeyNoted(dst, method, params)
	return key, token, ok
}

// appendKeyNoted is appendKey that also says what appendCanonNoted does.
func appendKeyNoted(dst []byte, method string, params json.RawMessage) (key, token []byte, redacted, ok bool) {
	start := len(dst)
	dst = append(append(dst, method...), 0)
	dst, token, redacted, ok = appendCanonNoted(dst, method, params)
	return dst[start:], token, redacted, ok
}
