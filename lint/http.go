package lint

import (
	"mime"
	"net/http"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
	"github.com/mcptape/mcptape/store"
)

// httpPost checks the headers of a message the client POSTed: the
// protocol version header once negotiated (2025-06-18 on), and in
// 2026-07-28 the Mcp-Method and Mcp-Name headers, which must agree with
// the body. Every kind of client message counts: requests, notifications
// and the client's answers to server requests are all POSTs.
func (c *checker) httpPost(f *frame) {
	if f.dir != store.C2S || f.http == nil || f.http.Stream != store.StreamPostBody || c.info.Transport != store.TransportHTTP {
		return // legacy HTTP+SSE (2024-11-05) has none of these headers
	}
	if f.http.RequestHeader == nil {
		// Not recorded (mcpspy rerun and mcpmock's fallback keep no
		// request headers): what was not seen cannot be judged.
		return
	}
	h := http.Header(f.http.RequestHeader)
	if !c.acceptReported &&
		(!mcphttp.Accepts(h, "application/json") || !mcphttp.Accepts(h, "text/event-stream")) {
		c.acceptReported = true
		c.report("http-accept", f.seq, 0, "the POST's Accept header is %s; a client must list both application/json and text/event-stream (later POSTs of the session are not reported)", quotedOrAbsent(strings.Join(h.Values("Accept"), ", ")))
	}
	if f.method == "initialize" {
		return
	}
	version := c.version
	if c.era == eraStateless {
		if v, ok := stringOf(member(member(f.params, "_meta"), metaVersion)); ok {
			version = v
		}
	} else if c.era != eraHandshake || c.initAnswered == 0 || version < "2025-06-18" {
		return
	}
	if got := h.Get("MCP-Protocol-Version"); got != version {
		c.report("http-protocol-version", f.seq, 0, "the POST's MCP-Protocol-Version header is %s, the session's version is %s", quotedOrAbsent(got), version)
	}
	if version < statelessVersion || f.kind != jsonrpc.Request && f.kind != jsonrpc.Notification {
		return
	}
	if got := h.Get("Mcp-Method"); got != f.method {
		c.report("http-method-header", f.seq, 0, "the POST's Mcp-Method header is %s, its body's method %s", quotedOrAbsent(got), f.method)
	}
	var name string
	switch f.method {
	case "tools/call", "prompts/get":
		name, _ = stringOf(member(f.params, "name"))
	case "resources/read":
		name, _ = stringOf(member(f.params, "uri"))
	default:
		return
	}
	if got := h.Get("Mcp-Name"); !mcphttp.NameMatches(got, name) {
		c.report("http-method-header", f.seq, 0, "the POST's Mcp-Name header is %s, its body names %q", quotedOrAbsent(got), name)
	}
}

// httpResponse checks how an answer travelled: a plain body must be JSON,
// and a GET stream carries no answers unless it resumes a POST's stream.
func (c *checker) httpResponse(f *frame, r *request) {
	if f.http == nil {
		return
	}
	switch f.http.Stream {
	case "json":
		ct := http.Header(f.http.ResponseHeader).Get("Content-Type")
		mt, _, _ := mime.ParseMediaType(ct)
		if f.http.Status/100 == 2 && mt != "application/json" {
			c.report("http-content-type", f.seq, r.seq, "the answer to %s %s came as %s; it must be application/json or text/event-stream", r.method, r.id, quotedOrAbsent(ct))
		}
	case store.StreamGetSSE:
		if f.dir == store.S2C && http.Header(f.http.RequestHeader).Get("Last-Event-ID") == "" {
			c.report("get-stream-response", f.seq, r.seq, "the answer to %s %s came on a GET stream, which carries answers only when it resumes a POST's stream", r.method, r.id)
		}
	}
}

// httpAnswer checks the answer to a client's POST that carried no
// message, which the recorder keeps on the message posted (its status,
// and a note when mcpspy answered): an error status means the client's
// message went nowhere; and a notification or response must be accepted
// with 202 (Streamable HTTP; the legacy transport answers every POST so).
func (c *checker) httpAnswer(m *store.Message, s jsonrpc.Summary) {
	h := m.HTTP
	if m.Dir != store.C2S || h == nil {
		return
	}
	c.goneSession(m)
	if h.Status == 0 {
		return
	}
	what, note := "the POST", m.Note
	if s.Method != "" {
		what = "the POST of " + s.Method
	}
	if rest, ok := notAsked(m); ok {
		// The server refused what mcpmock posted, not the client.
		what, note = "the POST of mcpmock's own answer to a server request (its client was not asked it)", rest
		if r := c.pending[store.S2C][idKey(s.ID)]; r != nil && s.ID != "" {
			what = "the POST of mcpmock's own answer to the server's " + r.method + " " + r.id + " (its client was not asked it)"
		}
	}
	refused, _ := h.Refusal()
	switch {
	case refused != 0 && discoverProbe(m, s, refused):
	case refused != 0:
		c.report("http-status", m.Seq, 0, "%s was answered %d %s%s", what, refused, http.StatusText(refused), refusalWhat(note))
	case h.Status/100 == 2 && h.Status != http.StatusAccepted && c.info.Transport == store.TransportHTTP &&
		(s.Kind == jsonrpc.Notification || s.Kind == jsonrpc.Response || s.Kind == jsonrpc.Error):
		c.report("http-accepted", m.Seq, 0, "%s was answered %d %s; a server that accepts a notification or response must answer 202 Accepted", what, h.Status, http.StatusText(h.Status))
	}
}

// refusalNotePrefix begins the note the recorder keeps on a client
// message whose POST was refused with a body that answers no request
// (recorder/tap.go's refusalNote): an error page, or a JSON-RPC error
// with a null id. The body itself is kept as the server's next frame on
// that stream.
const refusalNotePrefix = "refused without a message: "

// refusalWhat says what came with a refusal, from the note the recorder
// kept on the refused message: no answer to it, and the body that came
// instead, or who answered (mcpspy, for an unreachable upstream).
func refusalWhat(note string) string {
	note = store.OneLine(note)
	switch body, ok := strings.CutPrefix(note, refusalNotePrefix); {
	case ok:
		return ", with no JSON-RPC answer; its body answers no request: " + body
	case note != "":
		return ", with no JSON-RPC answer (" + note + ")"
	}
	return ", with no JSON-RPC answer"
}

// discoverProbe says whether m is a 2026-07-28 client's server/discover
// that a server of the handshake era refused with a 4xx status: the
// client's way of asking which era the server speaks (go-sdk and mcp-go
// send server/discover first and fall back to initialize on an error),
// and no fault of either side. A refusal by mcpspy itself (its note does
// not carry the server's body) and a 5xx (a broken server) are reported.
func discoverProbe(m *store.Message, s jsonrpc.Summary, status int) bool {
	if s.Kind != jsonrpc.Request || s.Method != "server/discover" || status/100 != 4 {
		return false
	}
	return m.Note == "" || strings.HasPrefix(m.Note, refusalNotePrefix)
}

// goneSession checks a client's POST against the sessions the server
// said were gone. The spec (2025-03-26 on): a client that gets 404 to a
// request carrying Mcp-Session-Id must start a new session with an
// initialize that carries none. The recorder keeps every POST with that
// id in the one session, the 404 and what followed it. A client that
// keeps the id gets 404 for every POST: one finding says so.
func (c *checker) goneSession(m *store.Message) {
	h := m.HTTP
	if h.Stream != store.StreamPostBody || c.info.Transport != store.TransportHTTP {
		return
	}
	sid := http.Header(h.RequestHeader).Get("Mcp-Session-Id")
	if sid == "" {
		return
	}
	if at, ok := c.gone[sid]; ok && !c.goneReused[sid] {
		if c.goneReused == nil {
			c.goneReused = map[string]bool{}
		}
		c.goneReused[sid] = true
		c.report("session-gone-reused", m.Seq, at, "the client sent Mcp-Session-Id %q again after the server answered 404 for it (#%d); it must initialize a new session, without the id (later POSTs with it are not reported)", sid, at)
	}
	if _, gone := h.Refusal(); gone {
		if c.gone == nil {
			c.gone = map[string]uint64{}
		}
		if _, ok := c.gone[sid]; !ok {
			c.gone[sid] = m.Seq
		}
	}
}

// errorPage says whether m is the body of an HTTP error answer that does
// not claim to be JSON: a text error page (go-sdk's "session not found",
// a gateway's HTML), which HTTP allows and which no one meant as a
// JSON-RPC message. The refusal is reported on the message it refused
// (http-status); a body sent as application/json must still parse.
func errorPage(m *store.Message) bool {
	h := m.HTTP
	if m.Dir != store.S2C || h == nil || h.Stream != store.StreamJSON || h.Status < 400 {
		return false
	}
	mt, _, _ := mime.ParseMediaType(http.Header(h.ResponseHeader).Get("Content-Type"))
	return mt != "application/json"
}

// endpointEvent says whether m is the endpoint event of a 2024-11-05
// HTTP+SSE stream, which names the URI to POST to: transport setup, kept
// as a server frame (its data is no JSON), and no message to judge.
func endpointEvent(m *store.Message) bool {
	return m.Dir == store.S2C && m.HTTP != nil && m.HTTP.EventType == "endpoint"
}

func quotedOrAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return `"` + s + `"`
}
