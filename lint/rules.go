package lint

// Rule is one check: a stable name to skip it by, how wrong a breach is,
// and what it checks.
type Rule struct {
	Name     string
	Severity Severity
	Summary  string
}

// The rules, grouped as docs/LINT.md groups them. Names are part of the
// command line (--skip) and must not change.
var rules = []Rule{
	// JSON-RPC
	{"malformed", Error, "a frame is not a JSON-RPC 2.0 message"},
	{"id-not-integer", Error, "an id is a number with a fraction or exponent (MCP ids are strings or integers)"},
	{"id-reused", Error, "a request reuses an id its sender already used in the session"},
	{"response-unknown-id", Error, "a response answers an id the other side never sent"},
	{"response-duplicate", Error, "a request is answered twice"},
	{"unanswered", Warning, "a request got no answer and was not cancelled (with notifications/cancelled or, in 2026-07-28, by closing its stream) or refused with an HTTP error status before the session ended"},
	{"batch", Error, "a JSON-RPC batch outside protocol 2025-03-26, the one version that allows them"},
	{"cancel-unknown", Warning, "notifications/cancelled names a request its sender never sent"},
	{"cancel-initialize", Error, "a client cancels initialize"},
	{"answered-after-cancel", Info, "a cancelled request was answered anyway (a race the receiver must tolerate)"},

	// Lifecycle
	{"no-handshake", Warning, "the session has neither initialize nor server/discover nor per-request protocol versions"},
	{"handshake-fields", Error, "initialize, its result or server/discover's result lacks a required member"},
	{"request-before-initialize", Warning, "the client sends a request other than ping before initialize was answered"},
	{"server-request-before-initialized", Warning, "the server sends a request other than ping before notifications/initialized"},
	{"initialized-early", Warning, "the client sends notifications/initialized before initialize was answered"},
	{"initialized-missing", Warning, "the client used the session without sending notifications/initialized"},
	{"version-unknown", Warning, "the negotiated protocol version is not one this linter knows"},
	{"meta-version-missing", Error, "a 2026-07-28 request lacks _meta io.modelcontextprotocol/protocolVersion"},

	// Capabilities
	{"undeclared-capability", Warning, "a message needs a capability its receiver (or sender) never declared"},
	{"deprecated", Info, "a 2026-07-28 session uses roots, sampling or logging, which that version deprecates"},

	// Progress
	{"progress-unknown-token", Error, "progress names a token no request of the other side carried"},
	{"progress-after-response", Warning, "progress arrives after its request was answered"},
	{"progress-after-cancel", Info, "progress arrives after its request was cancelled (the receiver should stop working on it)"},
	{"progress-not-increasing", Error, "a progress value is not above the one before it"},

	// Tools
	{"tools-list", Error, "a tools/list result has no tools array, or lists a tool without a name"},
	{"tool-input-schema", Error, "a listed tool has no inputSchema, or one whose type is not \"object\""},
	{"tool-name", Warning, "a tool name outside 1–128 characters of A–Z a–z 0–9 _ - . (2025-11-25 on)"},
	{"tool-duplicate", Warning, "a tools/list result names the same tool twice"},
	{"tool-unknown", Info, "a tools/call names a tool the server never listed"},
	{"tool-result", Error, "a tools/call result has no content array, or a content block lacks what its type needs"},
	{"structured-content", Error, "a tool with an outputSchema answers without structuredContent, or with one that breaks the schema's type, required or property types"},

	// Tasks (2025-11-25)
	{"task-support", Error, "a tools/call asks for a task the server or the tool does not take, or calls a tool that requires one without"},
	{"task-ask-support", Warning, "a server asks its client to run a sampling or elicitation as a task the client did not declare it takes"},
	{"task-fields", Error, "a task (created, polled, listed, cancelled or notified) lacks taskId, status, createdAt, lastUpdatedAt or ttl"},
	{"task-status", Error, "a task with an unknown status, created in another status than working, or leaving a terminal status"},
	{"task-result-meta", Error, "a tasks/result result without _meta io.modelcontextprotocol/related-task naming its task"},

	// Other methods
	{"params-shape", Error, "a request's or notification's params lack a member the spec requires for its method"},
	{"result-shape", Error, "a result lacks a member the spec requires for its method, or breaks its limits"},
	{"ping-result", Warning, "a ping is answered with anything but an empty result"},
	{"log-level", Error, "a log level outside the eight syslog levels"},
	{"resource-not-subscribed", Warning, "notifications/resources/updated for a resource the client did not subscribe to"},
	{"elicitation-schema", Error, "an elicitation form asks for something other than flat strings, numbers, booleans and enums"},
	{"elicitation-content", Warning, "an accepted elicitation's content breaks its form: a required field missing, a value of another type, or outside the form's options or bounds"},

	// Multi round-trip requests (2026-07-28)
	{"input-required", Error, "an input_required result outside tools/call, prompts/get and resources/read or before 2026-07-28, or with input requests of an unknown method"},
	{"input-responses", Error, "a retry whose inputResponses or requestState answer no input_required result, leave an input request unanswered, or answer one in the wrong shape"},

	// Pagination
	{"cursor-loop", Warning, "a list result hands out a cursor that was already followed"},

	// HTTP
	{"http-protocol-version", Error, "a POST after initialize (2025-06-18 on) lacks MCP-Protocol-Version, or names another version"},
	{"http-accept", Error, "a Streamable HTTP POST whose Accept header does not list both application/json and text/event-stream"},
	{"http-method-header", Error, "a 2026-07-28 POST whose Mcp-Method or Mcp-Name header disagrees with its body"},
	{"http-content-type", Error, "an answer to a POSTed request is neither application/json nor text/event-stream"},
	{"get-stream-response", Warning, "a response arrives on a GET stream that is not resuming an earlier stream"},
	{"http-status", Warning, "a client's POST was answered with an error status and no message (refused by the server, or by mcpspy for an unreachable upstream)"},
	{"http-accepted", Error, "a Streamable HTTP POST of notifications or responses was answered with a success status other than 202 Accepted"},
	{"session-gone-reused", Error, "a client sends a session id again after the server answered 404 for it, instead of initializing a new session"},
}

var rulesByName = func() map[string]Rule {
	m := make(map[string]Rule, len(rules))
	for _, r := range rules {
		m[r.Name] = r
	}
	return m
}()

// Rules lists every check, in the order docs/LINT.md gives them.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// KnownRule reports whether name is a rule's name.
func KnownRule(name string) bool {
	_, ok := rulesByName[name]
	return ok
}
