package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// listing is one line per message: seq, direction, what it is, and where
// it travelled.
func listing(ts store.TapeSession) []string {
	var out []string
	for _, m := range ts.Messages {
		s := jsonrpc.Classify(m.Frame)
		what := s.Method
		if what == "" {
			what = fmt.Sprintf("%s %s", s.Kind, s.ID)
		}
		h := m.HTTP
		line := fmt.Sprintf("%d %s %s | %s %s %d %s#%d", m.Seq, m.Dir, what, h.Method, h.Path, h.Status, h.Stream, h.StreamID)
		if h.EventID != "" || len(h.Priming) > 0 {
			line += fmt.Sprintf(" id=%s priming=%v retry=%s", h.EventID, h.Priming, h.Retry)
		}
		out = append(out, line)
	}
	return out
}

// TestImportHAR_Browser imports a HAR in the shape Chrome's devtools save
// (HTTP/2 pseudo-headers among the headers, lower-case names, a base64
// body, an SSE answer as its text, a page and OAuth metadata besides):
// the MCP traffic becomes a session per Mcp-Session-Id, in the order the
// messages came, each with its HTTP metadata; credentials are redacted;
// what is no MCP traffic is left out, and counted.
func TestImportHAR_Browser(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "browser.har"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := store.ImportHAR(f, "browser.har", store.HARImportOptions{Redact: recorder.NewHTTPRedactor(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Skipped != 2 || len(got.Sessions) != 2 || got.EmptyStreams != 0 {
		t.Fatalf("skipped %d entries and found %d sessions; want the page and the OAuth metadata skipped, 2 sessions", got.Skipped, len(got.Sessions))
	}
	want := []string{
		"1 c2s initialize | POST /mcp 0 post-body#1",
		"2 s2c response 0 | POST /mcp 200 json#1",
		"3 c2s notifications/initialized | POST /mcp 202 post-body#2",
		"4 c2s tools/call | POST /mcp 0 post-body#3",
		"5 s2c notifications/progress | POST /mcp 200 post-sse#3 id=1 priming=[] retry=",
		"6 s2c response 1 | POST /mcp 200 post-sse#3 id=2 priming=[] retry=",
		"7 s2c notifications/tools/list_changed | GET /mcp 200 get-sse#4 id=3 priming=[0] retry=3000",
		"8 c2s tools/list | POST /mcp 0 post-body#5",
		"9 s2c response 2 | POST /mcp 200 json#5",
	}
	s1 := got.Sessions[0]
	if d := cmp.Diff(want, listing(s1)); d != "" {
		t.Errorf("session 1 (-want +got):\n%s", d)
	}
	if s1.Info.HTTPSessionID != "sess-1" || s1.Info.Transport != store.TransportHTTP || s1.Info.Upstream != "https://mcp.example.com/mcp" ||
		s1.Info.Recorder != "HAR by WebInspector 537.36, imported by mcptape" {
		t.Errorf("session 1 info %+v", s1.Info)
	}
	if len(s1.Info.Bare) != 1 || s1.Info.Bare[0].HTTP.Method != "DELETE" || s1.Info.Bare[0].HTTP.Status != 200 {
		t.Errorf("the DELETE, which carried no message, should be kept bare: %+v", s1.Info.Bare)
	}
	first := s1.Messages[0].HTTP
	if a := first.RequestHeader.Get("Authorization"); a != store.Redacted {
		t.Errorf("Authorization %q, want it redacted", a)
	}
	if c := s1.Messages[1].HTTP.ResponseHeader.Get("Set-Cookie"); c != store.Redacted {
		t.Errorf("Set-Cookie %q, want it redacted", c)
	}
	if first.RequestHeader.Get(":authority") != "" || len(first.RequestHeader) != 4 {
		t.Errorf("request headers %v: want the four real ones, no HTTP/2 pseudo-headers", first.RequestHeader)
	}
	// The session the server no longer knew: the POST refused with 404,
	// its text body a frame of its own, as mcpspy records a refusal.
	want2 := []string{"1 c2s tools/list | POST /mcp 404 post-body#1", "2 s2c malformed  | POST /mcp 404 json#1"}
	if d := cmp.Diff(want2, listing(got.Sessions[1])); d != "" {
		t.Errorf("session 2 (-want +got):\n%s", d)
	}
	if status, gone := got.Sessions[1].Messages[0].HTTP.Refusal(); status != 404 || !gone {
		t.Errorf("refusal %d, gone %v: want the 404 of a session gone", status, gone)
	}
}

// TestImportHAR_NoRedact: without a redactor (--no-redact) the headers are
// kept as the HAR has them; with --redact-value's patterns, a body's
// secret is blanked too.
func TestImportHAR_Redaction(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "browser.har"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.ImportHAR(bytes.NewReader(raw), "browser.har", store.HARImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := got.Sessions[0].Messages[0].HTTP.RequestHeader.Get("Authorization"); a != "Bearer sk-live-0123456789abcdef" {
		t.Errorf("without redaction, Authorization is %q", a)
	}
	values, err := recorder.NewValuePatterns([]string{"tap[a-z]+"})
	if err != nil {
		t.Fatal(err)
	}
	got, err = store.ImportHAR(bytes.NewReader(raw), "browser.har", store.HARImportOptions{
		Redact: recorder.NewHTTPRedactor(nil), Rewrite: recorder.Rewriter(nil, values),
	})
	if err != nil {
		t.Fatal(err)
	}
	call := got.Sessions[0].Messages[3]
	if !bytes.Contains(call.Frame, []byte(`"q": "[redacted]"`)) && !bytes.Contains(call.Frame, []byte(`"q":"[redacted]"`)) {
		t.Errorf("the call's argument should be blanked: %s", call.Frame)
	}
}

// TestImportHAR_Errors: what is no HAR, or a HAR entry that cannot be
// read, is refused with the file and the entry named.
func TestImportHAR_Errors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"not JSON", "<html>", "x.har: not a HAR file"},
		{"no log", `{"entries":[]}`, "x.har: not a HAR file: no log object"},
		{"a bad time", `{"log":{"entries":[{"startedDateTime":"yesterday","request":{"method":"POST","url":"http://h/mcp"}}]}}`, `x.har: entry 1: startedDateTime "yesterday": want an ISO 8601 time, such as "2026-11-21T10:00:00.123Z"`},
		{"a time out of range", `{"log":{"entries":[{"startedDateTime":"2026-11-31T10:00:00Z","request":{"method":"POST","url":"http://h/mcp"}}]}}`, `x.har: entry 1: startedDateTime "2026-11-31T10:00:00Z": day out of range`},
		{"a relative URL", `{"log":{"entries":[{"startedDateTime":"2026-11-27T10:00:00Z","request":{"method":"POST","url":"/mcp"}}]}}`, `x.har: entry 1: request url "/mcp" is no absolute URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := store.ImportHAR(strings.NewReader(tc.doc), "x.har", store.HARImportOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzImportHAR: any input is imported or refused, never a panic; what is
// imported has dense seqs, in time order.
func FuzzImportHAR(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "browser.har"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	for _, real := range []string{"playwright-chromium.har", "playwright-chromium-open.har", "devtools-chromium.har"} {
		raw, err := os.ReadFile(filepath.Join("testdata", real))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"log":{"entries":[{"startedDateTime":"2026-11-27T10:00:00Z","request":{"method":"GET","url":"http://h/sse"},"response":{"status":200,"content":{"mimeType":"text/event-stream","text":"event: endpoint\ndata: /message?sessionId=1\n\n"}}}]}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, err := store.ImportHAR(bytes.NewReader(doc), "fuzz.har", store.HARImportOptions{Redact: recorder.NewHTTPRedactor(nil)})
		if err != nil {
			return
		}
		for _, s := range got.Sessions {
			for i, m := range s.Messages {
				if m.Seq != uint64(i+1) || (i > 0 && m.Time.Before(s.Messages[i-1].Time)) {
					t.Fatalf("message %d: seq %d at %v after %v", i, m.Seq, m.Time, s.Messages[max(i-1, 0)].Time)
				}
			}
		}
	})
}

// TestImportHAR_Legacy: a 2024-11-05 session from a HAR that is not
// mcpspy's (no recorded seqs): the GET /sse stream and the POSTs to the
// endpoint it names are one session, and an answer the stream's spread
// times would place before its request comes just after it.
func TestImportHAR_Legacy(t *testing.T) {
	post := func(at, id, method string) string {
		return `{"startedDateTime":"2026-11-27T10:00:00.` + at + `Z","request":{"method":"POST","url":"http://127.0.0.1:3001/message?sessionId=abc","postData":{"text":"{\"jsonrpc\":\"2.0\",\"id\":` + id + `,\"method\":\"` + method + `\"}"}},"response":{"status":202,"content":{"mimeType":"text/plain","text":"Accepted"}},"timings":{"wait":1,"receive":0}}`
	}
	stream := "event: endpoint\ndata: /message?sessionId=abc\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\n"
	get, _ := json.Marshal(stream)
	doc := `{"log":{"entries":[` +
		`{"startedDateTime":"2026-11-27T10:00:00.000Z","request":{"method":"GET","url":"http://127.0.0.1:3001/sse"},"response":{"status":200,"content":{"mimeType":"text/event-stream","text":` + string(get) + `}},"timings":{"wait":5,"receive":1000}},` +
		post("600", "0", "initialize") + "," + post("700", "1", "tools/list") + `]}}`
	got, err := store.ImportHAR(strings.NewReader(doc), "legacy.har", store.HARImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != 1 || got.Sessions[0].Info.Transport != store.TransportLegacySSE || got.EmptyStreams != 0 {
		t.Fatalf("want one legacy session, got %+v", got.Sessions)
	}
	want := []string{
		"1 s2c malformed  | GET /sse 200 legacy-sse#1",
		"2 c2s initialize | POST /message?sessionId=abc 202 post-body#2",
		"3 s2c response 0 | GET /sse 200 legacy-sse#1",
		"4 c2s tools/list | POST /message?sessionId=abc 202 post-body#3",
		"5 s2c response 1 | GET /sse 200 legacy-sse#1",
	}
	if d := cmp.Diff(want, listing(got.Sessions[0])); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if m := got.Sessions[0].Messages[2]; m.HTTP.EventType != "message" || !m.Time.After(got.Sessions[0].Messages[1].Time) {
		t.Errorf("the answer to initialize: event %q at %v, after its request at %v", m.HTTP.EventType, m.Time, got.Sessions[0].Messages[1].Time)
	}
}

// TestImportHAR_EmptyStream: an event-stream answer the HAR holds no text
// of (still open when it was saved) is counted, so that the
// import can say why its messages are missing; the request is kept.
func TestImportHAR_EmptyStream(t *testing.T) {
	doc := `{"log":{"entries":[{"startedDateTime":"2026-11-27T10:00:00Z",
		"request":{"method":"POST","url":"https://h/mcp","headers":[{"name":"mcp-session-id","value":"a"}],"postData":{"text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"}},
		"response":{"status":200,"headers":[{"name":"content-type","value":"text/event-stream"}],"content":{"size":0,"mimeType":"text/event-stream"}}}]}}`
	got, err := store.ImportHAR(strings.NewReader(doc), "x.har", store.HARImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.EmptyStreams != 1 || len(got.Sessions) != 1 || len(got.Sessions[0].Messages) != 1 {
		t.Errorf("empty streams %d, sessions %+v: want the one request kept and its empty stream counted", got.EmptyStreams, got.Sessions)
	}

	// The same entry as mcpspy export --har writes a stream that carried
	// no message: it names none of its seqs, and nothing is missing.
	exported := strings.Replace(doc, `"mimeType":"text/event-stream"}}`, `"mimeType":"text/event-stream"}},"_mcptape":{"session":"s1","stream_id":1,"request_seq":1}`, 1)
	if exported == doc {
		t.Fatal("the fixture changed: no _mcptape added")
	}
	got, err = store.ImportHAR(strings.NewReader(exported), "x.har", store.HARImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.EmptyStreams != 0 || len(got.Sessions) != 1 {
		t.Errorf("empty streams %d, sessions %d: want mcpspy's own empty stream taken as it is", got.EmptyStreams, len(got.Sessions))
	}
}

// Load reads a HAR as it reads a JSONL export: its sessions numbered from
// s1, each message naming its session, the handshake noted in the info.
func TestLoad_HAR(t *testing.T) {
	tape, err := store.Load(filepath.Join("testdata", "browser.har"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 2 || tape.Sessions[0].Info.ID != "s1" || tape.Sessions[1].Info.ID != "s2" {
		t.Fatalf("sessions %+v", tape.Sessions)
	}
	s := tape.Sessions[0]
	if h := s.Info.Handshake; h.Method != "initialize" || !bytes.Contains(h.ServerInfo, []byte(`"remote-tools"`)) {
		t.Errorf("handshake %+v", h)
	}
	for _, m := range s.Messages {
		if m.Session != "s1" {
			t.Errorf("seq %d names session %q", m.Seq, m.Session)
		}
	}
	if a := s.Messages[0].HTTP.RequestHeader.Get("Authorization"); a == store.Redacted {
		t.Errorf("read, not written, the HAR keeps its headers as they are; got %q", a)
	}
	if !store.WholeFile("x.HAR") || !store.WholeFile("x.jsonl") || store.WholeFile("x.db") {
		t.Error("WholeFile: want .har and .jsonl, not .db")
	}
}

// How a session ended goes through a HAR of mcpspy's (its page's
// _mcptape.end): a close code stays a close code, an exit code an exit
// code, a signal a signal. One with no end, recording when it was
// exported or not, has none imported, and lists as no end recorded: no
// process records the import. Without a page to say, the import's own
// guess, closed, stands.
func TestImportHAR_KeepsHowSessionsEnded(t *testing.T) {
	exit3 := 3
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	live := &store.RecorderProcess{PID: os.Getpid(), Host: host}
	tests := []struct {
		name      string
		transport string
		end       *store.EndInfo
		process   *store.RecorderProcess
		page      string // what the HAR's page says
		want      string // EndState of the imported session
	}{
		{"still recording", store.TransportHTTP, nil, live, store.StateRecording, store.StateNoEnd},
		{"its recorder gone", store.TransportHTTP, nil, nil, store.StateNoEnd, store.StateNoEnd},
		{"a DELETE ended it", store.TransportHTTP, &store.EndInfo{Time: at(50), Reason: store.EndClosed}, nil, "closed", "closed"},
		{"a WebSocket close code", store.TransportWebSocket, &store.EndInfo{Time: at(50), Reason: store.EndClosed, CloseCode: 1001}, nil, "closed(1001)", "closed(1001)"},
		{"an exit code", store.TransportHTTP, &store.EndInfo{Time: at(50), Reason: store.EndExit, ExitCode: &exit3}, nil, "exit(3)", "exit(3)"},
		{"a signal", store.TransportHTTP, &store.EndInfo{Time: at(50), Reason: store.EndSignal, Signal: "terminated"}, nil, "signal(terminated)", "signal(terminated)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s store.TapeSession
			if tt.transport == store.TransportWebSocket {
				s = store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportWebSocket, Upstream: "ws://127.0.0.1:8080/", Start: at(0)},
					Messages: []*store.Message{{Session: "s1", Seq: 1, Dir: store.C2S, Time: at(1), Frame: []byte(initReq),
						HTTP: &store.HTTPMeta{Method: "GET", Path: "/", Status: 101, Stream: store.StreamWS, WSOpcode: 1}}}}
			} else {
				s = httpSession(tt.transport, httpMsg(1, store.C2S, 0, initReq, store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 202, Stream: "post-body", StreamID: 1}))
			}
			s.Info.End, s.Info.RecorderProcess = tt.end, tt.process
			_, raw, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{s}})
			var doc struct {
				Log struct {
					Pages []struct {
						MCPTape struct{ End string } `json:"_mcptape"`
					}
				}
			}
			if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Log.Pages) != 1 || doc.Log.Pages[0].MCPTape.End != tt.page {
				t.Errorf("the HAR's page says how the session ended otherwise than %q (%v):\n%s", tt.page, err, raw)
			}
			imp, err := store.ImportHAR(bytes.NewReader(raw), "x.har", store.HARImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(imp.Sessions) != 1 {
				t.Fatalf("%d sessions imported", len(imp.Sessions))
			}
			if got := imp.Sessions[0].Info.EndState(); got != tt.want {
				t.Errorf("imported end %q, want %q", got, tt.want)
			}
		})
	}
}

// The note mcpspy keeps on an answer that carried no message (its own
// 502 when the upstream was down, a client gone before the answer, a
// request that carried no message either way) goes through a HAR of
// mcpspy's: export writes it into the entry's comment, import puts it
// back on the message (or the session's bare exchange) it was on, and a
// second export writes the same entries as the first. The export's own
// words around it (no response recorded, its answer on the SSE stream)
// are no note.
func TestImportHAR_KeepsNotes(t *testing.T) {
	down := "answered by mcpspy, not the upstream: upstream http://127.0.0.1:3001/mcp is unreachable: dial tcp 127.0.0.1:3001: connect: connection refused; retried once"
	gone := "the client went away before the upstream answered"
	postBody := func(id uint64) store.HTTPMeta {
		return store.HTTPMeta{Method: "POST", Path: "/mcp", RequestHeader: postHeader, Stream: "post-body", StreamID: id}
	}
	streamable := httpSession(store.TransportHTTP,
		httpMsg(1, store.C2S, 0, initReq, postBody(1)),
		httpMsg(2, store.S2C, 5, initResp, store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200, ResponseHeader: jsonHeader, Stream: "json", StreamID: 1}),
		bare(httpMsg(3, store.C2S, 10, callReq, postBody(2)), 502, jsonHeader, down),
		bare(httpMsg(4, store.C2S, 20, initedNote, postBody(3)), 0, nil, gone),
		bare(httpMsg(5, store.C2S, 30, pingReq, postBody(4)), 502, jsonHeader, ""))
	streamable.Info.Bare = []store.BareExchange{
		{Time: at(40), HTTP: store.HTTPMeta{Method: "GET", Path: "/mcp", Status: 502, RequestHeader: hdr("Accept", "text/event-stream"),
			ResponseHeader: jsonHeader, StreamID: 5}, Note: down},
		{Time: at(50), HTTP: store.HTTPMeta{Method: "DELETE", Path: "/mcp", Status: 200, RequestHeader: hdr("Mcp-Session-Id", "sid-1"),
			ResponseHeader: hdr("Content-Length", "0"), StreamID: 6}},
	}
	legacyPost := func(seq uint64, ms int, frame string, id uint64) *store.Message {
		return httpMsg(seq, store.C2S, ms, frame, store.HTTPMeta{Method: "POST", Path: "/message?sessionId=abc", RequestHeader: jsonHeader, Stream: "post-body", StreamID: id})
	}
	legacyEvent := func(seq uint64, ms int, frame, typ string) *store.Message {
		return httpMsg(seq, store.S2C, ms, frame, store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200, ResponseHeader: sseHeader, Stream: "legacy-sse", StreamID: 1, EventType: typ})
	}
	legacy := httpSession(store.TransportLegacySSE,
		legacyEvent(1, 0, "/message?sessionId=abc", "endpoint"),
		bare(legacyPost(2, 20, initReq, 2), 202, hdr("Content-Length", "8"), ""),
		legacyEvent(3, 25, initResp, "message"),
		bare(legacyPost(4, 30, callReq, 3), 502, jsonHeader, down))

	for _, tt := range []struct {
		name    string
		session store.TapeSession
	}{
		{"streamable HTTP", streamable},
		{"legacy HTTP+SSE", legacy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			first, raw, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{tt.session}})
			imp, err := store.ImportHAR(bytes.NewReader(raw), "x.har", store.HARImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(imp.Sessions) != 1 {
				t.Fatalf("%d sessions imported", len(imp.Sessions))
			}
			got := imp.Sessions[0]
			got.Info.ID = "s1"
			for _, m := range got.Messages {
				m.Session = "s1"
			}

			notes := func(s store.TapeSession) []string {
				var out []string
				for _, m := range s.Messages {
					out = append(out, fmt.Sprintf("seq %d: %q", m.Seq, m.Note))
				}
				for _, b := range s.Info.Bare {
					out = append(out, fmt.Sprintf("bare %s: %q", b.HTTP.Method, b.Note))
				}
				return out
			}
			if d := cmp.Diff(notes(tt.session), notes(got)); d != "" {
				t.Errorf("notes after export and import (-recorded +imported):\n%s", d)
			}
			second, _, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{got}})
			if d := cmp.Diff(first.Log.Entries, second.Log.Entries); d != "" {
				t.Errorf("entries of the second export (-first +second):\n%s", d)
			}
		})
	}
}

// mcpspy's own HAR gives back every message's time exactly: the shipped
// real-peer recording's progress events (a POST's SSE stream), and events
// on a GET stream that stayed open long after them, which a HAR's
// timings alone would spread over the stream's life.
func TestImportHAR_ExactTimes(t *testing.T) {
	real, err := store.Load(filepath.Join("..", "cassettes", "everything-http.db"))
	if err != nil {
		t.Fatal(err)
	}
	getEvent := func(seq uint64, ms int, frame string) *store.Message {
		m := httpMsg(seq, store.S2C, ms, frame, store.HTTPMeta{Method: "GET", Path: "/mcp", Status: 200, ResponseHeader: sseHeader, Stream: "get-sse", StreamID: 2})
		m.Time = m.Time.Add(123456 * time.Nanosecond) // not a whole millisecond
		return m
	}
	stream := httpSession(store.TransportHTTP,
		httpMsg(1, store.C2S, 0, initReq, store.HTTPMeta{Method: "POST", Path: "/mcp", RequestHeader: postHeader, Stream: "post-body", StreamID: 1}),
		httpMsg(2, store.S2C, 5, initResp, store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200, ResponseHeader: jsonHeader, Stream: "json", StreamID: 1}),
		getEvent(3, 10, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`),
		httpMsg(4, store.C2S, 20, pingReq, store.HTTPMeta{Method: "POST", Path: "/mcp", RequestHeader: postHeader, Stream: "post-body", StreamID: 3}),
		httpMsg(5, store.S2C, 25, `{"jsonrpc":"2.0","id":3,"result":{}}`, store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200, ResponseHeader: jsonHeader, Stream: "json", StreamID: 3}),
		getEvent(6, 900, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`))
	for _, tt := range []struct {
		name    string
		session store.TapeSession
	}{
		{"server-everything's progress", real.Sessions[0]},
		{"a GET stream open long", stream},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, raw, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{tt.session}})
			imp, err := store.ImportHAR(bytes.NewReader(raw), "x.har", store.HARImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := imp.Sessions[0].Messages
			if len(got) != len(tt.session.Messages) {
				t.Fatalf("%d messages imported, want %d", len(got), len(tt.session.Messages))
			}
			for i, m := range tt.session.Messages {
				if !got[i].Time.Equal(m.Time) || got[i].Seq != m.Seq {
					t.Errorf("seq %d at %s came back as seq %d at %s", m.Seq, m.Time.Format(time.RFC3339Nano), got[i].Seq, got[i].Time.Format(time.RFC3339Nano))
				}
			}
		})
	}
}

// mcpspy's own HAR gives back when each session started and ended, and
// the error that ended one, exactly, and when each request that carried
// no message either way came: the shipped real-peer recording (its GET
// stream that carried nothing and its DELETE), and a session an upstream
// error ended. A HAR's own times are to the millisecond, and the page's
// end says how, in a few words, not when nor the error's.
func TestImportHAR_KeepsSessionTimes(t *testing.T) {
	real, err := store.Load(filepath.Join("..", "cassettes", "everything-http.db"))
	if err != nil {
		t.Fatal(err)
	}
	failed := httpSession(store.TransportHTTP, httpMsg(1, store.C2S, 0, initReq, store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 502, Stream: "post-body", StreamID: 1}))
	failed.Info.Start = harT0.Add(-123456 * time.Nanosecond)
	failed.Info.End = &store.EndInfo{Time: at(70).Add(654321 * time.Nanosecond), Reason: store.EndError, Error: "upstream http://127.0.0.1:3001/mcp is unreachable"}
	for _, tt := range []struct {
		name    string
		session store.TapeSession
	}{
		{"server-everything's session", real.Sessions[0]},
		{"a session an error ended", failed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, raw, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{tt.session}})
			imp, err := store.ImportHAR(bytes.NewReader(raw), "x.har", store.HARImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(imp.Sessions) != 1 {
				t.Fatalf("%d sessions imported", len(imp.Sessions))
			}
			want, got := tt.session.Info, imp.Sessions[0].Info
			if !got.Start.Equal(want.Start) {
				t.Errorf("start %s, recorded %s", got.Start.Format(time.RFC3339Nano), want.Start.Format(time.RFC3339Nano))
			}
			if d := cmp.Diff(want.End, got.End); d != "" {
				t.Errorf("end (-recorded +imported):\n%s", d)
			}
			if len(got.Bare) != len(want.Bare) {
				t.Fatalf("%d bare exchanges imported, %d recorded", len(got.Bare), len(want.Bare))
			}
			for i, b := range want.Bare {
				if !got.Bare[i].Time.Equal(b.Time) {
					t.Errorf("bare %s at %s, recorded at %s", b.HTTP.Method, got.Bare[i].Time.Format(time.RFC3339Nano), b.Time.Format(time.RFC3339Nano))
				}
			}
		})
	}
}
