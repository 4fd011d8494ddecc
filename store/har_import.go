package store

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/jsonerr"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/sse"
	"github.com/mcptape/mcptape/internal/utf8bom"
)

// HAR import (mcpspy import FILE.har, and any command that reads a .har): the MCP traffic of an HTTP Archive
// (a browser's Network → Save all as HAR, a proxy's capture, or mcpspy
// export --har) as the HTTP recorder would have recorded it: one session
// per Mcp-Session-Id (per legacy SSE connection, per connection for
// sessionless traffic), each POST body and each SSE event with data a
// message with its HTTP metadata, headers and query redacted as the proxy
// redacts them. What a HAR does not hold is approximated: an SSE
// response's events are spread evenly over its receive time (a HAR keeps
// the stream's text, not when each event came), and the order of
// messages is the order of those times.

// HARImport is what ImportHAR found.
type HARImport struct {
	Sessions []TapeSession
	// Skipped counts the entries that carried no MCP traffic (a page, a
	// script, OAuth metadata): no JSON-RPC message either way, no MCP
	// header, no legacy SSE endpoint.
	Skipped int
	// EmptyStreams counts the event-stream answers of MCP entries that
	// hold no text (a stream still open when the HAR was saved, or one
	// whose body the browser left out), whose messages are not in it.
	EmptyStreams int
	// EmptyWebSockets counts the WebSocket connections the HAR holds no
	// frames of (Chrome keeps them in _webSocketMessages; not every HAR
	// writer saves them), which are left out.
	EmptyWebSockets int
}

// HARImportOptions say what to hide. A nil Redact hides nothing in
// headers, queries and URLs (--no-redact, or a HAR only read, never
// written); Rewrite, when set, blanks what it must in each message
// (mcpspy import's --redact, --redact-value).
type HARImportOptions struct {
	Redact  HARRedactor
	Rewrite func(*Message) *Message
	// Files is where the bodies a HAR keeps in files of their own are
	// read: the HAR's directory. Playwright's recordHar with content
	// "attach" writes each body to a file beside the HAR and names it in
	// _file. Nil reads none: a HAR that names one is refused.
	Files fs.FS
}

// HARRedactor hides secrets in what a HAR's requests carry besides their
// bodies, as the recorder's HTTPRedactor does.
type HARRedactor interface {
	Header(http.Header) http.Header
	PathQuery(*url.URL) string
	URL(*url.URL) string
}

// plainHAR keeps everything as the HAR has it.
type plainHAR struct{}

func (plainHAR) Header(h http.Header) http.Header { return h.Clone() }

func (plainHAR) PathQuery(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

func (plainHAR) URL(u *url.URL) string { return u.String() }

// harIn is the part of a HAR 1.2 document the import reads.
type harIn struct {
	Log *struct {
		Creator struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"creator"`
		Entries []harInEntry `json:"entries"`
		Pages   []struct {
			// MCPTape is what mcpspy export --har adds to a session's
			// page: how the session ended, among others.
			MCPTape *struct {
				Session  string `json:"session"`
				Name     string `json:"name"`
				End      string `json:"end"`
				Start    string `json:"start"`
				EndTime  string `json:"end_time"`
				EndError string `json:"end_error"`
			} `json:"_mcptape"`
		} `json:"pages"`
	} `json:"log"`
}

type harInEntry struct {
	StartedDateTime string `json:"startedDateTime"`
	// Time is the whole exchange, every timing summed: what came before
	// the answer began is Time less Receive, however a writer counts
	// blocked, dns, connect and ssl (Playwright sums ssl apart from
	// connect, which HAR 1.2 counts it in).
	Time       float64 `json:"time"`
	Connection string  `json:"connection"`
	Request    struct {
		Method   string    `json:"method"`
		URL      string    `json:"url"`
		Headers  []harInNV `json:"headers"`
		PostData *struct {
			Text string `json:"text"`
			File string `json:"_file"`
		} `json:"postData"`
	} `json:"request"`
	Response struct {
		Status  int       `json:"status"`
		Headers []harInNV `json:"headers"`
		Content struct {
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			Encoding string `json:"encoding"`
			File     string `json:"_file"`
		} `json:"content"`
	} `json:"response"`
	Timings struct {
		Send    float64 `json:"send"`
		Wait    float64 `json:"wait"`
		Receive float64 `json:"receive"`
	} `json:"timings"`
	// EventSourceMessages are when Chrome's DevTools saw each event of an
	// event stream, by its id, and, unless the HAR was sanitized, its
	// data: all a HAR holds of a stream still open when it was saved.
	EventSourceMessages []struct {
		Time      float64 `json:"time"` // seconds since the epoch
		EventName string  `json:"eventName"`
		EventID   string  `json:"eventId"`
		Data      *string `json:"data"`
	} `json:"_eventSourceMessages"`
	// WebSocketMessages are a WebSocket connection's frames, as Chrome
	// saves them (and mcpspy export --har).
	WebSocketMessages []struct {
		Type   string  `json:"type"` // send, receive
		Time   float64 `json:"time"` // seconds since the epoch
		Opcode int     `json:"opcode"`
		Data   string  `json:"data"`
	} `json:"_webSocketMessages"`
	// Comment, in mcpspy's export, holds the note of an answer that
	// carried no message (harCommentNote).
	Comment string `json:"comment"`
	// MCPTape is what mcpspy export --har adds: the session the entry
	// came from, which keeps sessions apart as they were recorded.
	MCPTape *struct {
		Session       string   `json:"session"`
		StreamID      uint64   `json:"stream_id"`
		MessageSeqs   []uint64 `json:"message_seqs"`
		RequestSeq    uint64   `json:"request_seq"`
		ResponseSeqs  []uint64 `json:"response_seqs"`
		RequestTime   string   `json:"request_time"`
		ResponseTimes []string `json:"response_times"`
	} `json:"_mcptape"`
}

type harInNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// harHeader makes an http.Header of a HAR's list, leaving out HTTP/2's
// pseudo-headers (":authority"), which browsers list among the headers.
func harHeader(nvs []harInNV) http.Header {
	h := http.Header{}
	for _, nv := range nvs {
		if strings.HasPrefix(nv.Name, ":") {
			continue
		}
		h.Add(nv.Name, nv.Value)
	}
	return h
}

// harExchangeIn is one MCP entry, read.
type harExchangeIn struct {
	n       int // its index among the entries, for errors and order
	start   time.Time
	wait    time.Duration // to the first byte of the answer
	receive time.Duration // from it to the last
	method  string
	url     *url.URL
	reqHdr  http.Header
	respHdr http.Header
	status  int
	body    []byte // the request body
	answer  []byte // the response body
	isSSE   bool
	events  []sse.Event // of an SSE answer, with or without data
	// eventTimes are when DevTools saw each event, by id; eventTimesAt
	// by place, for events without one.
	eventTimes   map[string]time.Time
	eventTimesAt []time.Time
	endpoint     string      // the data of a legacy endpoint event, if any
	frames       []wsFrameIn // a WebSocket connection's frames
	ws           bool
	// From mcpspy's export: the recorded session, stream id, and seqs of
	// the request body and of the answer's messages.
	streamID     uint64
	session      string
	requestSeq   uint64
	responseSeqs []uint64
	// requestTime and responseTimes are the exact times mcpspy's export
	// gives its messages (zero where it gives none: times are then
	// inferred from the entry's timings).
	requestTime   time.Time
	responseTimes []time.Time
	messageSeqs   []uint64 // a WebSocket entry's frames'
	// note is the recorded note of an answer that carried no message,
	// as mcpspy's export wrote it into the comment; noted says the
	// comment was read so (a recorded note may be empty).
	note  string
	noted bool
	conn  string
}

// ImportHAR reads the HAR at r (named name in errors) and returns its MCP
// traffic as sessions, in the order they began, ready to be recorded.
func ImportHAR(r io.Reader, name string, opts HARImportOptions) (*HARImport, error) {
	var doc harIn
	// Fiddler, among others, starts its HARs with a byte order mark.
	dec := json.NewDecoder(utf8bom.Reader(r))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// A Decoder reads a value whole before it decodes any of
			// it: what it buffered is all the file had.
			partial, _ := io.ReadAll(dec.Buffered())
			return nil, harCut(name, partial)
		}
		return nil, jsonerr.File(name, nil, fmt.Errorf("not a HAR file: %w", err))
	}
	if doc.Log == nil {
		return nil, fmt.Errorf("%s: not a HAR file: no log object", name)
	}
	out := &HARImport{}
	var xs []*harExchangeIn
	for i := range doc.Log.Entries {
		x, err := readHAREntry(&doc.Log.Entries[i], i, opts.Files)
		if err != nil {
			return nil, fmt.Errorf("%s: entry %d: %w", name, i+1, err)
		}
		if x == nil {
			out.Skipped++
			continue
		}
		switch {
		case x.ws && len(x.frames) == 0:
			out.EmptyWebSockets++
			continue
		case x.streamMissing():
			out.EmptyStreams++
		}
		xs = append(xs, x)
	}
	// The session says where it came from: a HAR, and who wrote it.
	recorder := strings.TrimSpace("HAR by " + doc.Log.Creator.Name + " " + doc.Log.Creator.Version)
	if doc.Log.Creator.Name == "" {
		recorder = "HAR"
	}
	// A HAR of mcpspy's says on each session's page how it ended and
	// the name it was recorded under (--session), by which ls lists it
	// and show --session finds it.
	type pageSays struct{ name, end, start, endTime, endError string }
	pages := map[string]pageSays{}
	for _, p := range doc.Log.Pages {
		if t := p.MCPTape; t != nil && t.Session != "" {
			pages[t.Session] = pageSays{t.Name, t.End, t.Start, t.EndTime, t.EndError}
		}
	}
	for _, g := range groupHARSessions(xs) {
		ts := g.tapeSession(opts)
		ts.Info.Recorder = recorder + ", imported by mcptape"
		if page, ok := pages[g.xs[0].session]; ok && g.xs[0].session != "" {
			ts.Info.End = endOfShort(page.end, ts.Info.Transport, ts.Info.End)
			ts.Info.Name = page.name
			// The exact times, where the export gave them (not before
			// it did, nor in an edited HAR's unreadable ones): the
			// entries' milliseconds otherwise.
			if t := harExactTime(page.start); !t.IsZero() {
				ts.Info.Start = t
			}
			if t := harExactTime(page.endTime); !t.IsZero() && ts.Info.End != nil {
				ts.Info.End.Time = t
			}
			if ts.Info.End != nil && page.endError != "" {
				ts.Info.End.Error = page.endError
			}
		}
		out.Sessions = append(out.Sessions, ts)
	}
	return out, nil
}

// shortEnd reads EndInfo.Short's form: "reason", or "reason(arg)".
var shortEnd = regexp.MustCompile(`^([a-z-]+)(?:\((.+)\))?$`)

// endOfShort turns what SessionInfo.EndState wrote back into an end: nil
// for a session that had none when it was exported, recording or not (no
// process records the import, so it lists as StateNoEnd); the number in
// brackets a close code over WebSocket, else an exit code; other words a
// signal.
// What does not read as that form leaves def, the import's own guess.
func endOfShort(short, transport string, def *EndInfo) *EndInfo {
	if short == StateRecording || short == StateNoEnd {
		return nil
	}
	m := shortEnd.FindStringSubmatch(short)
	if m == nil || def == nil {
		return def
	}
	e := &EndInfo{Time: def.Time, Reason: m[1]}
	if n, err := strconv.Atoi(m[2]); err == nil && transport == TransportWebSocket {
		e.CloseCode = n
	} else if err == nil {
		e.ExitCode = &n
	} else if m[2] != "" {
		e.Signal = m[2]
	}
	return e
}

// streamMissing says whether the entry's answer is an event stream the
// HAR holds no text of (still open when it was saved, or left out), nor
// its events' data otherwise, whose messages are not there to import.
func (x *harExchangeIn) streamMissing() bool {
	return x.isSSE && len(bytes.TrimSpace(x.answer)) == 0 && x.events == nil && !x.recordedEmpty()
}

// devtoolsEvents are the events DevTools kept of a stream whose text the
// HAR has not (one still open when it was saved): nil unless it kept
// their data, which a sanitized HAR leaves out.
func devtoolsEvents(e *harInEntry) []sse.Event {
	var evs []sse.Event
	for _, m := range e.EventSourceMessages {
		if m.Data == nil {
			return nil
		}
		evs = append(evs, sse.Event{ID: m.EventID, HasID: m.EventID != "", Type: m.EventName, Data: []byte(*m.Data), HasData: true})
	}
	return evs
}

// recordedEmpty says whether the entry is one mcpspy export --har wrote
// for a stream that carried no message (it names none): its empty text
// is all there was, and nothing is missing.
func (x *harExchangeIn) recordedEmpty() bool { return x.session != "" && len(x.responseSeqs) == 0 }

// readHAREntry reads one entry, its bodies in files read from files;
// nil when it carries no MCP traffic.
func readHAREntry(e *harInEntry, n int, files fs.FS) (*harExchangeIn, error) {
	start, err := time.Parse(time.RFC3339Nano, e.StartedDateTime)
	if err != nil {
		// time.Parse's own words name its layout string, which is no
		// help with a HAR: say what a HAR's times look like.
		why := "want an ISO 8601 time, such as \"2026-11-21T10:00:00.123Z\""
		if pe := (*time.ParseError)(nil); errors.As(err, &pe) && pe.Message != "" {
			why = strings.TrimPrefix(pe.Message, ": ") // "month out of range"
		}
		return nil, fmt.Errorf("startedDateTime %q: %s", e.StartedDateTime, why)
	}
	u, err := url.Parse(e.Request.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("request url %q is no absolute URL", e.Request.URL)
	}
	x := &harExchangeIn{
		n: n, start: start, method: strings.ToUpper(e.Request.Method), url: u,
		reqHdr: harHeader(e.Request.Headers), respHdr: harHeader(e.Response.Headers),
		status: e.Response.Status, conn: e.Connection,
		wait: harDuration(e.Timings.Send) + harDuration(e.Timings.Wait), receive: harDuration(e.Timings.Receive),
	}
	if before := harDuration(e.Time) - x.receive; before > x.wait {
		x.wait = before // blocked, dns, connect, ssl
	}
	for _, ev := range e.EventSourceMessages {
		at := harEpoch(ev.Time)
		x.eventTimesAt = append(x.eventTimesAt, at)
		if _, ok := x.eventTimes[ev.EventID]; ev.EventID != "" && !ok {
			if x.eventTimes == nil {
				x.eventTimes = map[string]time.Time{}
			}
			x.eventTimes[ev.EventID] = at
		}
	}
	if e.MCPTape != nil {
		x.session, x.streamID = e.MCPTape.Session, e.MCPTape.StreamID
		x.requestSeq, x.responseSeqs, x.messageSeqs = e.MCPTape.RequestSeq, e.MCPTape.ResponseSeqs, e.MCPTape.MessageSeqs
		x.requestTime = harExactTime(e.MCPTape.RequestTime)
		for _, t := range e.MCPTape.ResponseTimes {
			x.responseTimes = append(x.responseTimes, harExactTime(t))
		}
		x.note, x.noted = harCommentNote(e.Comment, harEntryExt{Session: x.session, RequestSeq: x.requestSeq, ResponseSeqs: x.responseSeqs})
	}
	if p := e.Request.PostData; p != nil {
		x.body = []byte(p.Text)
		if p.Text == "" && p.File != "" {
			if x.body, err = harFile(files, p.File); err != nil {
				return nil, fmt.Errorf("request body: %w", err)
			}
		}
	}
	content := e.Response.Content
	x.answer = []byte(content.Text)
	if content.Text == "" && content.File != "" {
		if x.answer, err = harFile(files, content.File); err != nil {
			return nil, fmt.Errorf("response body: %w", err)
		}
	} else if content.Encoding == "base64" {
		if x.answer, err = base64.StdEncoding.DecodeString(content.Text); err != nil {
			return nil, fmt.Errorf("response content: base64: %v", err)
		}
	}
	if x.ws = e.WebSocketMessages != nil || x.url.Scheme == "ws" || x.url.Scheme == "wss" || x.status == http.StatusSwitchingProtocols; x.ws {
		for i, f := range e.WebSocketMessages {
			frame := wsFrameIn{dir: C2S, opcode: f.Opcode, data: []byte(f.Data)}
			if f.Type == "receive" {
				frame.dir = S2C
			}
			if f.Opcode == 2 {
				if frame.data, err = base64.StdEncoding.DecodeString(f.Data); err != nil {
					return nil, fmt.Errorf("_webSocketMessages[%d]: a binary frame's data is not base64: %v", i, err)
				}
			}
			frame.at = harEpoch(f.Time)
			x.frames = append(x.frames, frame)
		}
		if len(x.frames) > 0 && !slices.ContainsFunc(x.frames, func(f wsFrameIn) bool { return isJSONRPC(f.data) }) {
			return nil, nil
		}
		return x, nil // one without frames is counted (HARImport.EmptyWebSockets)
	}
	mime := content.MimeType
	if mime == "" {
		mime = x.respHdr.Get("Content-Type")
	}
	x.isSSE = isEventStreamType(mime)
	if x.isSSE && content.Encoding != "base64" && e.MCPTape == nil {
		// A browser's text may be the stream's UTF-8 misread; base64 is
		// the bytes themselves, and mcpspy's export writes them right.
		// The header says what the browser decoded by (DevTools' own
		// mimeType leaves out the charset).
		x.answer = eventStreamUTF8(x.answer, cmp.Or(x.respHdr.Get("Content-Type"), mime))
	}
	if x.isSSE && len(bytes.TrimSpace(x.answer)) == 0 {
		x.events = devtoolsEvents(e)
	}
	if x.isSSE && x.events == nil {
		rd := sse.NewReader(bytes.NewReader(x.answer), len(x.answer)+1)
		for {
			ev, err := rd.Next()
			if err != nil {
				break // the end; a broken last event is kept as far as it went
			}
			ev.Data, ev.Raw = bytes.Clone(ev.Data), nil
			x.events = append(x.events, ev)
		}
	}
	for _, ev := range x.events {
		if ev.Type == "endpoint" && x.endpoint == "" {
			x.endpoint = string(ev.Data)
		}
	}
	if !x.isMCP() {
		return nil, nil
	}
	return x, nil
}

// harFile reads a body a HAR keeps in a file of its own (_file), the
// file's bytes as they are.
func harFile(files fs.FS, name string) ([]byte, error) {
	const where = `(Playwright's recordHar with content "attach" keeps bodies in files beside the HAR)`
	if !fs.ValidPath(name) || name == "." {
		return nil, fmt.Errorf("_file %q names no file beside the HAR", name)
	}
	if files == nil {
		return nil, fmt.Errorf("it is in _file %q, and no files beside the HAR are read here %s", name, where)
	}
	if _, ok := files.(pipeDir); ok {
		return nil, fmt.Errorf("it is in _file %q, and a HAR read from a pipe has no directory beside it to read that from: save the HAR where its files are and name the .har %s", name, where)
	}
	b, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, fmt.Errorf("_file: %w %s", err, where)
	}
	return b, nil
}

// harAnswerEnd is harNoteAnswer at the end of a comment.
var harAnswerEnd = regexp.MustCompile(`(?:^|; )` + regexp.QuoteMeta(strings.TrimSuffix(harNoteAnswer, "%d")) + `[0-9]+$`)

// harCommentNote reads back the note mcpspy's export wrote into an
// entry's comment for an answer that carried no message (harEntryOf):
// the comment without the seqs it opens with and the export's own words
// around the note. ok is false for a comment mcpspy did not write so
// for these seqs (one a user edited).
func harCommentNote(comment string, seqs harEntryExt) (note string, ok bool) {
	rest, ok := strings.CutPrefix(comment, harSeqs(seqs))
	if !ok {
		return "", false
	}
	if rest == "" {
		return "", true
	}
	if rest, ok = strings.CutPrefix(rest, "; "); !ok {
		return "", false
	}
	if rest == harNoteNeither {
		return "", true
	}
	rest = strings.TrimPrefix(rest, harNoteNeither+"; ")
	rest = harAnswerEnd.ReplaceAllString(rest, "")
	for _, own := range []string{harNoteInferred, harNoteNoResponse} {
		if rest == own {
			return "", true
		}
		rest = strings.TrimSuffix(rest, "; "+own)
	}
	return rest, true
}

// wsFrameIn is one WebSocket frame of a HAR.
type wsFrameIn struct {
	dir    Dir
	at     time.Time
	opcode int
	data   []byte
}

// carriesEvents says whether the answer is an event stream with a message.
func (x *harExchangeIn) carriesEvents() bool {
	for _, ev := range x.events {
		if len(ev.Data) > 0 {
			return true
		}
	}
	return false
}

// harEpoch is a time in seconds since the epoch, as Chrome writes a
// WebSocket frame's or an event's, to the microsecond.
func harEpoch(sec float64) time.Time {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(math.Round(frac*1e6))*1e3).UTC()
}

// harDuration is a HAR timing (milliseconds, -1 for not measured).
func harDuration(ms float64) time.Duration {
	if ms <= 0 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// isMCP says whether the exchange is MCP traffic: a JSON-RPC message
// either way, an MCP header, or a legacy SSE endpoint.
func (x *harExchangeIn) isMCP() bool {
	switch {
	case x.session != "", x.endpoint != "",
		x.reqHdr.Get("Mcp-Session-Id") != "", x.reqHdr.Get("MCP-Protocol-Version") != "",
		isJSONRPC(x.body), !x.isSSE && isJSONRPC(x.answer):
		return true
	}
	for _, ev := range x.events {
		if isJSONRPC(ev.Data) {
			return true
		}
	}
	return false
}

// isJSONRPC says whether b is a JSON-RPC message or batch.
func isJSONRPC(b []byte) bool { return jsonrpc.Classify(b).Kind != jsonrpc.Malformed }

// harSession is the exchanges of one session, in the order they began.
type harSession struct {
	legacy bool
	sid    string // the Mcp-Session-Id
	xs     []*harExchangeIn
}

// groupHARSessions puts each exchange in its session: the one mcpspy's
// export names; else its Mcp-Session-Id (an initialize's answer gives the
// id its request had not yet); a legacy SSE connection and the POSTs to
// the endpoint it named; else, sessionless, its connection (or its URL,
// when the HAR names no connection).
func groupHARSessions(xs []*harExchangeIn) []*harSession {
	slices.SortStableFunc(xs, func(a, b *harExchangeIn) int { return a.start.Compare(b.start) })
	byKey := map[string]*harSession{}
	var order []*harSession
	for _, x := range xs {
		key, legacy, sid := harSessionKey(x)
		g := byKey[key]
		if g == nil {
			g = &harSession{legacy: legacy, sid: sid}
			byKey[key] = g
			order = append(order, g)
		}
		g.xs = append(g.xs, x)
	}
	return order
}

func harSessionKey(x *harExchangeIn) (key string, legacy bool, sid string) {
	if x.ws {
		return fmt.Sprintf("websocket %d", x.n), false, "" // a connection is a session
	}
	if x.session != "" {
		sid = x.reqHdr.Get("Mcp-Session-Id")
		if sid == "" {
			sid = x.respHdr.Get("Mcp-Session-Id")
		}
		return "recorded " + x.session, x.endpoint != "" || x.url.Query().Get("sessionId") != "", sid
	}
	if x.endpoint != "" {
		if e, err := x.url.Parse(x.endpoint); err == nil && e.Query().Get("sessionId") != "" {
			return "legacy " + e.Query().Get("sessionId"), true, ""
		}
		return "legacy endpoint " + x.endpoint, true, ""
	}
	if id := x.url.Query().Get("sessionId"); id != "" && x.reqHdr.Get("Mcp-Session-Id") == "" {
		return "legacy " + id, true, ""
	}
	for _, h := range []http.Header{x.reqHdr, x.respHdr} {
		if id := h.Get("Mcp-Session-Id"); id != "" {
			return "session " + id, false, id
		}
	}
	if x.conn != "" {
		return "connection " + x.conn + " " + x.url.Host, false, ""
	}
	return "url " + x.url.Scheme + "://" + x.url.Host + x.url.Path, false, ""
}

// harMessage is a message on its way into a session, with what orders it.
type harMessage struct {
	m     Message
	entry int // its exchange's place, then its own, break ties in time
	part  int
	// recorded is its seq in the cassette mcpspy exported the HAR from;
	// 0 when not known.
	recorded uint64
}

// tapeSession records the session's exchanges as the proxy would have.
func (g *harSession) tapeSession(opts HARImportOptions) TapeSession {
	if opts.Redact == nil {
		opts.Redact = plainHAR{}
	}
	redact := opts.Redact
	first := g.xs[0]
	upstream := *first.url
	upstream.User, upstream.RawQuery, upstream.Fragment = nil, "", ""
	info := SessionInfo{
		Transport: TransportHTTP, Upstream: redact.URL(&upstream),
		Start: first.start, HTTPSessionID: g.sid,
	}
	switch {
	case g.legacy:
		info.Transport = TransportLegacySSE
	case first.ws:
		info.Transport = TransportWebSocket
		if upstream.Scheme == "http" || upstream.Scheme == "https" {
			upstream.Scheme = strings.Replace(upstream.Scheme, "http", "ws", 1)
		}
		info.Upstream = redact.URL(&upstream)
	}
	rec := harRecording{opts: opts, info: &info, legacy: g.legacy}
	for i, x := range g.xs {
		rec.exchange(i, x)
	}
	orderHARMessages(rec.msgs)
	ts := TapeSession{Info: info}
	for i := range rec.msgs {
		m := &rec.msgs[i].m
		m.Seq = uint64(i + 1)
		if opts.Rewrite != nil {
			m = opts.Rewrite(m)
		}
		ts.Messages = append(ts.Messages, m)
	}
	ts.Info.End = &EndInfo{Time: rec.last, Reason: EndClosed}
	return ts
}

// harRecording is a session's messages as they are recorded from its
// exchanges, and what its info keeps of them.
type harRecording struct {
	opts   HARImportOptions
	info   *SessionInfo
	legacy bool
	msgs   []harMessage
	last   time.Time // the end of the last answer
}

// exchange records the i-th exchange of the session: its request body,
// its answer's messages, or, when neither carries one, a bare exchange.
func (rec *harRecording) exchange(i int, x *harExchangeIn) {
	id := x.streamID
	if id == 0 {
		id = uint64(i + 1)
	}
	headers := rec.opts.Redact
	meta := func(stream string) *HTTPMeta {
		return &HTTPMeta{
			Method: x.method, Path: headers.PathQuery(x.url), Status: x.status,
			RequestHeader: headers.Header(x.reqHdr), ResponseHeader: headers.Header(x.respHdr),
			Stream: stream, StreamID: id,
		}
	}
	rec.last = later(rec.last, x.start.Add(x.wait+x.receive))
	carried := false
	// add records a message, and returns it; recorded is its seq in the
	// cassette mcpspy exported the HAR from, 0 when the HAR does not say.
	add := func(dir Dir, at time.Time, frame []byte, meta *HTTPMeta, recorded uint64) *Message {
		rec.msgs = append(rec.msgs, harMessage{m: Message{Dir: dir, Time: at, Frame: frame, HTTP: meta}, entry: i, part: len(rec.msgs), recorded: recorded})
		rec.last = later(rec.last, at)
		carried = true
		return &rec.msgs[len(rec.msgs)-1].m
	}
	// The answer's body is a message (JSON-RPC), or a refusal's, which
	// the recorder keeps as a frame of its own; not a 202's "Accepted".
	bodyFrame := !x.isSSE && len(bytes.TrimSpace(x.answer)) > 0 && (isJSONRPC(x.answer) || x.status >= 400)
	if len(bytes.TrimSpace(x.body)) > 0 {
		m := meta(StreamPostBody)
		if x.status < 400 && (bodyFrame || x.carriesEvents()) {
			// Its answer carries messages of its own: the request's meta
			// has no status, as the recorder keeps it. A refusal is kept
			// on the request as well.
			m.Status, m.ResponseHeader = 0, nil
		}
		add(C2S, exactOr(x.requestTime, x.start), x.body, m, x.requestSeq).Note = x.note
	}
	if x.ws {
		for k, f := range x.frames {
			m := meta(StreamWS)
			m.Method, m.Status, m.StreamID, m.WSOpcode = http.MethodGet, http.StatusSwitchingProtocols, 0, f.opcode
			add(f.dir, f.at, f.data, m, seqAt(x.messageSeqs, k))
		}
		return
	}
	answered := x.start.Add(x.wait)
	stream := StreamPostSSE // an event stream's, as the recorder names it
	if x.method == http.MethodGet {
		stream = StreamGetSSE
	}
	if rec.legacy {
		stream = StreamLegacySSE
	}
	switch {
	case x.isSSE:
		withData := 0
		for _, ev := range x.events {
			if len(ev.Data) > 0 {
				withData++
			}
		}
		var priming []string
		retry := ""
		k := 0
		for n, ev := range x.events {
			if ev.Retry != "" {
				retry = ev.Retry
			}
			if len(ev.Data) == 0 {
				if ev.HasID {
					priming = append(priming, ev.ID)
				}
				continue
			}
			// Spread evenly over the receive time: the HAR keeps the
			// stream's text, not when each event came.
			at := answered
			if withData > 1 {
				at = answered.Add(x.receive * time.Duration(k) / time.Duration(withData-1))
			}
			if seen, ok := x.eventTime(n, ev); ok {
				// DevTools' own times: within the answer, as they are
				// at times some milliseconds off.
				at = later(answered, earlier(seen, answered.Add(x.receive)))
			}
			m := meta(stream)
			m.EventID, m.EventType, m.Retry, m.Priming = ev.ID, ev.Type, retry, priming
			priming = nil
			add(S2C, exactOr(timeAt(x.responseTimes, k), at), ev.Data, m, seqAt(x.responseSeqs, k))
			k++
		}
		if len(priming) > 0 {
			rec.info.Priming = append(rec.info.Priming, StreamPriming{Stream: stream, StreamID: id, Path: headers.PathQuery(x.url), EventIDs: priming, Retry: retry})
		}
	case bodyFrame:
		add(S2C, exactOr(timeAt(x.responseTimes, 0), answered.Add(x.receive)), x.answer, meta(StreamJSON), seqAt(x.responseSeqs, 0))
	}
	if !carried {
		note := "imported from a HAR: no message either way"
		if x.streamMissing() {
			note = "imported from a HAR: the text of its event stream is not in the HAR (still open when the HAR was saved?)"
		}
		if x.noted {
			note = x.note // mcpspy's export: as recorded
		}
		// An event stream that ended without a message is one, as the
		// recorder keeps it (a GET stream that carried nothing), so
		// that an export shows its text, known and empty; not one the
		// HAR holds no text of, which nobody read.
		kind := ""
		if x.isSSE && !x.streamMissing() {
			kind = stream
		}
		rec.info.AddBare(BareExchange{Time: exactOr(x.requestTime, x.start), HTTP: *meta(kind), Note: note})
	}
}

// harExactTime reads a time of mcpspy's export's _mcptape; zero when it is
// absent or unreadable (an edited HAR): the entry's timings then tell.
func harExactTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// timeAt is times[k], or zero past its end.
func timeAt(times []time.Time, k int) time.Time {
	if k < len(times) {
		return times[k]
	}
	return time.Time{}
}

// exactOr is exact, unless it is zero.
func exactOr(exact, inferred time.Time) time.Time {
	if exact.IsZero() {
		return inferred
	}
	return exact
}

// seqAt is seqs[k], or 0 past its end.
func seqAt(seqs []uint64, k int) uint64 {
	if k < len(seqs) {
		return seqs[k]
	}
	return 0
}

// eventTime is when DevTools saw the n-th event of the answer (ev), if
// the HAR says: by its id, else by its place when DevTools lists as many
// events as the text holds.
func (x *harExchangeIn) eventTime(n int, ev sse.Event) (time.Time, bool) {
	if at, ok := x.eventTimes[ev.ID]; ok && ev.HasID {
		return at, true
	}
	if len(x.eventTimesAt) == len(x.events) {
		return x.eventTimesAt[n], true
	}
	return time.Time{}, false
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// orderHARMessages puts a session's messages in the order they came: the
// recorded order when the HAR is mcpspy's export and names every
// message's seq; else by time, once the times spread over a stream (an
// SSE stream's events are spread over its receive time, and a legacy
// stream carries the answers to POSTs made while it ran) are moved where
// the messages say they must be. A server's request comes before the
// client's answer to it, and so do the events before it on its stream
// (a GET stream's receive time is its whole life, so an even spread puts
// its events late: roots/list after the reply to it). An answer comes
// after its request, an event after the event before it, and what a GET
// stream carries on the server's own account (not a ping or a log) after
// notifications/initialized, before which a server sends none. A time
// moved so is moved to just before, or just after, what bounds it; where
// bounds disagree, the later wins.
func orderHARMessages(msgs []harMessage) {
	byRecord := len(msgs) > 0
	for _, hm := range msgs {
		byRecord = byRecord && hm.recorded != 0
	}
	if byRecord {
		slices.SortStableFunc(msgs, func(a, b harMessage) int { return cmp.Compare(a.recorded, b.recorded) })
		for i := 1; i < len(msgs); i++ {
			msgs[i].m.Time = later(msgs[i].m.Time, msgs[i-1].m.Time)
		}
		return
	}
	// By id (jsonrpc.CanonicalID): an answer may write its request's id
	// another way ("1" for "\u0031", 1.0 for 1).
	asked := map[string]time.Time{}   // client requests by id
	replied := map[string]time.Time{} // client answers to the server's requests, by id
	var initialized time.Time
	for _, hm := range msgs {
		if hm.m.Dir != C2S {
			continue
		}
		switch s := jsonrpc.Classify(hm.m.Frame); {
		case s.Kind == jsonrpc.Request:
			asked[jsonrpc.CanonicalIDString(s.ID)] = hm.m.Time
		case s.Kind == jsonrpc.Response || s.Kind == jsonrpc.Error:
			id := jsonrpc.CanonicalIDString(s.ID)
			if _, ok := replied[id]; !ok {
				replied[id] = hm.m.Time
			}
		case s.Method == "notifications/initialized" && initialized.IsZero():
			initialized = hm.m.Time
		}
	}
	// Backwards, each event before what bounds it from after.
	bound := map[int]time.Time{} // the next event's time, by exchange
	for i := len(msgs) - 1; i >= 0; i-- {
		hm := &msgs[i]
		if hm.m.Dir != S2C {
			continue
		}
		limit, ok := bound[hm.entry]
		if s := jsonrpc.Classify(hm.m.Frame); s.Kind == jsonrpc.Request {
			if t, asked := replied[jsonrpc.CanonicalIDString(s.ID)]; asked && (!ok || t.Before(limit)) {
				limit, ok = t, true
			}
		}
		if ok && !hm.m.Time.Before(limit) {
			hm.m.Time = limit.Add(-time.Microsecond)
		}
		bound[hm.entry] = hm.m.Time
	}
	// Forwards, each event after what bounds it from before.
	prev := map[int]time.Time{} // the last event's time, by exchange
	for i := range msgs {
		hm := &msgs[i]
		if hm.m.Dir != S2C {
			continue
		}
		at := later(hm.m.Time, prev[hm.entry])
		switch s := jsonrpc.Classify(hm.m.Frame); {
		case s.Kind == jsonrpc.Response || s.Kind == jsonrpc.Error:
			if t, ok := asked[jsonrpc.CanonicalIDString(s.ID)]; ok && !at.After(t) {
				at = t.Add(time.Microsecond)
			}
		case hm.m.HTTP != nil && hm.m.HTTP.Stream == StreamGetSSE && !initialized.IsZero() && !at.After(initialized) &&
			s.Method != "ping" && s.Method != "notifications/message":
			at = initialized.Add(time.Microsecond)
		}
		hm.m.Time, prev[hm.entry] = at, at
	}
	slices.SortStableFunc(msgs, func(a, b harMessage) int {
		return cmp.Or(a.m.Time.Compare(b.m.Time), cmp.Compare(a.entry, b.entry), cmp.Compare(a.part, b.part))
	})
}

// LoadHAR reads the MCP traffic of the HAR at path as a tape: what mcpspy
// import would add to an empty cassette, sessions numbered from s1 in the
// order they began, each with the handshake its messages tell; nothing
// hidden, as nothing is written.
func LoadHAR(path string) (*Tape, error) {
	got, err := ReadHARFile(path, HARImportOptions{})
	if err != nil {
		return nil, err
	}
	return tapeOfHAR(got), nil
}

// tapeOfHAR makes a tape of an imported HAR, its sessions numbered s1, s2,
// … and their handshakes noted, as a cassette's are.
func tapeOfHAR(got *HARImport) *Tape {
	t := &Tape{Sessions: got.Sessions}
	for i := range t.Sessions {
		s := &t.Sessions[i]
		s.Info.ID = "s" + strconv.Itoa(i+1)
		for _, m := range s.Messages {
			m.Session = s.Info.ID
			sum := Summarize(m)
			ObserveHandshake(&s.Info, m, &sum)
		}
	}
	return t
}

// WholeFile says whether path names a file that is read whole, a JSONL
// export, a HAR or a pipe, rather than a cassette opened where it lies:
// as KindOf, which every command asks, decides.
func WholeFile(path string) bool {
	return KindOf(path) != KindDB
}

// IsHARPath says whether path names a HAR: a .har, or a .zip, the
// archive Playwright's recordHar writes a HAR into (see ReadHARFile).
func IsHARPath(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".har") || isZipPath(path)
}
