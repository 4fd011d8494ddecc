package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Server.
type Options struct {
	// Match is the matching mode: "default" (or ""), "strict",
	// "ignore-params" or "ignore-params=METHOD[,METHOD...]". See
	// docs/REPLAY.md. It applies to cassettes: another mode than the
	// default with no cassette among the sources (nor a fallback) fails
	// NewServer, as do Timing "recorded" and a MatchFunc.
	Match string
	// Timing is "none" (or ""): answer at once, or "recorded": wait as long
	// as the recorded server did before each progress step and answer.
	Timing string
	// Log receives warnings (unmatched requests, protocol version
	// mismatches, unanswered server→client requests). nil: discarded.
	Log io.Writer
	// CallTimeout bounds the wait for the client's reply to a
	// server→client request (roots/list, sampling). Default 10 s.
	CallTimeout time.Duration
	// SessionIdle ends an HTTP session (Mcp-Session-Id, or one
	// client's sessionless requests) nobody has used for this long;
	// its id then gets 404. 0: 30 minutes; negative: never.
	SessionIdle time.Duration
	// AllowedOrigins are Origin values accepted over HTTP besides loopback
	// ones ("http://localhost:3000"); "*" accepts any.
	AllowedOrigins []string
	// HTTPSessions is whether initialize over Streamable HTTP gets an
	// Mcp-Session-Id: "auto" (or "") as a source says (a script's
	// server.sessions) or the recordings show (none from a server that
	// gave none); "on"; "off": a server without sessions, whose GET and
	// DELETE get 405. See docs/REPLAY.md.
	HTTPSessions string
	// Journal, if set, is called with every request and notification a
	// client sends, as it arrives, before it is answered; each session's
	// in the order sent. It may be called from many goroutines at once.
	Journal func(Received)
	// MatchFunc, if set, lets a recorded request answer a live one the
	// normal match found no answer for: see MatchFunc for when it is
	// asked, about what, and in what order.
	MatchFunc MatchFunc
}

// Server is a fake MCP server answering from its Sources. One Server can
// serve any number of client sessions over any mix of transports.
type Server struct {
	sources []Source
	params  paramHeaders // per tool, for the Mcp-Param-* check
	habits  httpHabits   // the recorded servers', over every source
	opts    Options
	match   matcher

	logMu sync.Mutex
	// setLevelWarned: an unrecorded logging/setLevel was answered (said
	// once per run).
	setLevelWarned atomic.Bool
	// wrongPathWarned: a request came to a path or method no endpoint
	// takes (said once: a browser or scanner may send many).
	wrongPathWarned atomic.Bool
	// subscribeWarned: the same for resources/subscribe and unsubscribe
	// (answerSubscribe).
	subscribeWarned atomic.Bool

	sessions atomic.Int64 // sessions started, for Received.Session
	// eras is the set of protocol eras live sessions spoke (eras.go),
	// for what Report leaves out of Unused.
	eras atomic.Uint32

	mu          sync.Mutex
	matched     int
	unmatched   []Unmatched
	skipped     []Skipped
	undelivered []Undelivered
	interrupted []Interrupted
	losses      map[lossKey]*heldLoss // what stderr has yet to say (losses.go)

	http httpState
	ws   wsState
}

// Unmatched is one request nothing answered.
type Unmatched struct {
	Method string `json:"method"`
	// Params is the request's params in canonical form (keys sorted,
	// volatile members left out), shortened when long.
	Params string `json:"params,omitempty"`
	// Nearest names the recorded request most like it, as Report.Unused
	// names one ("SOURCE SESSION#SEQ METHOD PARAMS"); "" when no source
	// knows the method, or when a source took the request (Why).
	Nearest string `json:"nearest,omitempty"`
	// Diff says how the request differs from Nearest, a line per member
	// that differs: `- params.arguments.city="Oslo"` as recorded,
	// `+ params.arguments.city="Bergen"` as sent.
	Diff string `json:"diff,omitempty"`
	// Why says why a source that took the request had no answer for it
	// (Reply.Unmatched), as its reply told the client, shortened: a
	// script's tool none of whose answers matches the arguments, a
	// tool the script does not have, or a call that names none. "" for
	// a request no source took.
	Why string `json:"why,omitempty"`
}

// Skipped is a server→client request a source had for the client that
// was not sent, because the client could not take it: a 2026-07-28
// client takes none, and a handshake-era one only those its initialize
// declared a capability for (roots/list needs roots).
type Skipped struct {
	Method string `json:"method"`
	Params string `json:"params,omitempty"`
	// When says where it would have gone: "during tools/call" (a
	// request in flight) or "after tools/call" (outside any).
	When string `json:"when"`
	Why  string `json:"why"`
	// Count is how often it was left out; the warning comes once.
	Count int `json:"count"`
}

// Undelivered counts the messages of one method a session had for its
// client that never went out: over Streamable HTTP those that waited for
// a GET stream the client never opened (the go-sdk client with
// DisableStandaloneSSE) or had left; in 2026-07-28 over HTTP those that
// waited for a subscriptions/listen stream; over legacy SSE and WebSocket
// those still queued, or failing to be written, when the connection
// closed. Method is "(response)" or "(error)" for an answer.
type Undelivered struct {
	Method string `json:"method"`
	Count  int    `json:"count"`
}

// Interrupted is one request whose answer was still to come when its
// session ended or its client closed its end of it (stdin, the
// WebSocket, the legacy SSE stream), and that was given up
// unanswered: an answer's delay, its recorded timing or progress steps
// still running, or a server→client request still awaiting the client's
// reply. A call whose answer is to hang (a script's fault: hang, a
// recording without its answer) is not interrupted: it got what it was
// to get.
type Interrupted struct {
	Method string `json:"method"`
	// Params is as Unmatched.Params; of a request with long params,
	// only what it kept as it waited (its _meta).
	Params string `json:"params,omitempty"`
	// Why: "the client closed stdin while it waited", "the client
	// closed the WebSocket while it waited", "the client closed its SSE
	// stream while it waited", or "the session ended while it waited"
	// (SIGTERM, a fault: close, or the client ended an HTTP session).
	Why string `json:"why"`
}

// Report says how a replay went: for --report and --strict.
type Report struct {
	Matched   int         `json:"matched"`
	Unmatched []Unmatched `json:"unmatched"`
	// Unused lists recorded requests no session asked for, as
	// "SOURCE SESSION#SEQ METHOD PARAMS".
	Unused []string `json:"unused"`
	// LeftOut lists recorded requests no session asked for that Unused
	// leaves out because no live session could have: only a client of
	// the other protocol era sends them (subscriptions/listen, when every
	// live session spoke the handshake era; initialize, when every one
	// spoke 2026-07-28). They fail no --strict.
	LeftOut []LeftOut `json:"left_out,omitempty"`
	// Skipped lists server→client requests not sent (a 2026-07-28
	// client takes none; others only what they declared a capability
	// for), each once. They fail no --strict: the client did nothing
	// wrong, and a server would not have asked it.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Undelivered lists, per method, what the server had for clients
	// that never reached them (see Undelivered). They fail no --strict:
	// a client need not listen, nor stay to the end.
	Undelivered []Undelivered `json:"undelivered,omitempty"`
	// Interrupted lists requests given up unanswered when mcpmock
	// stopped or the client left (see Interrupted); they are
	// not counted in Matched. They fail --strict: the host never got
	// the answer its test was to see.
	Interrupted []Interrupted `json:"interrupted,omitempty"`
}

// Clean says whether everything asked was answered and everything recorded
// was asked: what --strict demands.
func (r Report) Clean() bool {
	return len(r.Unmatched) == 0 && len(r.Unused) == 0 && len(r.Interrupted) == 0
}

// ErrNoSources is returned by NewServer without sources.
var ErrNoSources = errors.New("no sources to answer from")

// NewServer makes a server answering from sources, the first that answers
// winning.
func NewServer(sources []Source, opts Options) (*Server, error) {
	if len(sources) == 0 {
		return nil, ErrNoSources
	}
	m, err := parseMatch(opts.Match)
	if err != nil {
		return nil, err
	}
	switch opts.Timing {
	case "", "none":
	case "recorded":
		m.timing = true
	default:
		return nil, fmt.Errorf("unknown timing %q (want none or recorded)", opts.Timing)
	}
	switch opts.HTTPSessions {
	case "", "auto", "on", "off":
	default:
		return nil, fmt.Errorf("unknown HTTP sessions %q (want auto, on or off)", opts.HTTPSessions)
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 10 * time.Second
	}
	s := &Server{sources: sources, opts: opts}
	m.fn, m.warnf = opts.MatchFunc, s.warnf
	s.match = m
	for i, src := range sources {
		if src == nil {
			return nil, fmt.Errorf("source %d is nil", i)
		}
		if c, ok := src.(interface{ setMatch(matcher) }); ok {
			c.setMatch(m)
		}
	}
	if err := m.checkIgnored(opts.Match, sources, s.warnf); err != nil {
		return nil, err
	}
	if err := checkApplies(opts, sources); err != nil {
		return nil, err
	}
	for _, src := range sources {
		if c, ok := src.(interface{ httpHabits() httpHabits }); ok {
			s.habits.add(c.httpHabits())
		}
	}
	return s, nil
}

// Report returns what happened so far.
func (s *Server) Report() Report {
	s.mu.Lock()
	r := Report{Matched: s.matched, Unmatched: append([]Unmatched{}, s.unmatched...), Skipped: slices.Clone(s.skipped), Undelivered: slices.Clone(s.undelivered), Interrupted: slices.Clone(s.interrupted)}
	s.mu.Unlock()
	r.Unused = []string{}
	live := eras(s.eras.Load())
	for _, src := range s.sources {
		if e, ok := src.(eraUnused); ok {
			unused, left := e.unusedIn(live)
			r.Unused = append(r.Unused, unused...)
			r.LeftOut = append(r.LeftOut, left...)
			continue
		}
		r.Unused = append(r.Unused, src.Unused()...)
	}
	return r
}

// ResetReport starts the report afresh, as if no client had talked yet:
// nothing matched or unmatched, every recorded request unused again.
// Between the tests of a suite that shares one server (started in
// TestMain), each test's Report then tells of its own requests alone.
// It changes no answer: sessions still open keep their place in their
// recordings, and a new session starts from the first, as always. Call
// it while no client is talking; a request answered meanwhile may be
// counted on either side of it.
func (s *Server) ResetReport() {
	s.mu.Lock()
	s.matched, s.unmatched, s.skipped, s.undelivered, s.interrupted = 0, nil, nil, nil, nil
	s.mu.Unlock()
	s.eras.Store(0)
	for _, src := range s.sources {
		if u, ok := src.(interface{ resetUsage() }); ok {
			u.resetUsage()
		}
	}
}

func (s *Server) countMatched() {
	s.mu.Lock()
	s.matched++
	s.mu.Unlock()
}

func (s *Server) addUnmatched(u Unmatched) {
	s.mu.Lock()
	s.unmatched = append(s.unmatched, u)
	s.mu.Unlock()
}

// skip counts a server→client request not sent to a client that could
// not take it, why says so for the report, and warns (saying because)
// the first time: a client that polls a call whose recording asked
// something would otherwise fill the log.
func (s *Server) skip(method string, params json.RawMessage, when, why, because string) {
	k := Skipped{Method: method, Params: shortCanon(method, params), When: when, Why: why}
	s.mu.Lock()
	i := slices.IndexFunc(s.skipped, func(x Skipped) bool { x.Count = 0; return x == k })
	if i < 0 {
		i = len(s.skipped)
		s.skipped = append(s.skipped, k)
	}
	s.skipped[i].Count++
	first := s.skipped[i].Count == 1
	s.mu.Unlock()
	if first {
		s.warnf("%s not sent to the client %s: %s", method, when, because)
	}
}

// warnf writes one warning line to Options.Log.
func (s *Server) warnf(format string, a ...any) {
	if s.opts.Log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.opts.Log, "mcpmock: "+format+"\n", a...)
}

// Messages the engine writes. They are built by hand: answering is the hot
// path, and the recorded result is copied in as it is.

func appendID(b []byte, id json.RawMessage) []byte {
	if len(id) == 0 {
		return append(b, "null"...)
	}
	return append(b, id...)
}

func resultMessage(id, result json.RawMessage) []byte {
	result = oneLine(result)
	if len(result) == 0 {
		result = json.RawMessage("{}")
	}
	b := make([]byte, 0, len(result)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, id)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

func errorMessage(id json.RawMessage, e *RPCError) []byte {
	eb, err := json.Marshal(struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{e.Code, e.Message, oneLine(e.Data)})
	if err != nil { // Data was not JSON
		eb, _ = json.Marshal(RPCError{Code: e.Code, Message: e.Message})
	}
	b := make([]byte, 0, len(eb)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, id)
	b = append(b, `,"error":`...)
	b = append(b, eb...)
	return append(b, '}')
}

func notificationMessage(method string, params json.RawMessage) []byte {
	mb, _ := json.Marshal(method)
	b := append([]byte(`{"jsonrpc":"2.0","method":`), mb...)
	if p := oneLine(params); len(p) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, p...)
	}
	return append(b, '}')
}

func requestMessage(id int64, method string, params json.RawMessage) []byte {
	mb, _ := json.Marshal(method)
	b := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":`, id)
	b = append(b, mb...)
	if p := oneLine(params); len(p) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, p...)
	}
	return append(b, '}')
}

// oneLine makes a JSON value fit one stdio line (a recording made over HTTP
// may hold pretty-printed bodies). Values that are not JSON become null, so
// a bad source cannot break the framing.
func oneLine(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return v
	}
	clean := true
	for _, c := range v {
		if c == '\n' || c == '\r' {
			clean = false
			break
		}
	}
	if clean {
		return v
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return json.RawMessage("null")
	}
	return buf.Bytes()
}
