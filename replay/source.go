// Package replay is mcpmock: a deterministic fake MCP server. It serves the
// protocol lifecycle itself and asks its Sources (cassettes, scripts) for
// every answer, over stdio, Streamable HTTP, legacy HTTP+SSE or WebSocket.
//
// It never talks to a real server and never answers from the wall clock or
// randomness: the same client traffic gets the same bytes back.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/mcphttp"
)

// This file is the contract between the engine (lifecycle, transports,
// layering, reports) and the sources that answer: the cassette source in
// this package and the script source in replay/script.

// Request is one message from the client as the engine parsed it.
type Request struct {
	// ID is the request id's JSON text; nil for a notification. Sources
	// never echo it: the engine writes the live id into the answer.
	ID     json.RawMessage
	Method string
	// Params is nil when the message had none.
	Params json.RawMessage
	// Frame is the exact bytes received; nil in a big request as it
	// waits for its answer (Waiting).
	Frame []byte

	turn *turn // its place among the messages handed to sources that may block
	// checked is the Params the engine validated as it split the frame:
	// while Params is still that slice, look-ups in it skip checking it
	// again (member). A source that copies the Request and sets other
	// Params gets the checking look-up.
	checked json.RawMessage
}

// member returns the value at path in Params, as jsonrpc.Member does. On
// params the engine validated it steps over what lies before and after
// (a 64 MiB tools/call's arguments) without checking it again: answering
// such a call looks in its _meta several times (its progress token, its
// protocol version, its client capabilities), and each validating look
// was a full pass over the call.
func (r *Request) member(path ...string) []byte {
	if r.paramsChecked() {
		return jsonrpc.MemberOfValid(r.Params, path...)
	}
	return jsonrpc.Member(r.Params, path...)
}

// paramsChecked says whether Params is the slice the engine validated.
func (r *Request) paramsChecked() bool {
	return len(r.Params) > 0 && len(r.checked) == len(r.Params) && &r.checked[0] == &r.Params[0]
}

// waitingBound is the size of a request past which Waiting trims it: a
// smaller one is kept whole, as copying its pieces would save little.
const waitingBound = 64 << 10

// Waiting returns r as a request that waits for its answer holds it:
// what answering it later needs (its id, method and its params' _meta,
// where its progress token, protocol version, client capabilities and
// log level are), without its frame or the rest of its params, copied
// out of the frame so that the frame can go. A call that waits (a delay,
// recorded timing, a hung call) would otherwise hold the whole call: a
// run of 64 MiB calls would cost a frame each (DESIGN.md, "Flat
// memory"). A request of at most 64 KiB is returned as it is, and so is
// an initialize or a resources/subscribe or unsubscribe, whose params
// the engine reads once it is answered.
func (r *Request) Waiting() *Request {
	if len(r.Frame) <= waitingBound && len(r.Params) <= waitingBound {
		return r
	}
	switch r.Method {
	case "initialize", "resources/subscribe", "resources/unsubscribe":
		return r
	}
	w := &Request{ID: bytes.Clone(r.ID), Method: r.Method, turn: r.turn}
	if len(r.Params) <= waitingBound { // the frame is big, not its params
		w.Params = bytes.Clone(r.Params)
	} else if meta := r.member("_meta"); len(meta) > 0 {
		w.Params = append(append([]byte(`{"_meta":`), meta...), '}')
	}
	return w
}

// ParamsMembers calls fn with each member of Params, its name unescaped
// and its value's bytes (sharing Params' memory), and reports whether
// Params is one JSON object, as a source reading a request's params
// needs. On the params of a request the engine received, which it
// validated as it read the frame, it steps over the values without
// checking them again: a source that reads a 64 MiB tools/call's members
// would otherwise pass over all of it once more.
func (r *Request) ParamsMembers(fn func(name, value []byte)) bool {
	if r.paramsChecked() {
		return jsonrpc.MembersOfValid(r.Params, fn)
	}
	return jsonrpc.Members(r.Params, fn)
}

// ProgressToken returns the JSON text of params._meta.progressToken, or nil.
// It is a copy: it may outlive the request's params. Only the path to it
// is decoded, by exact name: the arguments of a 64 MiB tools/call are
// stepped over, once, not decoded (encoding/json took most of the time
// answering one), and a "ProgressToken" is no more a progress token here
// than it is to matching, which leaves out only "progressToken".
func (r *Request) ProgressToken() json.RawMessage {
	tok := r.member("_meta", "progressToken")
	if len(tok) == 0 || string(tok) == "null" {
		return nil
	}
	return bytes.Clone(tok)
}

// MetaVersion returns params._meta's io.modelcontextprotocol/protocolVersion,
// or "": set, it makes the request one of the stateless 2026-07-28 era.
// Looked up as ProgressToken is.
func (r *Request) MetaVersion() string {
	v, _ := jsonrpc.String(r.member("_meta", metaVersionKey))
	return v
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// Why, with Reply.Unmatched, is what the report says of why the
	// source had no answer, when Message, which the client gets as a
	// real server would send it, says it less well: a whole-server
	// script's "the script has no tool "x"" for its -32602 "unknown
	// tool". Never sent.
	Why string `json:"-"`
	// unmatched, when set, is a request the source made on the live
	// request's behalf and found nothing for (a retry built from the
	// client's input, mrtr.go): the report counts it, and stderr says so,
	// as for any unmatched request. (Here, not in Reply: a Reply is part
	// of every recorded interaction, whose size is kept to 256 bytes.)
	unmatched *Unmatched
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Outgoing is a message the server sends on its own: a notification, or
// (when ID is set by the engine) a request.
type Outgoing struct {
	Method string
	Params json.RawMessage
	// Request marks a server→client request (roots/list, sampling): the
	// engine sends it with a fresh id and awaits the client's reply with a
	// timeout, then drops the reply. To a 2026-07-28 client it sends
	// nothing (that era takes no requests from the server), nor to one
	// whose initialize did not declare the capability it needs (roots for
	// roots/list), and counts it in Report.Skipped.
	Request bool
	// Progress marks a notifications/progress the server sent after it
	// had answered the request it reports on (mcp-go's stdio server
	// writes notifications from a goroutine of its own, racing its
	// answers): the engine puts the live request's progressToken in it,
	// and sends nothing if the live request asked for no progress.
	Progress bool
	// Listened marks a notification recorded on a 2026-07-28
	// subscriptions/listen stream. A notifications/resources/updated so
	// marked goes to a handshake-era client only while it is subscribed
	// to its URI (resources/subscribe), as the recorded client was by its
	// listen.
	Listened bool
}

// Reply is a Source's answer to one request. Exactly one of Result, Error,
// Raw, NoReply, ExpireSession or HTTPStatus applies, but for Error with
// HTTPStatus.
type Reply struct {
	Result json.RawMessage
	Error  *RPCError
	// Raw frames are written verbatim instead of a response (faults: a
	// malformed frame, a duplicated response, a wrong id).
	Raw [][]byte
	// NoReply leaves the request unanswered (a hung call).
	NoReply bool
	// CloseAfter drops the connection after the reply (a fault).
	CloseAfter bool
	// ExpireSession answers as a server whose session has expired: over
	// Streamable HTTP the POST gets 404 and the session is gone; where
	// there is no 404 to give, the connection closes. A 2026-07-28
	// request has no session to expire, on any transport: a JSON-RPC
	// error says so. See docs/SCRIPTS.md.
	ExpireSession bool
	// Unmatched says the source had no answer for the request, and this
	// reply (an error, or a tool's isError result) says so: a whole-server
	// script none of whose answers to a tool, prompt or resource matches,
	// or that has no such tool, prompt or resource, or that is asked for
	// none (a tools/call without params.name); the task it creates
	// for a call none of a tool's answers matches.
	// The reply goes to the client as it is, and the report counts the
	// request as unmatched rather than matched, its Why taken from the
	// reply: the error's Why or else its message, or the result's first
	// text content. A
	// bool, in the padding before HTTPStatus: a Reply is part of every
	// recorded interaction, whose size is kept to 256 bytes.
	Unmatched bool
	// HTTPStatus (4xx or 5xx) answers the request's POST with that status
	// and no JSON-RPC message; where there is no HTTP status, a JSON-RPC
	// error names it. With Error, the error is the answer, sent over
	// Streamable HTTP as an application/json body with that status instead
	// of 200 (go-sdk's server answers a 2026-07-28 header mismatch with 400
	// and -32020), and elsewhere as any error. int32, next to the bools: a
	// Reply is part of every recorded interaction, whose size is kept to
	// 256 bytes.
	HTTPStatus int32
	// Refusal, with HTTPStatus or ExpireSession, is more of the refused
	// POST's answer: headers and a body. nil: the status and a line of
	// text/plain naming the fault. Where there is no HTTP status it is
	// not sent.
	Refusal *HTTPRefusal
	// After are sent once the reply is written, as session-level messages
	// (over HTTP on the GET stream; on stdio, stdout): list_changed after
	// the call that caused it.
	After []Outgoing
}

// HTTPRefusal is what a refused POST's answer carries besides its status
// (Reply.Refusal): a replayed recording's, or a script fault's.
type HTTPRefusal struct {
	// Header is sent with the status (Retry-After, WWW-Authenticate),
	// except the headers the HTTP server or the session own, which are
	// never taken from here: Content-Length, Transfer-Encoding,
	// Content-Encoding, Date, the hop-by-hop ones, Mcp-Session-Id.
	// Content-Type is sent only with Body.
	Header http.Header
	// Body, when not nil, is sent instead of the line of text naming the
	// fault, as it is: Header's Content-Type says what it is.
	Body []byte
}

// RefusalReply is the Reply that refuses a request as a server refused it:
// with status (4xx, 5xx), or, for a session the server no longer knew
// (sessionGone: a 404 to its Mcp-Session-Id), with the session's expiry;
// with the headers of header a client acts on (Retry-After,
// WWW-Authenticate, …; a redacted value left out), and body, if any, with
// its Content-Type. A recording's refusal replays so, and package
// fallback passes a live one on so.
func RefusalReply(status int, sessionGone bool, header http.Header, body []byte) Reply {
	var r Reply
	if sessionGone {
		r.ExpireSession = true
	} else {
		r.HTTPStatus = int32(status)
	}
	if len(body) == 0 {
		body = nil
	}
	if h := mcphttp.RefusalHeader(header, body != nil); h != nil || body != nil {
		r.Refusal = &HTTPRefusal{Header: h, Body: body}
	}
	return r
}

// refuses says whether r answers with an HTTP refusal, not a message: a
// bare status, or an expired session (an Error with a status is an
// answer).
func (r *Reply) refuses() bool { return r.HTTPStatus != 0 && r.Error == nil || r.ExpireSession }

// refusalStatus is the status r refuses with: 404 for an expired session.
func (r *Reply) refusalStatus() int {
	if r.ExpireSession {
		return http.StatusNotFound
	}
	return int(r.HTTPStatus)
}

// Peer is the client of one session, as a Source sees it while answering
// a request. Its methods are safe for concurrent use.
type Peer interface {
	// Notify sends a notification related to the request being answered
	// (over HTTP, on that request's SSE stream): progress, logging.
	Notify(method string, params json.RawMessage) error
	// NotifySession sends a notification not tied to a request.
	NotifySession(method string, params json.RawMessage) error
	// Call sends a server→client request with a fresh id and waits for the
	// client's reply, or for ctx. During a 2026-07-28 request it sends
	// nothing and returns an error: that era takes no requests from the
	// server. Nor does it send what the client declared no capability
	// for (roots/list without roots): the error is then a -32601
	// *RPCError, as such a client would answer. The engine's Peer counts
	// such a request in Report.Skipped.
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// ProtocolVersion is the version this session negotiated ("" before
	// initialize; the request's _meta version in the stateless era).
	ProtocolVersion() string
}

// Source answers requests from one origin: a cassette or a script. Several
// layer: the first whose session answers wins.
type Source interface {
	// Name identifies the source in errors and reports (its file name).
	Name() string
	// Open starts answering one client session.
	Open() SessionSource
	// Unused describes the recorded interactions no session used, for
	// --report and --strict. Scripts return nil.
	Unused() []string
}

// SessionSource answers the requests of one client session.
type SessionSource interface {
	// Answer returns ok=false when this source has nothing for req, and the
	// engine asks the next source. It may block (delays, progress) and must
	// return when ctx ends (the request was cancelled or the session
	// closed). For a client notification (req.ID == nil) the reply is
	// ignored, except After (what the server sent after it, such as
	// list_changed after notifications/initialized), but ok still says
	// whether the source took it.
	Answer(ctx context.Context, peer Peer, req *Request) (reply Reply, ok bool)
}

// LiveHandshaker is implemented by session sources that can take a
// client's initialize or server/discover to a live server (package
// fallback). The engine asks one only when nothing answers the request and
// no cassette has anything recorded to introduce itself with (every SOURCE
// is empty, or there is none): a recorded lifecycle always wins.
type LiveHandshaker interface {
	LiveHandshake(ctx context.Context, peer Peer, req *Request) (reply Reply, ok bool)
}

// Sequencer is implemented by the engine's Peer, for sources that pass a
// client's messages on to a live server (package fallback). The engine
// asks such a source on a goroutine per message, so without it messages
// could reach the server in another order than the client sent them: a
// request before the notifications/initialized that preceded it, two
// pipelined calls swapped.
type Sequencer interface {
	// AwaitTurn returns once every message the client sent before this
	// one, of those handed to sources that may block, has been passed on
	// or fully handled; or with ctx's error when ctx ends first.
	AwaitTurn(ctx context.Context) error
	// Passed says this message has been passed on, so that the next may
	// go. The engine says it itself once the message has been handled.
	Passed()
}

// SessionCaller is implemented by the engine's Peer: a server→client
// request not tied to the request being answered, sent as session-level
// messages are (over Streamable HTTP, on the GET stream), for a source
// whose real server asks the client something between its requests
// (package fallback: server-everything asks for roots right after
// initialized). To a 2026-07-28 client, which takes no requests from the
// server, or what the client declared no capability for, it sends
// nothing and returns an error, as Peer.Call does.
type SessionCaller interface {
	CallSession(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// SessionCloser is implemented by session sources that hold something
// open for their session (package fallback's real server): the engine
// calls Close once the session has ended and nothing of it is in flight.
type SessionCloser interface {
	Close()
}

// ClientHello is implemented by the engine's Peer: the params of the
// initialize request that opened the session (nil before it, and in the
// stateless era), for a source that must introduce the same client
// elsewhere.
type ClientHello interface {
	ClientHello() json.RawMessage
}

// ToolSchemas is implemented by sources that know the tools they serve
// (a script's tools, a cassette's recorded tools/list answers): the
// inputSchema of a tool by name, for the check of a 2026-07-28
// tools/call's Mcp-Param-* headers, which the schema's x-mcp-header
// marks ask for. The engine's Peer implements it too, over every source:
// a source that passes a tools/call on to a real server over HTTP needs
// the headers as well.
type ToolSchemas interface {
	InputSchema(tool string) (json.RawMessage, bool)
}

// HTTPSessionPolicy is implemented by sources that say whether their
// server has sessions over Streamable HTTP (a script's server.sessions).
// What the first that says it says decides, over what recordings show
// (see docs/REPLAY.md, "As the recorded server did over HTTP"). It is
// asked per request: a script reloaded may say otherwise.
type HTTPSessionPolicy interface {
	// HTTPSessions says whether initialize gets an Mcp-Session-Id;
	// said=false when the source does not say.
	HTTPSessions() (issue, said bool)
}

// AnyMethod is implemented by sources that may answer a request of any
// method, whatever they hold: package fallback's, which passes what
// nothing else answered on to a real server. With one among the sources,
// a --match ignore-params=METHOD naming a method nothing recorded is
// only warned about: the real server may answer it, and its answers be
// recorded for the next replay.
type AnyMethod interface {
	AnswersAnyMethod() bool
}

// Nearer is implemented by sources that can point at the recorded request
// closest to one nothing matched, for the error the client gets.
type Nearer interface {
	// Nearest describes the closest recorded request and how req differs
	// from it (a short diff); ok=false if there is nothing comparable.
	Nearest(req *Request) (nearest, diff string, ok bool)
}

// Prepared is a request a source has matched: the answer now, or a Play
// function when answering takes time (progress, delays, server→client
// calls, recorded timing).
type Prepared struct {
	Reply Reply
	// Play is handed the request as it waits (Request.Waiting), unless
	// WholeRequest: what else of it Play needs, Prepare takes.
	Play func(ctx context.Context, peer Peer, req *Request) Reply
	// SSE answers over an SSE stream on HTTP even without related messages
	// (as recorded).
	SSE bool
	// WholeRequest asks the engine to keep the request whole while it
	// waits and to hand it so to Play: Play reads more of its params than
	// Request.Waiting keeps (a retry built from them).
	WholeRequest bool
}

// Backgrounder is implemented by preparers whose immediate answers may
// leave work going, such as a script's task. Once such an answer (a
// Prepared with a Reply and no Play) is written, the engine asks for the
// work and runs it on a goroutine of its own, with a Peer of the
// request's session (its NotifySession: the request itself is answered);
// ctx ends with the session. (Not a field of Prepared: a recorded
// interaction holds one, and its size is kept to 256 bytes.)
type Backgrounder interface {
	Background(req *Request) func(ctx context.Context, peer Peer)
}

// Explainer is implemented by preparers some of whose immediate answers
// marked Reply.Unmatched say nothing of why themselves: a script's task,
// created for a call none of the tool's answers matches, is answered with
// a CreateTaskResult like any other, and the script's own "no answer
// matches" comes only with its tasks/result. For such an answer (a
// Prepared with a Reply and no Play) the engine asks WhyUnmatched once,
// with the request Prepare was given, for the report's Unmatched.Why; ""
// leaves it to what the reply says. A source keeps the why until then
// keyed by that request, as a Backgrounder keeps its work. (Not a field
// of Reply: a recorded interaction holds one, and its size is kept to
// 256 bytes, TestInteraction_Layout; a string there would push the
// fields answering reads past the first two cache lines.)
type Explainer interface {
	WhyUnmatched(req *Request) string
}

// Preparer is the engine's fast path, for sources whose answers depend on
// the order requests arrive (recorded order, call counts, events): the
// engine calls Prepare on the reading goroutine, in arrival order, writes
// an immediate Reply at once, and runs Play on a goroutine of its own.
// Answers without a Play therefore go out in the order their requests came
// in, which keeps the bytes out the same from run to run. The engine only
// reads a Prepared: a source may hand out the same one again.
type Preparer interface {
	Prepare(req *Request) (*Prepared, bool)
}
