package store

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/plural"
)

// HAR export (mcpspy export --har): the HTTP sessions of a tape as an HTTP
// Archive 1.2 (http://www.softwareishard.com/blog/har-12-spec/), for
// browser devtools and HAR viewers.
//
// A cassette keeps messages, not HTTP exchanges, so the exchanges are
// rebuilt. Every request the proxy forwards within a session gets its own
// HTTPMeta.StreamID, which each message of that request and its response
// carries: one StreamID is one HAR entry. The request body is its
// "post-body" message, the response its "json" message or its SSE events.
// What the cassette does not hold is filled in as harNotes says, and each
// entry names its session and seqs in "_mcptape" so that a user can find
// the messages in mcpspy show. Of a frame it reads only the summary the
// store keeps (kind and id).

// harNotes is the log's comment: where the archive is approximate.
const harNotes = "Rebuilt by mcpspy from a cassette, which records messages, not HTTP exchanges. " +
	"One entry per recorded HTTP request; _mcptape names the session and the seqs of its messages. " +
	"Approximate: an SSE response's text is rebuilt from the recorded events (event:, id:, data: lines; " +
	"priming events as id: and an empty data:), so comments, keep-alives and the original field order " +
	"and line ends are lost and its bodySize is -1; headers are listed by name, as their order was not " +
	"recorded; statusText is the standard text for the status; headersSize is -1; httpVersion is the " +
	"HTTP/1.1 mcpspy speaks to clients; timings are what mcpspy saw: wait from reading the request body " +
	"to reading the first recorded answer, receive from that to the last, send 0, the rest -1; an entry " +
	"without a request body (a GET stream) starts at its first event. An answer without a message keeps " +
	"its status and headers, not its body (bodySize is its Content-Length, or -1); in cassettes recorded " +
	"before mcpspy kept those, a POST of notifications or responses with no recorded answer is shown as " +
	"202 Accepted (inferred, as the MCP spec answers such a POST) and any other as status 0. Requests " +
	"that carried no message either way (a DELETE answered without a body, a GET refused with 405) are " +
	"not in the cassette."

// harTime is HAR's ISO 8601 form with milliseconds, which every HAR
// reader parses (JavaScript's Date reads no more digits).
const harTime = "2006-01-02T15:04:05.000Z07:00"

// HAR is an HTTP Archive 1.2 built from a tape by BuildHAR.
type HAR struct {
	doc harDoc
	// Unplaced counts messages of HTTP sessions that carry no HTTP
	// metadata (or WebSocket metadata), which no entry can hold.
	Unplaced int
}

type harDoc struct {
	Log harLog `json:"log"`
}

type harLog struct {
	Version string      `json:"version"`
	Creator harCreator  `json:"creator"`
	Pages   []harPage   `json:"pages"`
	Entries []*harEntry `json:"entries"`
	Comment string      `json:"comment"`
}

type harCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// harPage is one session: HAR viewers group entries by page.
type harPage struct {
	StartedDateTime string         `json:"startedDateTime"`
	ID              string         `json:"id"`
	Title           string         `json:"title"`
	PageTimings     harPageTimings `json:"pageTimings"`
	Comment         string         `json:"comment,omitempty"`
	MCPTape         harPageExt     `json:"_mcptape"`
}

type harPageTimings struct {
	OnContentLoad float64 `json:"onContentLoad"`
	OnLoad        float64 `json:"onLoad"`
}

type harPageExt struct {
	Session       string `json:"session"`
	Name          string `json:"name,omitempty"`
	Transport     string `json:"transport"`
	Upstream      string `json:"upstream"`
	HTTPSessionID string `json:"http_session_id,omitempty"`
	End           string `json:"end"`
	// Start, EndTime and EndError are the session's, exactly (RFC 3339
	// to the nanosecond), which startedDateTime's milliseconds and End's
	// few words are not: an import gives them back as recorded.
	Start    string `json:"start,omitempty"`
	EndTime  string `json:"end_time,omitempty"`
	EndError string `json:"end_error,omitempty"`
}

type harEntry struct {
	Pageref         string      `json:"pageref"`
	StartedDateTime string      `json:"startedDateTime"`
	Time            float64     `json:"time"`
	Request         harRequest  `json:"request"`
	Response        harResponse `json:"response"`
	Cache           struct{}    `json:"cache"`
	Timings         harTimings  `json:"timings"`
	Comment         string      `json:"comment"`
	MCPTape         harEntryExt `json:"_mcptape"`
	// WebSocketMessages are a WebSocket connection's frames (har_ws.go).
	WebSocketMessages []harWSMessage `json:"_webSocketMessages,omitempty"`

	start time.Time // for ordering entries across sessions
}

type harEntryExt struct {
	Session  string `json:"session"`
	Stream   string `json:"stream,omitempty"`
	StreamID uint64 `json:"stream_id,omitempty"`
	// RequestSeq is the seq of the request body's message, 0 when the
	// request had none (a GET).
	RequestSeq   uint64   `json:"request_seq,omitempty"`
	ResponseSeqs []uint64 `json:"response_seqs,omitempty"`
	// RequestTime and ResponseTimes are when mcpspy read the request's
	// message and each answer's (RFC 3339, to the nanosecond): a HAR keeps
	// when a request started, to the millisecond, and how long its answer
	// took, not when each event of a stream came. An import reads them
	// back, so the recording's times come back exactly.
	RequestTime   string   `json:"request_time,omitempty"`
	ResponseTimes []string `json:"response_times,omitempty"`
	// MessageSeqs are a WebSocket entry's frames' seqs, in order.
	MessageSeqs []uint64 `json:"message_seqs,omitempty"`
	// Inferred names what the cassette did not hold and was inferred
	// ("status").
	Inferred []string `json:"inferred,omitempty"`
}

type harRequest struct {
	Method      string       `json:"method"`
	URL         string       `json:"url"`
	HTTPVersion string       `json:"httpVersion"`
	Cookies     []harNV      `json:"cookies"`
	Headers     []harNV      `json:"headers"`
	QueryString []harNV      `json:"queryString"`
	PostData    *harPostData `json:"postData,omitempty"`
	HeadersSize int          `json:"headersSize"`
	BodySize    int          `json:"bodySize"`
}

type harPostData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Comment  string `json:"comment,omitempty"`
}

type harResponse struct {
	Status      int        `json:"status"`
	StatusText  string     `json:"statusText"`
	HTTPVersion string     `json:"httpVersion"`
	Cookies     []harNV    `json:"cookies"`
	Headers     []harNV    `json:"headers"`
	Content     harContent `json:"content"`
	RedirectURL string     `json:"redirectURL"`
	HeadersSize int        `json:"headersSize"`
	BodySize    int        `json:"bodySize"`
}

type harContent struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text,omitempty"`
	Encoding string `json:"encoding,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

type harTimings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
	SSL     float64 `json:"ssl"`
}

// harNV is a name and a value: a header, a query parameter, a cookie.
type harNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// BuildHAR makes a HAR of the tape's HTTP sessions, one page each, and
// returns the sessions it left out (stdio, WebSocket). creatorVersion is
// the version of mcpspy that writes it.
func BuildHAR(t *Tape, creatorVersion string) (h *HAR, skipped []SessionInfo) {
	h = &HAR{doc: harDoc{Log: harLog{
		Version: "1.2",
		Creator: harCreator{Name: "mcpspy", Version: creatorVersion},
		Pages:   []harPage{},
		Entries: []*harEntry{},
		Comment: harNotes,
	}}}
	for i := range t.Sessions {
		s := &t.Sessions[i]
		if s.Info.Transport == TransportWebSocket {
			h.addWebSocket(s)
			continue
		}
		if !s.Info.IsHTTP() {
			skipped = append(skipped, s.Info)
			continue
		}
		h.addSession(s)
	}
	// Sessions recorded at once interleave: order entries by when they
	// started, keeping seq order within a session (a stable sort).
	slices.SortStableFunc(h.doc.Log.Entries, func(a, b *harEntry) int { return a.start.Compare(b.start) })
	return h, skipped
}

// Write writes the archive as indented JSON, strings not HTML-escaped.
func (h *HAR) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(&h.doc)
}

// harExchange is one HTTP request and its response, as regrouped from a
// session's messages.
type harExchange struct {
	meta    *HTTPMeta // the request's: method, path, request header
	id      uint64    // StreamID; 0 when the recorder gave none
	req     *Message  // the request body, if any
	resp    []*Message
	priming StreamPriming // priming events that ended the stream
	bare    *BareExchange // an exchange that carried no message either way
}

func (x *harExchange) respMeta() *HTTPMeta {
	if len(x.resp) == 0 {
		return nil
	}
	return x.resp[0].HTTP
}

func (h *HAR) addSession(s *TapeSession) {
	info := &s.Info
	xs := h.regroup(s.Messages)
	page := harPageOf(info)
	// A stream's last priming events belong to its exchange; a stream
	// that carried nothing else has no recorded request to show.
	var lone []string
	for _, sp := range info.Priming {
		if x := findStream(xs, sp); x != nil {
			x.priming = sp
			continue
		}
		lone = append(lone, fmt.Sprintf("%s stream %d on %s (event ids %s)", sp.Stream, sp.StreamID, sp.Path, strings.Join(sp.EventIDs, ", ")))
	}
	if len(lone) > 0 {
		page.Comment = "Streams that carried only priming events, with no entry as nothing of their request was recorded: " + strings.Join(lone, "; ")
	}
	for i := range info.Bare {
		b := &info.Bare[i]
		xs = append(xs, &harExchange{meta: &b.HTTP, id: b.HTTP.StreamID, bare: b})
	}
	if info.BareOmitted > 0 {
		page.Comment = strings.TrimPrefix(page.Comment+fmt.Sprintf("; %s that carried no message either way %s not kept",
			plural.Count(info.BareOmitted, "more request"), plural.Agree(info.BareOmitted, "was", "were")), "; ")
	}
	base := harBaseURL(info.Upstream)
	answers := legacyAnswers(s.Messages)
	first := time.Time{}
	for _, x := range xs {
		e := harEntryOf(info, base, x, answers)
		if first.IsZero() || e.start.Before(first) {
			first = e.start
		}
		h.doc.Log.Entries = append(h.doc.Log.Entries, e)
	}
	start := info.Start
	if start.IsZero() {
		start = first
	}
	page.StartedDateTime = start.UTC().Format(harTime)
	h.doc.Log.Pages = append(h.doc.Log.Pages, page)
}

// harPageOf is a session's page, but for when it started.
func harPageOf(info *SessionInfo) harPage {
	page := harPage{
		ID:          info.ID,
		Title:       strings.TrimSpace(info.ID + " " + info.Name + " " + info.Upstream),
		PageTimings: harPageTimings{OnContentLoad: -1, OnLoad: -1},
		MCPTape: harPageExt{Session: info.ID, Name: info.Name, Transport: info.Transport,
			Upstream: info.Upstream, HTTPSessionID: info.HTTPSessionID, End: info.EndState(),
			Start: harExactString(info.Start)},
	}
	if info.End != nil {
		page.MCPTape.EndTime, page.MCPTape.EndError = harExactString(info.End.Time), info.End.Error
	}
	return page
}

// harExactString is t in RFC 3339 to the nanosecond, or "" for none.
func harExactString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// findStream is the exchange whose stream sp's priming events ended.
func findStream(xs []*harExchange, sp StreamPriming) *harExchange {
	if sp.StreamID == 0 {
		return nil
	}
	for _, x := range xs {
		if x.id == sp.StreamID {
			return x
		}
	}
	return nil
}

// regroup sorts a session's messages into exchanges, in the order of each
// one's first message. Messages without HTTP metadata are counted in
// Unplaced.
//
// A recorder that gave no StreamID (mcpmock's legacy fallback client)
// leaves the grouping to method and path: each request body starts an
// exchange, a response joins the latest one to the same method and path,
// and stream events join the latest stream; a resumed GET stream then
// reads as the stream it resumed.
func (h *HAR) regroup(msgs []*Message) []*harExchange {
	var xs []*harExchange
	byID := map[uint64]*harExchange{}
	for _, m := range msgs {
		meta := m.HTTP
		if meta == nil || meta.Stream == StreamWS {
			h.Unplaced++
			continue
		}
		var x *harExchange
		switch {
		case meta.StreamID != 0:
			x = byID[meta.StreamID]
		case m.Dir == S2C:
			streamOnly := meta.Stream == StreamGetSSE || meta.Stream == StreamLegacySSE
			for i := len(xs) - 1; i >= 0; i-- {
				c := xs[i]
				if c.id == 0 && c.meta.Method == meta.Method && c.meta.Path == meta.Path && (c.req == nil) == streamOnly {
					x = c
					break
				}
			}
		}
		if x == nil || (m.Dir == C2S && x.req != nil) {
			x = &harExchange{meta: meta, id: meta.StreamID}
			xs = append(xs, x)
			if meta.StreamID != 0 {
				byID[meta.StreamID] = x
			}
		}
		if m.Dir == C2S {
			x.req = m
		} else {
			x.resp = append(x.resp, m)
		}
	}
	return xs
}

// legacyAnswers maps the JSON-RPC id of each answer that came on a legacy
// SSE stream (jsonrpc.CanonicalID: an answer may write its request's id
// another way, "1" for "\u0031", 1.0 for 1) to those answers, in seq
// order, so that a POST's entry can say where its answer went.
func legacyAnswers(msgs []*Message) map[string][]*Message {
	out := map[string][]*Message{}
	for _, m := range msgs {
		if m.Dir != S2C || m.HTTP == nil || m.HTTP.Stream != StreamLegacySSE {
			continue
		}
		if s := Summarize(m); (s.Kind == jsonrpc.Response || s.Kind == jsonrpc.Error) && s.ID != "" {
			id := jsonrpc.CanonicalIDString(s.ID)
			out[id] = append(out[id], m)
		}
	}
	return out
}

// answerTo is the first answer after req to req's id, if any: a client
// may use an id again once it has its answer.
func answerTo(answers map[string][]*Message, req *Message) *Message {
	s := Summarize(req)
	if s.Kind != jsonrpc.Request || s.ID == "" {
		return nil
	}
	for _, a := range answers[jsonrpc.CanonicalIDString(s.ID)] {
		if a.Seq > req.Seq {
			return a
		}
	}
	return nil
}

// harBaseURL is the scheme and host requests went to: the session's
// upstream without its path or credentials (read by hand: a redacted
// password need not parse). An upstream that is no URL gives a reserved
// name (RFC 2606), as HAR wants absolute URLs.
func harBaseURL(upstream string) string {
	u, ok := ParseUpstream(upstream)
	if !ok || u.Scheme == "" || strings.ContainsAny(u.Scheme, " /") || u.Host == "" {
		return "http://upstream.invalid"
	}
	return u.Scheme + "://" + u.Host
}

func harEntryOf(info *SessionInfo, base string, x *harExchange, answers map[string][]*Message) *harEntry {
	e := &harEntry{Pageref: info.ID, MCPTape: harEntryExt{Session: info.ID, StreamID: x.id}}
	var notes []string

	// When: from the request body's arrival, else the first event's.
	var start, firstResp, lastResp time.Time
	if len(x.resp) > 0 {
		firstResp, lastResp = x.resp[0].Time, x.resp[len(x.resp)-1].Time
	}
	switch {
	case x.req != nil:
		start = x.req.Time
		e.MCPTape.RequestSeq = x.req.Seq
		e.MCPTape.RequestTime = x.req.Time.UTC().Format(time.RFC3339Nano)
	case x.bare != nil:
		start = x.bare.Time // when mcpspy had read the request
		e.MCPTape.RequestTime = harExactString(start)
	default:
		start = firstResp
	}
	e.start = start
	e.StartedDateTime = start.UTC().Format(harTime)
	e.Timings = harTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1}
	if len(x.resp) > 0 {
		e.Timings.Wait = harMillis(firstResp.Sub(start))
		e.Timings.Receive = harMillis(lastResp.Sub(firstResp))
	}
	e.Time = e.Timings.Send + e.Timings.Wait + e.Timings.Receive

	// The request.
	path := x.meta.Path
	if path == "" {
		path = "/"
	}
	reqHeader := x.meta.RequestHeader
	if reqHeader == nil && len(x.resp) > 0 {
		reqHeader = x.respMeta().RequestHeader
	}
	e.Request = harRequest{
		Method: x.meta.Method, URL: base + path, HTTPVersion: "HTTP/1.1",
		Cookies: harCookies(reqHeader, false), Headers: harHeaders(reqHeader),
		QueryString: harQuery(path), HeadersSize: -1,
	}
	if x.req != nil {
		pd := &harPostData{MimeType: reqHeader.Get("Content-Type"), Text: string(x.req.Frame)}
		if !utf8.Valid(x.req.Frame) {
			pd.Comment = "the body is not valid UTF-8; text holds it with U+FFFD in place of the bad bytes"
		}
		e.Request.PostData = pd
		e.Request.BodySize = harBodySize(reqHeader, len(x.req.Frame))
	}

	// The response.
	e.Response = harResponse{HTTPVersion: "HTTP/1.1", HeadersSize: -1, Cookies: []harNV{}, Headers: []harNV{}}
	if rm := x.respMeta(); rm != nil {
		e.MCPTape.Stream = rm.Stream
		e.Response.Status = rm.Status
		e.Response.StatusText = http.StatusText(rm.Status)
		e.Response.Cookies = harCookies(rm.ResponseHeader, true)
		e.Response.Headers = harHeaders(rm.ResponseHeader)
		if loc := rm.ResponseHeader.Get("Location"); loc != "" {
			e.Response.RedirectURL = loc
		}
		for _, m := range x.resp {
			e.MCPTape.ResponseSeqs = append(e.MCPTape.ResponseSeqs, m.Seq)
			e.MCPTape.ResponseTimes = append(e.MCPTape.ResponseTimes, m.Time.UTC().Format(time.RFC3339Nano))
		}
		if harIsSSE(rm.Stream) {
			text := harSSEText(x)
			e.Response.Content = harContentOf(text, harMime(rm.ResponseHeader, "text/event-stream"))
			e.Response.Content.Comment = harRebuilt
			e.Response.BodySize = -1
		} else {
			var text []byte
			for _, m := range x.resp {
				text = append(text, m.Frame...)
			}
			e.Response.Content = harContentOf(text, harMime(rm.ResponseHeader, "x-unknown"))
			e.Response.BodySize = harBodySize(rm.ResponseHeader, len(text))
		}
	} else {
		// The response carried no message. Its body, if any (a legacy
		// server's "Accepted"), is not recorded, so its size is unknown
		// unless its Content-Length says.
		e.MCPTape.Stream = x.meta.Stream
		e.Response.Content = harContent{MimeType: "x-unknown", Comment: "not recorded"}
		e.Response.BodySize = -1
		// The recorder kept the status and headers on the request's
		// message, or, for a request without one, in the session's info.
		kept := x.bare
		if x.req != nil {
			kept = &BareExchange{HTTP: *x.req.HTTP, Note: x.req.Note}
		}
		if x.bare != nil {
			notes = append(notes, harNoteNeither)
		}
		if kept != nil && kept.Note != "" {
			notes = append(notes, kept.Note)
		}
		if kept != nil && kept.HTTP.Status != 0 {
			rh := kept.HTTP.ResponseHeader
			e.Response.Status, e.Response.StatusText = kept.HTTP.Status, http.StatusText(kept.HTTP.Status)
			e.Response.Cookies, e.Response.Headers = harCookies(rh, true), harHeaders(rh)
			e.Response.Content.MimeType = harMime(rh, "x-unknown")
			if n, err := strconv.Atoi(rh.Get("Content-Length")); err == nil && n >= 0 {
				e.Response.BodySize = n
			}
			if harIsSSE(kept.HTTP.Stream) || harEventStream(rh) {
				// An event stream that ended without a message: the
				// recorder read all of it, so its text is known, empty
				// but for priming events (and what a stream's text
				// never keeps), not unrecorded as a body would be. A
				// POST's is kept on its request body, whose stream is
				// post-body: its answer's header says it streamed.
				e.Response.Content = harContentOf(harSSEText(x), harMime(rh, "text/event-stream"))
				e.Response.Content.Comment = harRebuilt
			}
			if x.req != nil && info.Transport == TransportLegacySSE {
				if a := answerTo(answers, x.req); a != nil {
					notes = append(notes, fmt.Sprintf(harNoteAnswer, a.Seq))
				}
			}
		} else if x.req != nil && x.req.Note == "" && harAccepted(info, x.req) {
			// No status and no note: a cassette from before mcpspy kept
			// answers without a message (a note says why one has none).
			e.Response.Status, e.Response.StatusText = http.StatusAccepted, http.StatusText(http.StatusAccepted)
			e.MCPTape.Inferred = []string{"status"}
			notes = append(notes, harNoteInferred)
			if a := answerTo(answers, x.req); a != nil {
				notes = append(notes, fmt.Sprintf(harNoteAnswer, a.Seq))
			}
		} else {
			notes = append(notes, harNoteNoResponse)
		}
	}

	e.Comment = harSeqs(e.MCPTape)
	if len(notes) > 0 {
		e.Comment += "; " + strings.Join(notes, "; ")
	}
	return e
}

// What an entry's comment says after its seqs, in this order: the first
// of a request that carried no message either way; the recorded note, if
// any, of an answer that carried no message (ImportHAR reads it back from
// between these); then one of the others.
const (
	harNoteNeither    = "neither the request nor its answer carried a message"
	harNoteAnswer     = "its answer came on the SSE stream as seq %d"
	harNoteInferred   = "status inferred: a response without a body is not recorded, and MCP answers this POST with 202 Accepted"
	harNoteNoResponse = "no response recorded: it had no body, or the request failed"
)

// harAccepted says whether MCP answers req's POST with 202 Accepted: in
// the legacy transport every POST (answers come on the SSE stream); in
// Streamable HTTP a POST of notifications or responses only.
func harAccepted(info *SessionInfo, req *Message) bool {
	if req.HTTP.Method != http.MethodPost {
		return false
	}
	if info.Transport == TransportLegacySSE {
		return true
	}
	switch Summarize(req).Kind {
	case jsonrpc.Notification, jsonrpc.Response, jsonrpc.Error:
		return true
	}
	return false
}

// harSeqs names an entry's messages as mcpspy show numbers them.
func harSeqs(x harEntryExt) string {
	var parts []string
	if x.RequestSeq != 0 {
		parts = append(parts, fmt.Sprintf("request seq %d", x.RequestSeq))
	}
	switch n := len(x.ResponseSeqs); {
	case n == 1:
		parts = append(parts, fmt.Sprintf("response seq %d", x.ResponseSeqs[0]))
	case n > 1:
		parts = append(parts, "response seqs "+seqRuns(x.ResponseSeqs))
	}
	if len(parts) == 0 { // an exchange without messages
		return "session " + x.Session
	}
	return "session " + x.Session + ": " + strings.Join(parts, ", ")
}

// seqRuns lists seqs, in order, as "52, 75-77": a range only for a run
// of consecutive seqs. A stream's events interleave with the session's
// other messages, and "52-77" would claim the 22 between that are not its.
func seqRuns(seqs []uint64) string {
	var b strings.Builder
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", seqs[i])
		if j > i {
			fmt.Fprintf(&b, "-%d", seqs[j])
		}
		i = j + 1
	}
	return b.String()
}

// harRebuilt is the content comment of an event stream's text.
const harRebuilt = "rebuilt from the recorded events; see the log's comment"

func harIsSSE(stream string) bool {
	return stream == StreamPostSSE || stream == StreamGetSSE || stream == StreamLegacySSE
}

// harEventStream says whether an answer's header names an event stream.
func harEventStream(h http.Header) bool {
	return isEventStreamType(h.Get("Content-Type"))
}

// isEventStreamType says whether a Content-Type (or a HAR's mimeType) is
// text/event-stream, parameters and case aside.
func isEventStreamType(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/event-stream")
}

// harSSEText rebuilds an event stream from its recorded events: before
// each, the priming events seen since the one before it; a retry field
// where its value first shows or changes; the fields in the order the
// TypeScript SDK and mcpmock write them.
func harSSEText(x *harExchange) []byte {
	var b bytes.Buffer
	retry := ""
	prime := func(ids []string, r string) {
		for _, id := range ids {
			b.WriteString("id: " + id + "\n")
			if r != retry {
				b.WriteString("retry: " + r + "\n")
				retry = r
			}
			b.WriteString("data:\n\n")
		}
	}
	for _, m := range x.resp {
		meta := m.HTTP
		prime(meta.Priming, meta.Retry)
		if meta.EventType != "" {
			b.WriteString("event: " + meta.EventType + "\n")
		}
		if meta.EventID != "" {
			b.WriteString("id: " + meta.EventID + "\n")
		}
		if meta.Retry != retry {
			b.WriteString("retry: " + meta.Retry + "\n")
			retry = meta.Retry
		}
		for line := range bytes.SplitSeq(m.Frame, []byte("\n")) {
			b.WriteString("data: ")
			b.Write(line)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	prime(x.priming.EventIDs, x.priming.Retry)
	return b.Bytes()
}

// harContentOf is a response body as HAR content: text, or base64 when it
// is not valid UTF-8 (a JSON string cannot hold it).
func harContentOf(body []byte, mimeType string) harContent {
	c := harContent{Size: len(body), MimeType: mimeType, Text: string(body)}
	if !utf8.Valid(body) {
		c.Text, c.Encoding = base64.StdEncoding.EncodeToString(body), "base64"
	}
	return c
}

func harMime(h http.Header, fallback string) string {
	if ct := h.Get("Content-Type"); ct != "" {
		return ct
	}
	return fallback
}

// harBodySize is the size of a body on the wire: the recorded bytes,
// unless they were decoded from a Content-Encoding, when only a
// Content-Length tells (else -1, unknown).
func harBodySize(h http.Header, recorded int) int {
	if ce := h.Get("Content-Encoding"); ce == "" || strings.EqualFold(ce, "identity") {
		return recorded
	}
	if n, err := strconv.Atoi(h.Get("Content-Length")); err == nil && n >= 0 {
		return n
	}
	return -1
}

// harMillis is d in milliseconds, to the microsecond; never negative
// (the wall clock may step back).
func harMillis(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000
}

// harHeaders lists h by name; the recorder kept no order.
func harHeaders(h http.Header) []harNV {
	out := []harNV{}
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			out = append(out, harNV{Name: k, Value: v})
		}
	}
	return out
}

// harCookies reads the Cookie (or Set-Cookie) headers; one the recorder
// blanked whole, or that does not parse, gives no cookie.
func harCookies(h http.Header, set bool) []harNV {
	out := []harNV{}
	if set {
		for _, v := range h.Values("Set-Cookie") {
			if c, err := http.ParseSetCookie(v); err == nil {
				out = append(out, harNV{Name: c.Name, Value: c.Value})
			}
		}
		return out
	}
	for _, v := range h.Values("Cookie") {
		cs, err := http.ParseCookie(v)
		if err != nil {
			continue
		}
		for _, c := range cs {
			out = append(out, harNV{Name: c.Name, Value: c.Value})
		}
	}
	return out
}

// harQuery lists the query parameters of path in their order, decoded
// where they decode ("[redacted]" stays as stored).
func harQuery(path string) []harNV {
	out := []harNV{}
	_, q, ok := strings.Cut(path, "?")
	if !ok {
		return out
	}
	for part := range strings.SplitSeq(q, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		out = append(out, harNV{Name: harUnescape(k), Value: harUnescape(v)})
	}
	return out
}

func harUnescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}
