package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/shellword"
	"github.com/mcptape/mcptape/store"
)

// One recorded client message as a shell command that sends it again,
// what browser devtools and mitmproxy call "copy as cURL": curl for the
// HTTP transports, a printf piped into the server's command for stdio.
// The frame goes out byte for byte; nothing here re-encodes it.

// Sentinels of Resend.Command; the errors that wrap them name the message.
var (
	// ErrNotSendable is for a message a client does not send on its own:
	// anything from the server, a client's response, a malformed frame.
	ErrNotSendable = errors.New("only client requests and notifications can be sent again")
	// ErrNoShellForm is for a transport no one-line command speaks.
	ErrNoShellForm = errors.New("no one-line shell command can send it")
)

// Resend is a recorded message and what its session tells about sending
// it again.
type Resend struct {
	Info store.SessionInfo
	Msg  *store.Message
	// Initialize and Initialized are the frames of the session's first
	// initialize request and notifications/initialized, nil when the
	// cassette holds none. A stdio server reads them before Msg: a new
	// process knows nothing of the recorded handshake.
	Initialize, Initialized []byte
}

// initializedFrame stands in for a notifications/initialized the
// cassette lacks: a handshake-era server waits for it.
const initializedFrame = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// ShellCommand is a command line and what must be done before running it.
type ShellCommand struct {
	// Line is the command, on one line unless the frame holds line breaks.
	Line string
	// Notes say what to do first (a [redacted] value to fill in) or what
	// to expect.
	Notes []string
}

// String is the command with its notes in a comment at its end: pasted
// into a shell, it waits for Enter, and reads the notes as a comment.
func (c ShellCommand) String() string {
	if len(c.Notes) == 0 {
		return c.Line
	}
	return c.Line + "  # " + strings.Join(c.Notes, "; ")
}

// Command returns the shell command that sends r.Msg again. The
// message's own bytes go out unchanged.
func (r Resend) Command() (ShellCommand, error) {
	ref := fmt.Sprintf("%s #%d", r.Msg.Session, r.Msg.Seq)
	if r.Msg.Dir != store.C2S {
		return ShellCommand{}, fmt.Errorf("%s came from the server: %w", ref, ErrNotSendable)
	}
	sum := jsonrpc.Classify(r.Msg.Frame)
	switch sum.Kind {
	case jsonrpc.Request, jsonrpc.Notification:
	case jsonrpc.Batch:
		if !batchOfCalls(r.Msg.Frame) {
			return ShellCommand{}, fmt.Errorf("%s is a batch holding responses: %w", ref, ErrNotSendable)
		}
	case jsonrpc.Malformed:
		return ShellCommand{}, fmt.Errorf("%s is not a JSON-RPC message (%s): %w", ref, sum.Reason, ErrNotSendable)
	default:
		return ShellCommand{}, fmt.Errorf("%s is the client's %s to a server request: %w", ref, sum.Kind, ErrNotSendable)
	}
	switch r.Info.Transport {
	case store.TransportHTTP, store.TransportLegacySSE:
		return r.curl(ref)
	case store.TransportStdio:
		return r.pipe(ref, sum.Method)
	case store.TransportWebSocket:
		return ShellCommand{}, fmt.Errorf("%s went over WebSocket, and %w; mcpspy rerun --session %s CASSETTE --upstream %s sends the session's client side again",
			ref, ErrNoShellForm, r.Info.ID, r.Info.Upstream)
	}
	return ShellCommand{}, fmt.Errorf("%s: its session's transport %q is not one mcpspy records, and %w", ref, r.Info.Transport, ErrNoShellForm)
}

// batchOfCalls says whether every member of a batch is a request or a
// notification: a client's batch may also carry its responses.
func batchOfCalls(frame []byte) bool {
	var calls []struct {
		Method *string `json:"method"`
	}
	if json.Unmarshal(frame, &calls) != nil || len(calls) == 0 {
		return false
	}
	for _, c := range calls {
		if c.Method == nil {
			return false
		}
	}
	return true
}

// leftOutHeaders are the recorded request headers a resent request does
// not repeat: hop-by-hop ones, those curl sets from what it sends (the
// frame is stored decoded, so no Content-Encoding either), Content-Type
// and Accept, which the command sets itself, and what a browser or
// runtime adds about itself.
var leftOutHeaders = []string{
	"Accept", "Accept-Encoding", "Accept-Language", "Connection", "Content-Encoding",
	"Content-Length", "Content-Type", "Expect", "Host", "Keep-Alive", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "User-Agent",
}

// curl builds the curl command for a message POSTed over HTTP.
func (r Resend) curl(ref string) (ShellCommand, error) {
	origin, path, err := upstreamOrigin(r.Info.Upstream)
	if err != nil {
		return ShellCommand{}, fmt.Errorf("%s: %w", ref, err)
	}
	method := http.MethodPost
	var header http.Header
	if h := r.Msg.HTTP; h != nil {
		if h.Path != "" {
			path = h.Path
		}
		if h.Method != "" {
			method = h.Method
		}
		header = h.RequestHeader
	}
	url := origin + path
	var fill []string
	var b strings.Builder
	b.WriteString("curl -sS -N ")
	if strings.ContainsAny(url, "[]{}") {
		b.WriteString("-g ") // curl would take [redacted] for a glob range
	}
	fmt.Fprintf(&b, "-X %s %s -H %s -H %s", shellword.Word(method), shellword.Quote(url),
		shellword.Quote("Content-Type: application/json"), shellword.Quote("Accept: application/json, text/event-stream"))
	if strings.Contains(url, store.Redacted) {
		fill = append(fill, "the URL")
	}
	names := make([]string, 0, len(header))
	for name := range header {
		if !slices.ContainsFunc(leftOutHeaders, func(s string) bool { return strings.EqualFold(s, name) }) &&
			!strings.HasPrefix(http.CanonicalHeaderKey(name), "Sec-Fetch-") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		redacted := false
		for _, v := range header[name] {
			if v == "" {
				fmt.Fprintf(&b, " -H %s", shellword.Quote(name+";")) // "Name:" would tell curl to leave it out
			} else {
				fmt.Fprintf(&b, " -H %s", shellword.Quote(name+": "+v))
			}
			redacted = redacted || strings.Contains(v, store.Redacted)
		}
		if redacted {
			fill = append(fill, "the "+name+" header")
		}
	}
	fmt.Fprintf(&b, " --data-raw %s", shellword.Quote(string(r.Msg.Frame)))
	if err := noNUL(ref, b.String()); err != nil {
		return ShellCommand{}, err
	}
	if bytes.Contains(r.Msg.Frame, []byte(`"`+store.Redacted+`"`)) {
		fill = append(fill, "the message")
	}
	var notes []string
	if len(fill) > 0 {
		notes = append(notes, "fill in each "+store.Redacted+" first: "+strings.Join(fill, ", "))
	}
	if r.Info.Transport == store.TransportLegacySSE {
		notes = append(notes, "legacy HTTP+SSE: the answer comes on the session's SSE stream, not in this response")
	}
	return ShellCommand{Line: b.String(), Notes: notes}, nil
}

// upstreamOrigin splits an HTTP session's upstream URL into its origin
// (scheme, user info, host: a redacted password stays for the user to
// fill in) and its path and query.
func upstreamOrigin(upstream string) (origin, path string, err error) {
	u, ok := store.ParseUpstream(upstream)
	if !ok || !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
		return "", "", fmt.Errorf("its session's upstream %q is not an http(s) URL", upstream)
	}
	if u.Authority == "" {
		return "", "", fmt.Errorf("its session's upstream %q names no host", upstream)
	}
	path = u.Path
	if path == "" || path[0] == '?' {
		path = "/" + path
	}
	return u.Scheme + "://" + u.Authority, path, nil
}

// pipe builds the stdio form: the frames the server must read, one a
// line, piped into its recorded command line.
func (r Resend) pipe(ref, method string) (ShellCommand, error) {
	words := strings.Fields(r.Info.Upstream)
	if len(words) == 0 {
		return ShellCommand{}, fmt.Errorf("%s: its session records no server command line", ref)
	}
	var notes []string
	initialize := r.Initialize
	if initialize == nil && r.Info.Handshake.Method == "initialize" {
		// A filtered export keeps the handshake's gist, not its request.
		initialize = rebuiltInitialize(r.Info.Handshake)
		notes = append(notes, "initialize rebuilt from the session info: the cassette lacks the request")
	}
	var frames [][]byte
	switch {
	case initialize == nil || method == "initialize":
		// 2026-07-28 needs no handshake; an initialize needs nothing before it.
	case method == "notifications/initialized":
		frames = append(frames, initialize)
	default:
		initialized := r.Initialized
		if initialized == nil {
			initialized = []byte(initializedFrame)
		}
		frames = append(frames, initialize, initialized)
	}
	frames = append(frames, r.Msg.Frame)
	for _, f := range frames {
		if bytes.IndexByte(f, '\n') >= 0 {
			// A pretty-printed frame from a hand-edited JSONL export: stdio
			// would read each of its lines as a message.
			return ShellCommand{}, fmt.Errorf("%s: a frame to send holds a line break, which a stdio server would read as the end of a message", ref)
		}
	}
	var b strings.Builder
	b.WriteString(`printf '%s\n'`)
	for _, f := range frames {
		b.WriteByte(' ')
		b.WriteString(shellword.Quote(string(f)))
	}
	b.WriteString(" |")
	for _, w := range words {
		b.WriteByte(' ')
		b.WriteString(shellword.Word(w))
	}
	if err := noNUL(ref, b.String()); err != nil {
		return ShellCommand{}, err
	}
	var fill []string
	if strings.Contains(r.Info.Upstream, store.Redacted) {
		fill = append(fill, "the server command line")
	}
	for _, f := range frames {
		if bytes.Contains(f, []byte(`"`+store.Redacted+`"`)) {
			fill = append(fill, "the messages")
			break
		}
	}
	if len(fill) > 0 {
		notes = append([]string{"fill in each " + store.Redacted + " first: " + strings.Join(fill, ", ")}, notes...)
	}
	return ShellCommand{Line: b.String(), Notes: notes}, nil
}

// rebuiltInitialize is an initialize request made of what the session
// info kept of the recorded one. Its id is a string no recorded client
// numbering is likely to reuse.
func rebuiltInitialize(h store.Handshake) []byte {
	clientInfo := h.ClientInfo
	if len(clientInfo) == 0 {
		clientInfo = json.RawMessage(`{"name":"mcpspy","version":"0"}`)
	}
	var compact bytes.Buffer
	if json.Compact(&compact, clientInfo) == nil {
		clientInfo = compact.Bytes()
	}
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", "mcpspy-init", "initialize", struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    struct{}        `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}{h.ProtocolVersion, struct{}{}, clientInfo}})
	return b
}

func noNUL(ref, cmd string) error {
	if strings.IndexByte(cmd, 0) >= 0 {
		return fmt.Errorf("%s holds a NUL byte, which no shell argument can carry", ref)
	}
	return nil
}

// ResendCommand returns the shell command that sends the message with
// stable index idx again (Resend.Command), reading what it needs of the
// message's session from src.
func (m *Model) ResendCommand(idx int, src Source) (ShellCommand, error) {
	r, ok := m.ByIndex(idx)
	if !ok {
		return ShellCommand{}, fmt.Errorf("no message with index %d", idx)
	}
	msg, err := src.Message(r.Ref)
	if err != nil {
		return ShellCommand{}, err
	}
	rs := resender{m: m, src: src}
	res, err := rs.resend(r, msg)
	if err != nil {
		return ShellCommand{}, err
	}
	return res.Command()
}

// resendable says, from its summary alone, whether r may be a message
// Resend.Command accepts: WriteText reads no other frame.
func (r Row) resendable() bool {
	return r.Dir == store.C2S && (r.Kind == jsonrpc.Request || r.Kind == jsonrpc.Notification || r.Kind == jsonrpc.Batch)
}

// resender builds the commands for a model's messages, reading each stdio
// session's handshake frames once.
type resender struct {
	m         *Model
	src       Source
	handshake map[uint32][2][]byte
}

// resend gathers what sending r (whose message is msg) again needs; its
// error is from reading the cassette, never about the message.
func (rs *resender) resend(r Row, msg *store.Message) (Resend, error) {
	sess := rs.m.rows[r.Index].sess
	res := Resend{Info: rs.m.Sessions[sess].Info, Msg: msg}
	if res.Info.Transport == store.TransportStdio && r.resendable() {
		hs, err := rs.handshakeOf(sess)
		if err != nil {
			return res, err
		}
		res.Initialize, res.Initialized = hs[0], hs[1]
	}
	return res, nil
}

// handshakeOf returns the frames of a session's first initialize request
// and notifications/initialized (nil for each it lacks).
func (rs *resender) handshakeOf(sess uint32) ([2][]byte, error) {
	if hs, ok := rs.handshake[sess]; ok {
		return hs, nil
	}
	m := rs.m
	found := [2]int32{-1, -1}
	for _, i := range m.sessRows[sess] {
		r := &m.rows[i]
		switch {
		case r.dir != store.C2S:
		case found[0] < 0 && r.kind == jsonrpc.Request && m.strs[r.method] == "initialize":
			found[0] = i
		case found[1] < 0 && r.kind == jsonrpc.Notification && m.strs[r.method] == "notifications/initialized":
			found[1] = i
		}
		if found[0] >= 0 && found[1] >= 0 {
			break
		}
	}
	var hs [2][]byte
	for k, i := range found {
		if i < 0 {
			continue
		}
		msg, err := rs.src.Message(m.row(int(i)).Ref)
		if err != nil {
			return hs, err
		}
		hs[k] = msg.Frame
	}
	if rs.handshake == nil {
		rs.handshake = map[uint32][2][]byte{}
	}
	rs.handshake[sess] = hs
	return hs, nil
}
