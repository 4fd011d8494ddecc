package store

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// Dir is the direction a frame travelled.
type Dir uint8

const (
	// C2S is client to server.
	C2S Dir = iota
	// S2C is server to client.
	S2C
)

// String returns "c2s" or "s2c", the spelling used in JSONL and on screen.
func (d Dir) String() string {
	if d == S2C {
		return "s2c"
	}
	return "c2s"
}

// ParseDir is the inverse of Dir.String.
func ParseDir(s string) (Dir, bool) {
	switch s {
	case "c2s":
		return C2S, true
	case "s2c":
		return S2C, true
	}
	return 0, false
}

// Transport names, as stored in SessionInfo.Transport.
const (
	TransportStdio     = "stdio"
	TransportHTTP      = "streamable-http"
	TransportLegacySSE = "sse"
	TransportWebSocket = "websocket"
	// TransportUnknown is the transport of a session whose info does not
	// say: a salvaged session whose info was lost, or a JSONL header
	// written by hand without one ({"info":{}}).
	TransportUnknown = "unknown"
)

// Redacted is what a cassette holds in place of a secret: a header or
// query value the recorder hid, or (as the JSON string "[redacted]") a
// value in a frame that mcpspy export --redact blanked. Replay matches a
// recorded request's redacted value with any live one.
const Redacted = "[redacted]"

// Message is one recorded frame.
//
// Frame holds the exact bytes that went over the wire, without the stdio
// line terminator ("\n"; a "\r" before it is kept). The store never changes
// them. A Message handed to Append is owned by the store from then on.
type Message struct {
	Session string
	Seq     uint64 // dense, from 1, per session
	Dir     Dir
	Time    time.Time
	Frame   []byte
	HTTP    *HTTPMeta // nil on stdio
	Note    string

	// amends marks a message that records its seq again (Session.Amend):
	// the commit stores it over the first, and Observe saw it already.
	amends bool
	// amendsMeta marks an amendment that carries only HTTP and Note
	// (Session.AmendMeta): the commit merges them into the stored record
	// of its seq and leaves the rest of it, frame and summary, as it is.
	amendsMeta bool

	// rpc, when not nil, is where Frame's JSON-RPC members lie, as the
	// JSONL reader found them (see RPC).
	rpc *rpcParts
}

// rpcParts are a frame's jsonrpc.Parts and the frame they were found in.
type rpcParts struct {
	frame *byte // its first byte
	n     int   // its length
	parts jsonrpc.Parts
}

// RPC returns where the JSON-RPC members of Frame lie, when the reader
// that made m found them while it validated the frame: the JSONL reader
// does, for each line's "message" that is an object. A reader of the
// frame may take them instead of scanning it again: the frame is then a
// valid JSON object. ok is false for any other Message, and once Frame has
// been set to other bytes.
func (m *Message) RPC() (parts jsonrpc.Parts, ok bool) {
	if p := m.rpc; p != nil && len(m.Frame) == p.n && p.n > 0 && &m.Frame[0] == p.frame {
		return p.parts, true
	}
	return jsonrpc.Parts{}, false
}

// HTTPMeta is the transport metadata of a frame that travelled over HTTP
// (Streamable HTTP, legacy HTTP+SSE, or a WebSocket upgrade). Headers are
// stored after redaction.
type HTTPMeta struct {
	Method         string      `json:"method,omitempty"`
	Path           string      `json:"path,omitempty"` // path and query, query redacted
	Status         int         `json:"status,omitempty"`
	RequestHeader  http.Header `json:"request_header,omitempty"`
	ResponseHeader http.Header `json:"response_header,omitempty"`
	// Stream says where the frame travelled: one of the Stream constants.
	Stream string `json:"stream,omitempty"`
	// StreamID tells concurrent streams of one session apart (a counter
	// assigned by the recorder).
	StreamID  uint64 `json:"stream_id,omitempty"`
	EventID   string `json:"event_id,omitempty"`
	EventType string `json:"event_type,omitempty"`
	Retry     string `json:"retry,omitempty"`
	// Priming lists the ids of SSE events without data seen on this stream
	// before this frame (2025-11-25 priming events are not messages).
	Priming []string `json:"priming,omitempty"`
	// WSOpcode is the WebSocket frame type (1 text, 2 binary) for StreamWS.
	WSOpcode int `json:"ws_opcode,omitempty"`
}

// Refusal says how a client message's POST was refused, as the recorder
// keeps it on the message (for a client message only: a server message's
// status is that of the response it came in): the bare 4xx or 5xx status
// the POST got instead of a JSON-RPC answer, 0 if none; and whether that
// was a 404 for the Mcp-Session-Id it carried, which says its session
// was gone.
func (h *HTTPMeta) Refusal() (status int, sessionGone bool) {
	if h == nil || h.Status < 400 || h.Status > 599 {
		return 0, false
	}
	return h.Status, h.Status == http.StatusNotFound && http.Header(h.RequestHeader).Get("Mcp-Session-Id") != ""
}

// RefusalBody says whether a server frame with this metadata is the body
// of a POST's 4xx or 5xx answer, which the recorders keep as a frame of
// its own on the POST's stream: a text error page, a JSON-RPC error with a
// null id, or the request's own error (which then answers it). Its
// request, on that stream, carries the refusal (Refusal) unless it was
// recorded before mcpspy kept it there.
func (h *HTTPMeta) RefusalBody() bool {
	return h != nil && h.Stream == StreamJSON && h.Method == http.MethodPost && h.Status >= 400 && h.Status <= 599
}

// Where a frame travelled (HTTPMeta.Stream). The names are in cassettes
// and JSONL exports: they never change.
const (
	StreamPostBody  = "post-body"  // a POST request body
	StreamJSON      = "json"       // an application/json response body
	StreamPostSSE   = "post-sse"   // an SSE event on a POST's response
	StreamGetSSE    = "get-sse"    // an SSE event on a GET stream
	StreamLegacySSE = "legacy-sse" // an event on a 2024-11-05 SSE stream
	StreamWS        = "ws"         // a WebSocket frame
)

var streams = []string{StreamPostBody, StreamJSON, StreamPostSSE, StreamGetSSE, StreamLegacySSE, StreamWS}

// Streams lists the Stream constants, in the order above.
func Streams() []string { return slices.Clone(streams) }

// SessionInfo describes one recorded session: one child process, one HTTP
// session, one SSE connection or one WebSocket connection.
type SessionInfo struct {
	ID        string    `json:"-"`
	Name      string    `json:"name,omitempty"`
	Transport string    `json:"transport"`
	Upstream  string    `json:"upstream"` // command line or URL, secrets redacted
	Start     time.Time `json:"start"`
	// HTTPSessionID is the Mcp-Session-Id the server issued, if any.
	HTTPSessionID string    `json:"http_session_id,omitempty"`
	End           *EndInfo  `json:"end,omitempty"` // nil until its end is recorded (see EndState)
	Handshake     Handshake `json:"handshake,omitzero"`
	Recorder      string    `json:"recorder,omitempty"` // the program and version that recorded it
	// RecorderProcess is the process that recorded it, so that a session
	// with no end can be told still recording (EndState). Older cassettes'
	// sessions have none.
	RecorderProcess *RecorderProcess `json:"recorder_process,omitempty"`
	// Priming keeps the priming events of SSE streams that ended with no
	// recorded frame after them (a GET stream that carried nothing else),
	// which no HTTPMeta.Priming holds.
	Priming []StreamPriming `json:"priming,omitempty"`
	// Bare keeps the HTTP requests of the session that carried no message
	// either way (a DELETE, a GET refused with 405, a GET stream that
	// ended with nothing), which no Message holds: the first MaxBare of
	// them; BareOmitted counts the rest.
	Bare        []BareExchange `json:"bare,omitempty"`
	BareOmitted int            `json:"bare_omitted,omitempty"`
}

// MaxBare bounds SessionInfo.Bare: the info is written whole at each
// change, and a client that polls a refused GET must not grow it for ever.
const MaxBare = 100

// BareExchange is one HTTP request and its answer, neither of which
// carried a message.
//
// A note may span lines (the start of a refusal's HTML page): output that
// gives each message, exchange or finding one line prints OneLine(note).
type BareExchange struct {
	Time time.Time `json:"time"` // when mcpspy had read the request
	// HTTP is as for a message: method, path, status, headers after
	// redaction, stream and stream id.
	HTTP HTTPMeta `json:"http"`
	Note string   `json:"note,omitempty"`
}

// AddBare keeps b in Bare, or counts it in BareOmitted past MaxBare.
func (s *SessionInfo) AddBare(b BareExchange) {
	if len(s.Bare) >= MaxBare {
		s.BareOmitted++
		return
	}
	s.Bare = append(s.Bare, b)
}

// fillGaps gives an info that lacks them what every listing shows of a
// session: TransportUnknown for no transport, and for no start the time
// of its first message (firstTime; zero when it has none), which is when
// it was under way at the latest. Only an info nobody recorded lacks them:
// a JSONL header written by hand ({"info":{}}), or a cassette an older
// mcpspy imported one into. Every reader of an info calls it, so that ls,
// show, the inspector and a HAR say the same, an export writes both, and
// the sessions sort by the start they show.
func (s *SessionInfo) fillGaps(firstTime func() time.Time) {
	if s.Transport == "" {
		s.Transport = TransportUnknown
	}
	if s.Start.IsZero() {
		s.Start = firstTime()
	}
}

// Named says whether a user's --session value names this session: its id
// ("s3") or the name it was recorded with. Names may repeat; ids do not.
func (s SessionInfo) Named(n string) bool { return s.ID == n || s.Name == n }

// IsHTTP says whether a session travelled over HTTP as MCP messages
// (Streamable HTTP or legacy HTTP+SSE), which a HAR can show.
func (s SessionInfo) IsHTTP() bool {
	return s.Transport == TransportHTTP || s.Transport == TransportLegacySSE
}

// StreamPriming is the priming events (SSE events with an id and no data)
// that ended one stream: no message followed them on it.
type StreamPriming struct {
	Stream   string   `json:"stream"` // as in HTTPMeta.Stream
	StreamID uint64   `json:"stream_id,omitempty"`
	Path     string   `json:"path,omitempty"`
	EventIDs []string `json:"event_ids"`
	Retry    string   `json:"retry,omitempty"`
}

// End reasons.
const (
	EndEOF    = "eof"    // the client closed its side
	EndExit   = "exit"   // the server process exited (see ExitCode)
	EndSignal = "signal" // the server process died of a signal, or mcpspy was signalled
	EndError  = "error"  // a transport error (see Error)
	EndClosed = "closed" // an HTTP session was deleted or a WebSocket closed (see CloseCode)
)

// EndInfo says how a session ended.
type EndInfo struct {
	Time      time.Time `json:"time"`
	Reason    string    `json:"reason"`
	ExitCode  *int      `json:"exit_code,omitempty"`
	Signal    string    `json:"signal,omitempty"`
	CloseCode int       `json:"close_code,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// Short is the end in a few characters, for listings: the reason and,
// in parentheses, its exit code, signal or close code ("exit(1)",
// "signal(SIGTERM)", "closed(1000)"); StateNoEnd for none. A listing
// shows SessionInfo.EndState, which tells a session still recording from
// one whose recorder died.
func (e *EndInfo) Short() string {
	switch {
	case e == nil:
		return StateNoEnd
	case e.ExitCode != nil && e.Signal == "":
		return fmt.Sprintf("%s(%d)", e.Reason, *e.ExitCode)
	case e.Signal != "":
		return e.Reason + "(" + e.Signal + ")"
	case e.CloseCode != 0:
		return fmt.Sprintf("%s(%d)", e.Reason, e.CloseCode)
	}
	return e.Reason
}

// Handshake is what the session's opening exchange told: the initialize
// request and result (handshake era), or server/discover (2026-07-28).
type Handshake struct {
	Method          string          `json:"method,omitempty"` // "initialize" or "server/discover"
	ProtocolVersion string          `json:"protocol_version,omitempty"`
	ClientInfo      json.RawMessage `json:"client_info,omitempty"`
	ServerInfo      json.RawMessage `json:"server_info,omitempty"`
	// Capabilities is what the server declared in its initialize (or
	// server/discover) result, so that a cassette whose handshake was cut
	// out (a filtered export) can still introduce itself on replay.
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	// Instructions is the server's instructions for the model, if it
	// gave any, kept for the same reason.
	Instructions string `json:"instructions,omitempty"`

	// discoverAsked is the version a server/discover's _meta asked for,
	// while its answer is awaited (ObserveHandshake); not kept.
	discoverAsked string
}

// OneLine is a note on one line: each run of white space, newlines too,
// one space, so that line-oriented output (show, lint) stays one line per
// item whatever a refusal's body held.
func OneLine(note string) string { return strings.Join(strings.Fields(note), " ") }
