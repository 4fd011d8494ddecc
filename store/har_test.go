package store_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/store"
)

// harFile is what a test reads back of a written HAR.
type harFile struct {
	Log struct {
		Version string `json:"version"`
		Creator struct{ Name, Version string }
		Pages   []struct {
			ID              string `json:"id"`
			StartedDateTime string `json:"startedDateTime"`
			Comment         string `json:"comment"`
		} `json:"pages"`
		Entries []harEntry `json:"entries"`
	} `json:"log"`
}

type harEntry struct {
	Pageref         string  `json:"pageref"`
	StartedDateTime string  `json:"startedDateTime"`
	Time            float64 `json:"time"`
	Request         struct {
		Method      string   `json:"method"`
		URL         string   `json:"url"`
		Headers     []harNV  `json:"headers"`
		Cookies     []harNV  `json:"cookies"`
		QueryString []harNV  `json:"queryString"`
		PostData    *harPost `json:"postData"`
		BodySize    int      `json:"bodySize"`
	} `json:"request"`
	Response struct {
		Status     int     `json:"status"`
		StatusText string  `json:"statusText"`
		Headers    []harNV `json:"headers"`
		Content    struct {
			Size     int    `json:"size"`
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			Encoding string `json:"encoding"`
			Comment  string `json:"comment"`
		} `json:"content"`
		BodySize int `json:"bodySize"`
	} `json:"response"`
	Timings struct {
		Send, Wait, Receive float64
	} `json:"timings"`
	Comment string `json:"comment"`
	MCPTape struct {
		Session      string   `json:"session"`
		Stream       string   `json:"stream"`
		StreamID     uint64   `json:"stream_id"`
		RequestSeq   uint64   `json:"request_seq"`
		ResponseSeqs []uint64 `json:"response_seqs"`
		Inferred     []string `json:"inferred"`
	} `json:"_mcptape"`
}

type harNV struct{ Name, Value string }

type harPost struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

// harOf builds and writes the HAR of t and reads it back.
func harOf(tb testing.TB, t *store.Tape) (harFile, []byte, *store.HAR, []store.SessionInfo) {
	tb.Helper()
	h, skipped := store.BuildHAR(t, "test")
	var buf bytes.Buffer
	if err := h.Write(&buf); err != nil {
		tb.Fatal(err)
	}
	var f harFile
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		tb.Fatalf("the HAR is not JSON: %v\n%s", err, buf.String())
	}
	return f, buf.Bytes(), h, skipped
}

var harT0 = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

// at is harT0 plus ms milliseconds.
func at(ms int) time.Time { return harT0.Add(time.Duration(ms) * time.Millisecond) }

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

var (
	postHeader = hdr("Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		"Mcp-Session-Id", "sid-1", "Authorization", store.Redacted)
	jsonHeader = hdr("Content-Type", "application/json")
	textHeader = hdr("Content-Type", "text/plain; charset=utf-8")
	sseHeader  = hdr("Content-Type", "text/event-stream", "Cache-Control", "no-cache")
)

// httpMsg is a recorded HTTP frame: c2s carries only the request side.
func httpMsg(seq uint64, dir store.Dir, ms int, frame string, meta store.HTTPMeta) *store.Message {
	m := meta
	if dir == store.C2S {
		m.Status, m.ResponseHeader = 0, nil
	}
	return &store.Message{Session: "s1", Seq: seq, Dir: dir, Time: at(ms), Frame: []byte(frame), HTTP: &m}
}

// bare is c2s message m with the answer that carried no message, as
// the recorder keeps it: status and headers on m, and a note, if any.
func bare(m *store.Message, status int, header http.Header, note string) *store.Message {
	m.HTTP.Status, m.HTTP.ResponseHeader, m.Note = status, header, note
	return m
}

func httpSession(transport string, msgs ...*store.Message) store.TapeSession {
	return store.TapeSession{Info: store.SessionInfo{ID: "s1", Name: "srv", Transport: transport,
		Upstream: "http://user:" + store.Redacted + "@127.0.0.1:3001/mcp", Start: harT0}, Messages: msgs}
}

// wantEntry is what a test checks of one entry, exactly.
type wantEntry struct {
	Method, URL   string
	Query         []harNV
	ReqBody       *harPost
	ReqBodySize   int
	Status        int
	StatusText    string
	MimeType      string
	Text          string
	Encoding      string
	RespBodySize  int
	Start         string
	Wait, Receive float64
	Comment       string
	Stream        string
	StreamID      uint64
	RequestSeq    uint64
	ResponseSeqs  []uint64
	Inferred      []string
}

func summarize(e harEntry) wantEntry {
	return wantEntry{
		Method: e.Request.Method, URL: e.Request.URL, Query: e.Request.QueryString,
		ReqBody: e.Request.PostData, ReqBodySize: e.Request.BodySize,
		Status: e.Response.Status, StatusText: e.Response.StatusText,
		MimeType: e.Response.Content.MimeType, Text: e.Response.Content.Text, Encoding: e.Response.Content.Encoding,
		RespBodySize: e.Response.BodySize, Start: e.StartedDateTime,
		Wait: e.Timings.Wait, Receive: e.Timings.Receive, Comment: e.Comment,
		Stream: e.MCPTape.Stream, StreamID: e.MCPTape.StreamID, RequestSeq: e.MCPTape.RequestSeq,
		ResponseSeqs: e.MCPTape.ResponseSeqs, Inferred: e.MCPTape.Inferred,
	}
}

const (
	initReq    = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	initResp   = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`
	callReq    = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":7}}}`
	progress1  = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`
	progress2  = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2}}`
	callResp   = `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`
	initedNote = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	pingReq    = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	pingResp   = `{"jsonrpc":"2.0","id":1,"result":{}}`
	listChange = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
)

// harCase is one session and the entries its HAR must hold.
type harCase struct {
	name    string
	session store.TapeSession
	want    []wantEntry
	// wantPageComment is the page's comment.
	wantPageComment string
}

func harCases() []harCase {
	post := store.HTTPMeta{Method: "POST", Path: "/mcp", RequestHeader: postHeader}
	postJSON := func(id uint64) store.HTTPMeta {
		m := post
		m.Stream, m.StreamID, m.Status, m.ResponseHeader = "json", id, 200, jsonHeader
		return m
	}
	postBody := func(id uint64) store.HTTPMeta {
		m := post
		m.Stream, m.StreamID = "post-body", id
		return m
	}
	postSSE := func(id uint64, eventID string, priming ...string) store.HTTPMeta {
		m := post
		m.Stream, m.StreamID, m.Status, m.ResponseHeader = "post-sse", id, 200, sseHeader
		m.EventID, m.EventType, m.Retry, m.Priming = eventID, "message", "1000", priming
		return m
	}
	getSSE := func(id uint64, eventID string, reqHeader http.Header) store.HTTPMeta {
		return store.HTTPMeta{Method: "GET", Path: "/mcp", Status: 200, RequestHeader: reqHeader, ResponseHeader: sseHeader,
			Stream: "get-sse", StreamID: id, EventID: eventID}
	}
	const base = "http://127.0.0.1:3001"
	// deleteGone is a session whose one message is a DELETE's 404 answer,
	// with omitted requests that carried no message counted in its info.
	const sessionGone = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Session not found"}}`
	deleteGone := func(omitted int) store.TapeSession {
		s := httpSession(store.TransportHTTP,
			httpMsg(1, store.S2C, 0, sessionGone,
				store.HTTPMeta{Method: "DELETE", Path: "/mcp", Status: 404, RequestHeader: hdr("Mcp-Session-Id", "sid-1"),
					ResponseHeader: jsonHeader, Stream: "json", StreamID: 5}))
		s.Info.BareOmitted = omitted
		return s
	}
	deleteGoneEntry := []wantEntry{{
		Method: "DELETE", URL: base + "/mcp", Query: []harNV{},
		Status: 404, StatusText: "Not Found", MimeType: "application/json",
		Text: sessionGone, RespBodySize: 81, Start: "2026-11-22T06:00:00.000Z",
		Comment: "session s1: response seq 1",
		Stream:  "json", StreamID: 5, ResponseSeqs: []uint64{1},
	}}
	return []harCase{
		{
			name: "a POST with a JSON answer",
			session: httpSession(store.TransportHTTP,
				httpMsg(1, store.C2S, 0, initReq, postBody(1)),
				httpMsg(2, store.S2C, 12, initResp, postJSON(1))),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				ReqBody: &harPost{MimeType: "application/json", Text: initReq}, ReqBodySize: len(initReq),
				Status: 200, StatusText: "OK", MimeType: "application/json", Text: initResp, RespBodySize: len(initResp),
				Start: "2026-11-22T06:00:00.000Z", Wait: 12, Comment: "session s1: request seq 1, response seq 2",
				Stream: "json", StreamID: 1, RequestSeq: 1, ResponseSeqs: []uint64{2},
			}},
		},
		{
			name: "a POST answered by an SSE stream: progress, then the result",
			session: httpSession(store.TransportHTTP,
				httpMsg(1, store.C2S, 5, callReq, postBody(3)),
				httpMsg(2, store.S2C, 105, progress1, postSSE(3, "e1", "p0")),
				httpMsg(3, store.S2C, 205, progress2, postSSE(3, "e2")),
				httpMsg(4, store.S2C, 305, callResp, postSSE(3, "e3"))),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				ReqBody: &harPost{MimeType: "application/json", Text: callReq}, ReqBodySize: len(callReq),
				Status: 200, StatusText: "OK", MimeType: "text/event-stream",
				Text: "id: p0\nretry: 1000\ndata:\n\n" +
					"event: message\nid: e1\ndata: " + progress1 + "\n\n" +
					"event: message\nid: e2\ndata: " + progress2 + "\n\n" +
					"event: message\nid: e3\ndata: " + callResp + "\n\n",
				RespBodySize: -1, Start: "2026-11-22T06:00:00.005Z", Wait: 100, Receive: 200,
				Comment: "session s1: request seq 1, response seqs 2-4",
				Stream:  "post-sse", StreamID: 3, RequestSeq: 1, ResponseSeqs: []uint64{2, 3, 4},
			}},
		},
		{
			name: "a notification POST answered 202: no response recorded, the status inferred",
			session: httpSession(store.TransportHTTP,
				httpMsg(1, store.C2S, 0, initedNote, postBody(2))),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				ReqBody: &harPost{MimeType: "application/json", Text: initedNote}, ReqBodySize: len(initedNote),
				Status: 202, StatusText: "Accepted", MimeType: "x-unknown", RespBodySize: -1,
				Start:   "2026-11-22T06:00:00.000Z",
				Comment: "session s1: request seq 1; status inferred: a response without a body is not recorded, and MCP answers this POST with 202 Accepted",
				Stream:  "post-body", StreamID: 2, RequestSeq: 1, Inferred: []string{"status"},
			}},
		},
		{
			name: "a notification whose client went away before any answer: the note, nothing inferred",
			session: httpSession(store.TransportHTTP,
				bare(httpMsg(1, store.C2S, 0, initedNote, postBody(2)), 0, nil, "the client went away before the upstream answered")),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				ReqBody: &harPost{MimeType: "application/json", Text: initedNote}, ReqBodySize: len(initedNote),
				MimeType: "x-unknown", RespBodySize: -1,
				Start:   "2026-11-22T06:00:00.000Z",
				Comment: "session s1: request seq 1; the client went away before the upstream answered; no response recorded: it had no body, or the request failed",
				Stream:  "post-body", StreamID: 2, RequestSeq: 1,
			}},
		},
		{
			name: "a request mcpspy answered 502 itself, the upstream being down: status and note as recorded",
			session: httpSession(store.TransportHTTP,
				bare(httpMsg(1, store.C2S, 0, callReq, postBody(2)), 502, jsonHeader, "answered by mcpspy, not the upstream: upstream down")),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				ReqBody: &harPost{MimeType: "application/json", Text: callReq}, ReqBodySize: len(callReq),
				Status: 502, StatusText: "Bad Gateway", MimeType: "application/json", RespBodySize: -1,
				Start:   "2026-11-22T06:00:00.000Z",
				Comment: "session s1: request seq 1; answered by mcpspy, not the upstream: upstream down",
				Stream:  "post-body", StreamID: 2, RequestSeq: 1,
			}},
		},
		{
			name: "a request refused with a text body, as mcpspy records it: the status on the request, the body a frame: one entry, the body's",
			session: httpSession(store.TransportHTTP,
				bare(httpMsg(1, store.C2S, 0, callReq, postBody(2)), 404, textHeader, "refused without a message: session not found"),
				httpMsg(2, store.S2C, 3, "session not found\n", store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 404,
					ResponseHeader: textHeader, Stream: "json", StreamID: 2})),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				ReqBody: &harPost{MimeType: "application/json", Text: callReq}, ReqBodySize: len(callReq),
				Status: 404, StatusText: "Not Found", MimeType: "text/plain; charset=utf-8", Text: "session not found\n",
				RespBodySize: len("session not found\n"), Start: "2026-11-22T06:00:00.000Z", Wait: 3,
				Comment: "session s1: request seq 1, response seq 2",
				Stream:  "json", StreamID: 2, RequestSeq: 1, ResponseSeqs: []uint64{2},
			}},
		},
		{
			name: "a request POST with no recorded answer: status 0, nothing inferred",
			session: httpSession(store.TransportHTTP,
				httpMsg(1, store.C2S, 0, callReq, postBody(2))),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				ReqBody: &harPost{MimeType: "application/json", Text: callReq}, ReqBodySize: len(callReq),
				MimeType: "x-unknown", RespBodySize: -1,
				Start:   "2026-11-22T06:00:00.000Z",
				Comment: "session s1: request seq 1; no response recorded: it had no body, or the request failed",
				Stream:  "post-body", StreamID: 2, RequestSeq: 1,
			}},
		},
		{
			name: "a GET stream, and the GET that resumed it with Last-Event-ID; a stream of priming events only",
			session: func() store.TapeSession {
				s := httpSession(store.TransportHTTP,
					httpMsg(1, store.S2C, 10, listChange, getSSE(4, "g1", hdr("Accept", "text/event-stream"))),
					httpMsg(2, store.S2C, 30, progress1, getSSE(4, "g2", hdr("Accept", "text/event-stream"))),
					httpMsg(3, store.S2C, 90, progress2, getSSE(7, "g3", hdr("Accept", "text/event-stream", "Last-Event-Id", "g2"))))
				s.Info.Priming = []store.StreamPriming{
					{Stream: "get-sse", StreamID: 7, Path: "/mcp", EventIDs: []string{"g4"}},
					{Stream: "get-sse", StreamID: 9, Path: "/mcp", EventIDs: []string{"x1", "x2"}, Retry: "500"},
				}
				return s
			}(),
			want: []wantEntry{{
				Method: "GET", URL: base + "/mcp", Query: []harNV{}, Status: 200, StatusText: "OK", MimeType: "text/event-stream",
				Text:         "id: g1\ndata: " + listChange + "\n\nid: g2\ndata: " + progress1 + "\n\n",
				RespBodySize: -1, Start: "2026-11-22T06:00:00.010Z", Receive: 20,
				Comment: "session s1: response seqs 1-2",
				Stream:  "get-sse", StreamID: 4, ResponseSeqs: []uint64{1, 2},
			}, {
				Method: "GET", URL: base + "/mcp", Query: []harNV{}, Status: 200, StatusText: "OK", MimeType: "text/event-stream",
				Text:         "id: g3\ndata: " + progress2 + "\n\nid: g4\ndata:\n\n",
				RespBodySize: -1, Start: "2026-11-22T06:00:00.090Z",
				Comment: "session s1: response seq 3",
				Stream:  "get-sse", StreamID: 7, ResponseSeqs: []uint64{3},
			}},
			wantPageComment: "Streams that carried only priming events, with no entry as nothing of their request was recorded: get-sse stream 9 on /mcp (event ids x1, x2)",
		},
		{
			name: "a GET stream whose events interleave with a POST's: its seqs listed, a range only for a run",
			session: httpSession(store.TransportHTTP,
				httpMsg(1, store.S2C, 10, listChange, getSSE(4, "g1", hdr("Accept", "text/event-stream"))),
				httpMsg(2, store.C2S, 20, pingReq, postBody(5)),
				httpMsg(3, store.S2C, 25, pingResp, postJSON(5)),
				httpMsg(4, store.S2C, 30, progress1, getSSE(4, "g2", hdr("Accept", "text/event-stream"))),
				httpMsg(5, store.S2C, 40, progress2, getSSE(4, "g3", hdr("Accept", "text/event-stream"))),
				httpMsg(6, store.S2C, 50, listChange, getSSE(4, "g4", hdr("Accept", "text/event-stream")))),
			want: []wantEntry{{
				Method: "GET", URL: base + "/mcp", Query: []harNV{}, Status: 200, StatusText: "OK", MimeType: "text/event-stream",
				Text: "id: g1\ndata: " + listChange + "\n\nid: g2\ndata: " + progress1 + "\n\nid: g3\ndata: " + progress2 +
					"\n\nid: g4\ndata: " + listChange + "\n\n",
				RespBodySize: -1, Start: "2026-11-22T06:00:00.010Z", Receive: 40,
				Comment: "session s1: response seqs 1, 4-6",
				Stream:  "get-sse", StreamID: 4, ResponseSeqs: []uint64{1, 4, 5, 6},
			}, {
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				ReqBody: &harPost{MimeType: "application/json", Text: pingReq}, ReqBodySize: len(pingReq),
				Status: 200, StatusText: "OK", MimeType: "application/json", Text: pingResp, RespBodySize: len(pingResp),
				Start: "2026-11-22T06:00:00.020Z", Wait: 5, Comment: "session s1: request seq 2, response seq 3",
				Stream: "json", StreamID: 5, RequestSeq: 2, ResponseSeqs: []uint64{3},
			}},
		},
		{
			name: "a notification POST's 202 as recorded on it; requests that carried no message either way, as the session's info keeps them",
			session: func() store.TapeSession {
				s := httpSession(store.TransportHTTP,
					bare(httpMsg(1, store.C2S, 0, initedNote, postBody(2)), 202, hdr("Content-Length", "0"), ""))
				s.Info.Bare = []store.BareExchange{
					{Time: at(50), HTTP: store.HTTPMeta{Method: "GET", Path: "/mcp", Status: 405, RequestHeader: hdr("Accept", "text/event-stream"),
						ResponseHeader: hdr("Allow", "POST, DELETE"), StreamID: 3}},
					{Time: at(70), HTTP: store.HTTPMeta{Method: "DELETE", Path: "/mcp?x=1", Status: 200, RequestHeader: hdr("Mcp-Session-Id", "sid-1"),
						ResponseHeader: hdr("Content-Type", "text/plain", "Content-Length", "2"), StreamID: 4}, Note: "a note"},
				}
				s.Info.BareOmitted = 7
				return s
			}(),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				ReqBody: &harPost{MimeType: "application/json", Text: initedNote}, ReqBodySize: len(initedNote),
				Status: 202, StatusText: "Accepted", MimeType: "x-unknown", RespBodySize: 0,
				Start:   "2026-11-22T06:00:00.000Z",
				Comment: "session s1: request seq 1",
				Stream:  "post-body", StreamID: 2, RequestSeq: 1,
			}, {
				Method: "GET", URL: base + "/mcp", Query: []harNV{},
				Status: 405, StatusText: "Method Not Allowed", MimeType: "x-unknown", RespBodySize: -1,
				Start:    "2026-11-22T06:00:00.050Z",
				Comment:  "session s1; neither the request nor its answer carried a message",
				StreamID: 3,
			}, {
				Method: "DELETE", URL: base + "/mcp?x=1", Query: []harNV{{Name: "x", Value: "1"}},
				Status: 200, StatusText: "OK", MimeType: "text/plain", RespBodySize: 2,
				Start:    "2026-11-22T06:00:00.070Z",
				Comment:  "session s1; neither the request nor its answer carried a message; a note",
				StreamID: 4,
			}},
			wantPageComment: "7 more requests that carried no message either way were not kept",
		},
		{
			name:    "a DELETE answered with a JSON body",
			session: deleteGone(0),
			want:    deleteGoneEntry,
		},
		{
			name:            "one request that carried no message either way, past those kept, is counted as one",
			session:         deleteGone(1),
			want:            deleteGoneEntry,
			wantPageComment: "1 more request that carried no message either way was not kept",
		},
		{
			name: "legacy SSE: GET /sse with its endpoint event, POSTs answered on the stream",
			session: httpSession(store.TransportLegacySSE,
				httpMsg(1, store.S2C, 0, "/message?sessionId=abc", store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200,
					ResponseHeader: sseHeader, Stream: "legacy-sse", StreamID: 1, EventType: "endpoint"}),
				httpMsg(2, store.C2S, 20, initReq, store.HTTPMeta{Method: "POST", Path: "/message?sessionId=abc",
					RequestHeader: jsonHeader, Stream: "post-body", StreamID: 2}),
				httpMsg(3, store.S2C, 25, initResp, store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200,
					ResponseHeader: sseHeader, Stream: "legacy-sse", StreamID: 1, EventType: "message"}),
				// The client uses id 1 again: its answer is the next one.
				// Its 202 recorded (seq 2's, from an older mcpspy, is not).
				bare(httpMsg(4, store.C2S, 30, pingReq, store.HTTPMeta{Method: "POST", Path: "/message?sessionId=abc",
					RequestHeader: jsonHeader, Stream: "post-body", StreamID: 3}), 202, hdr("Content-Type", "text/plain", "Content-Length", "8"), ""),
				httpMsg(5, store.S2C, 31, pingResp, store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200,
					ResponseHeader: sseHeader, Stream: "legacy-sse", StreamID: 1, EventType: "message"})),
			want: []wantEntry{{
				Method: "GET", URL: base + "/sse", Query: []harNV{}, Status: 200, StatusText: "OK", MimeType: "text/event-stream",
				Text: "event: endpoint\ndata: /message?sessionId=abc\n\nevent: message\ndata: " + initResp + "\n\n" +
					"event: message\ndata: " + pingResp + "\n\n",
				RespBodySize: -1, Start: "2026-11-22T06:00:00.000Z", Receive: 31,
				Comment: "session s1: response seqs 1, 3, 5",
				Stream:  "legacy-sse", StreamID: 1, ResponseSeqs: []uint64{1, 3, 5},
			}, {
				Method: "POST", URL: base + "/message?sessionId=abc", Query: []harNV{{"sessionId", "abc"}},
				ReqBody: &harPost{MimeType: "application/json", Text: initReq}, ReqBodySize: len(initReq),
				Status: 202, StatusText: "Accepted", MimeType: "x-unknown", RespBodySize: -1, Start: "2026-11-22T06:00:00.020Z",
				Comment: "session s1: request seq 2; status inferred: a response without a body is not recorded, and MCP answers this POST with 202 Accepted; its answer came on the SSE stream as seq 3",
				Stream:  "post-body", StreamID: 2, RequestSeq: 2, Inferred: []string{"status"},
			}, {
				Method: "POST", URL: base + "/message?sessionId=abc", Query: []harNV{{"sessionId", "abc"}},
				ReqBody: &harPost{MimeType: "application/json", Text: pingReq}, ReqBodySize: len(pingReq),
				Status: 202, StatusText: "Accepted", MimeType: "text/plain", RespBodySize: 8, Start: "2026-11-22T06:00:00.030Z",
				Comment: "session s1: request seq 4; its answer came on the SSE stream as seq 5",
				Stream:  "post-body", StreamID: 3, RequestSeq: 4,
			}},
		},
		{
			name: "no StreamID (mcpmock's legacy client): grouped by method and path",
			session: httpSession(store.TransportLegacySSE,
				httpMsg(1, store.C2S, 0, initReq, store.HTTPMeta{Method: "POST", Path: "/message?sessionId=z", Stream: "post-body"}),
				httpMsg(2, store.S2C, 5, initResp, store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200, Stream: "legacy-sse"}),
				httpMsg(3, store.C2S, 7, initedNote, store.HTTPMeta{Method: "POST", Path: "/message?sessionId=z", Stream: "post-body"}),
				httpMsg(4, store.S2C, 9, listChange, store.HTTPMeta{Method: "GET", Path: "/sse", Status: 200, Stream: "legacy-sse"})),
			want: []wantEntry{{
				Method: "POST", URL: base + "/message?sessionId=z", Query: []harNV{{"sessionId", "z"}},
				ReqBody: &harPost{Text: initReq}, ReqBodySize: len(initReq),
				Status: 202, StatusText: "Accepted", MimeType: "x-unknown", RespBodySize: -1, Start: "2026-11-22T06:00:00.000Z",
				Comment: "session s1: request seq 1; status inferred: a response without a body is not recorded, and MCP answers this POST with 202 Accepted; its answer came on the SSE stream as seq 2",
				Stream:  "post-body", RequestSeq: 1, Inferred: []string{"status"},
			}, {
				Method: "GET", URL: base + "/sse", Query: []harNV{}, Status: 200, StatusText: "OK", MimeType: "text/event-stream",
				Text:         "data: " + initResp + "\n\ndata: " + listChange + "\n\n",
				RespBodySize: -1, Start: "2026-11-22T06:00:00.005Z", Receive: 4,
				Comment: "session s1: response seqs 2, 4",
				Stream:  "legacy-sse", ResponseSeqs: []uint64{2, 4},
			}, {
				Method: "POST", URL: base + "/message?sessionId=z", Query: []harNV{{"sessionId", "z"}},
				ReqBody: &harPost{Text: initedNote}, ReqBodySize: len(initedNote),
				Status: 202, StatusText: "Accepted", MimeType: "x-unknown", RespBodySize: -1, Start: "2026-11-22T06:00:00.007Z",
				Comment: "session s1: request seq 3; status inferred: a response without a body is not recorded, and MCP answers this POST with 202 Accepted",
				Stream:  "post-body", RequestSeq: 3, Inferred: []string{"status"},
			}},
		},
		{
			name: "query strings are listed in order, decoded; a redacted one stays [redacted]",
			session: httpSession(store.TransportHTTP,
				httpMsg(1, store.C2S, 0, initedNote, store.HTTPMeta{Method: "POST", Path: "/mcp?api_key=[redacted]&q=a%20b+c&flag&&x=%zz",
					Stream: "post-body", StreamID: 1})),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp?api_key=[redacted]&q=a%20b+c&flag&&x=%zz",
				Query:   []harNV{{"api_key", "[redacted]"}, {"q", "a b c"}, {"flag", ""}, {"x", "%zz"}},
				ReqBody: &harPost{Text: initedNote}, ReqBodySize: len(initedNote),
				Status: 202, StatusText: "Accepted", MimeType: "x-unknown", RespBodySize: -1, Start: "2026-11-22T06:00:00.000Z",
				Comment: "session s1: request seq 1; status inferred: a response without a body is not recorded, and MCP answers this POST with 202 Accepted",
				Stream:  "post-body", StreamID: 1, RequestSeq: 1, Inferred: []string{"status"},
			}},
		},
		{
			name: "a gzip answer's body size is its Content-Length; a body that is not UTF-8 goes base64",
			session: httpSession(store.TransportHTTP,
				httpMsg(1, store.S2C, 0, "\xff\xfe", store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 500,
					ResponseHeader: hdr("Content-Encoding", "gzip", "Content-Length", "31"), Stream: "json", StreamID: 1})),
			want: []wantEntry{{
				Method: "POST", URL: base + "/mcp", Query: []harNV{},
				Status: 500, StatusText: "Internal Server Error", MimeType: "x-unknown", Text: "//4=", Encoding: "base64",
				RespBodySize: 31, Start: "2026-11-22T06:00:00.000Z",
				Comment: "session s1: response seq 1",
				Stream:  "json", StreamID: 1, ResponseSeqs: []uint64{1},
			}},
		},
	}
}

func TestBuildHAR_Exchanges(t *testing.T) {
	for _, tt := range harCases() {
		t.Run(tt.name, func(t *testing.T) {
			f, _, h, skipped := harOf(t, &store.Tape{Sessions: []store.TapeSession{tt.session}})
			if len(skipped) != 0 || h.Unplaced != 0 {
				t.Errorf("skipped %v, %d unplaced: want none", skipped, h.Unplaced)
			}
			var got []wantEntry
			for _, e := range f.Log.Entries {
				got = append(got, summarize(e))
				if e.Pageref != "s1" {
					t.Errorf("pageref %q, want s1", e.Pageref)
				}
				if e.Time != e.Timings.Send+e.Timings.Wait+e.Timings.Receive {
					t.Errorf("time %v is not send+wait+receive %+v", e.Time, e.Timings)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
			if len(f.Log.Pages) != 1 || f.Log.Pages[0].ID != "s1" || f.Log.Pages[0].StartedDateTime != "2026-11-22T06:00:00.000Z" {
				t.Fatalf("pages %+v: want one, s1, at the session's start", f.Log.Pages)
			}
			if got := f.Log.Pages[0].Comment; got != tt.wantPageComment {
				t.Errorf("page comment %q, want %q", got, tt.wantPageComment)
			}
		})
	}
}

// An event stream that ended without a message was read to its end, so
// its entry's text is known to be empty, as docs/HAR.md says and the
// import takes it, and is not "not recorded", which the body of an
// answer without a message (a 202's) is.
func TestBuildHAR_EmptyStream(t *testing.T) {
	const ended = "its event stream ended without a message"
	post := store.HTTPMeta{Method: "POST", Path: "/mcp", RequestHeader: postHeader, Stream: "post-sse", StreamID: 2}
	getBare := store.BareExchange{Time: at(40), Note: ended, HTTP: store.HTTPMeta{Method: "GET", Path: "/mcp", Status: 200,
		RequestHeader: hdr("Accept", "text/event-stream"), ResponseHeader: sseHeader, Stream: "get-sse", StreamID: 3}}
	type content struct {
		MimeType, Text, Comment string
		Size, BodySize          int
	}
	const rebuilt = "rebuilt from the recorded events; see the log's comment"
	tests := []struct {
		name    string
		session store.TapeSession
		want    content
	}{
		{
			name: "a GET stream that carried nothing",
			session: func() store.TapeSession {
				s := httpSession(store.TransportHTTP)
				s.Info.Bare = []store.BareExchange{getBare}
				return s
			}(),
			want: content{MimeType: "text/event-stream", Comment: rebuilt, BodySize: -1},
		},
		{
			name:    "a POST whose stream ended without its answer",
			session: httpSession(store.TransportHTTP, bare(httpMsg(1, store.C2S, 0, callReq, post), 200, sseHeader, ended)),
			want:    content{MimeType: "text/event-stream", Comment: rebuilt, BodySize: -1},
		},
		{
			name: "a notification's 202, whose body is not kept",
			session: httpSession(store.TransportHTTP, bare(httpMsg(1, store.C2S, 0, initedNote,
				store.HTTPMeta{Method: "POST", Path: "/mcp", RequestHeader: postHeader, Stream: "post-body", StreamID: 2}), 202, hdr("Content-Length", "0"), "")),
			want: content{MimeType: "x-unknown", Comment: "not recorded", BodySize: 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{tt.session}})
			if len(f.Log.Entries) != 1 {
				t.Fatalf("%d entries, want 1", len(f.Log.Entries))
			}
			r := f.Log.Entries[0].Response
			got := content{MimeType: r.Content.MimeType, Text: r.Content.Text, Comment: r.Content.Comment, Size: r.Content.Size, BodySize: r.BodySize}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("content (-want +got):\n%s", d)
			}
		})
	}
}

// Recorded headers go in as stored, sorted by name: a credential the
// recorder blanked stays "[redacted]"; cookies are read from them.
func TestBuildHAR_Headers(t *testing.T) {
	req := hdr("Authorization", store.Redacted, "Content-Type", "application/json", "Cookie", "a=1; b=2", "Accept", "x", "Accept", "y")
	resp := hdr("Set-Cookie", "sess=9; Path=/; HttpOnly", "Content-Type", "application/json", "Set-Cookie", store.Redacted)
	f, _, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{httpSession(store.TransportHTTP,
		httpMsg(1, store.C2S, 0, initReq, store.HTTPMeta{Method: "POST", Path: "/mcp", RequestHeader: req, Stream: "post-body", StreamID: 1}),
		httpMsg(2, store.S2C, 1, initResp, store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200, RequestHeader: req, ResponseHeader: resp, Stream: "json", StreamID: 1}),
	)}})
	e := f.Log.Entries[0]
	tests := []struct {
		name      string
		got, want []harNV
	}{
		{"request headers", e.Request.Headers, []harNV{{"Accept", "x"}, {"Accept", "y"}, {"Authorization", "[redacted]"},
			{"Content-Type", "application/json"}, {"Cookie", "a=1; b=2"}}},
		{"request cookies", e.Request.Cookies, []harNV{{"a", "1"}, {"b", "2"}}},
		{"response headers", e.Response.Headers, []harNV{{"Content-Type", "application/json"},
			{"Set-Cookie", "sess=9; Path=/; HttpOnly"}, {"Set-Cookie", "[redacted]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// HTTP and WebSocket sessions make entries; the others are returned, and
// messages of an HTTP session that carry no HTTP metadata are counted.
// Sessions recorded at once interleave by time.
func TestBuildHAR_Sessions(t *testing.T) {
	a := httpSession(store.TransportHTTP,
		httpMsg(1, store.C2S, 0, initReq, store.HTTPMeta{Method: "POST", Path: "/mcp", Stream: "post-body", StreamID: 1}),
		httpMsg(2, store.C2S, 20, initedNote, store.HTTPMeta{Method: "POST", Path: "/mcp", Stream: "post-body", StreamID: 2}),
		&store.Message{Session: "s1", Seq: 3, Dir: store.S2C, Time: at(21), Frame: []byte(listChange)})
	b := httpSession(store.TransportLegacySSE,
		httpMsg(1, store.C2S, 10, initReq, store.HTTPMeta{Method: "POST", Path: "/message", Stream: "post-body", StreamID: 1}))
	b.Info.ID = "s3"
	stdio := store.TapeSession{Info: store.SessionInfo{ID: "s2", Transport: store.TransportStdio},
		Messages: []*store.Message{{Session: "s2", Seq: 1, Time: at(5), Frame: []byte(initReq)}}}
	ws := store.TapeSession{Info: store.SessionInfo{ID: "s4", Transport: store.TransportWebSocket, Upstream: "ws://127.0.0.1:8080/", Start: at(15)},
		Messages: []*store.Message{{Session: "s4", Seq: 1, Dir: store.C2S, Time: at(15), Frame: []byte(initReq),
			HTTP: &store.HTTPMeta{Method: "GET", Path: "/", Status: 101, Stream: store.StreamWS, WSOpcode: 1}}}}
	f, _, h, skipped := harOf(t, &store.Tape{Sessions: []store.TapeSession{a, stdio, b, ws}})
	var skippedIDs []string
	for _, s := range skipped {
		skippedIDs = append(skippedIDs, s.ID)
	}
	if d := cmp.Diff([]string{"s2"}, skippedIDs); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	if h.Unplaced != 1 {
		t.Errorf("%d unplaced, want 1 (s1 seq 3)", h.Unplaced)
	}
	var order []string
	for _, e := range f.Log.Entries {
		order = append(order, e.Pageref+":"+e.StartedDateTime)
	}
	want := []string{"s1:2026-11-22T06:00:00.000Z", "s3:2026-11-22T06:00:00.010Z", "s4:2026-11-22T06:00:00.015Z", "s1:2026-11-22T06:00:00.020Z"}
	if d := cmp.Diff(want, order); d != "" {
		t.Errorf("entry order (-want +got):\n%s", d)
	}
	if len(f.Log.Pages) != 3 || f.Log.Pages[0].ID != "s1" || f.Log.Pages[1].ID != "s3" || f.Log.Pages[2].ID != "s4" {
		t.Errorf("pages %+v: want s1, s3, s4", f.Log.Pages)
	}
	if f.Log.Version != "1.2" || f.Log.Creator.Name != "mcpspy" || f.Log.Creator.Version != "test" {
		t.Errorf("version %q, creator %+v", f.Log.Version, f.Log.Creator)
	}
}

// Entry URLs are the session's upstream scheme and host, without its
// credentials, and the recorded path; HAR wants them absolute.
func TestBuildHAR_URL(t *testing.T) {
	tests := []struct {
		name, upstream, want string
	}{
		{"plain", "http://127.0.0.1:3001/mcp", "http://127.0.0.1:3001/p?q=1"},
		{"https without a path", "https://example.com", "https://example.com/p?q=1"},
		{"redacted password, escaped as the recorder stores it", "http://me:%5Bredacted%5D@h:1/mcp?k=[redacted]", "http://h:1/p?q=1"},
		{"IPv6", "http://[::1]:3000/mcp", "http://[::1]:3000/p?q=1"},
		{"no upstream", "", "http://upstream.invalid/p?q=1"},
		{"not a URL", "npx -y server://x", "http://upstream.invalid/p?q=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := httpSession(store.TransportHTTP,
				httpMsg(1, store.C2S, 0, initedNote, store.HTTPMeta{Method: "POST", Path: "/p?q=1", Stream: "post-body", StreamID: 1}))
			s.Info.Upstream = tt.upstream
			f, _, _, _ := harOf(t, &store.Tape{Sessions: []store.TapeSession{s}})
			if got := f.Log.Entries[0].Request.URL; got != tt.want {
				t.Errorf("url %q, want %q", got, tt.want)
			}
		})
	}
}

// A WebSocket session is one entry, its upgrade (101), with each frame in
// _webSocketMessages as Chrome saves them: send or receive, seconds since
// the epoch, opcode, data (base64 for binary); the entry names the seqs.
func TestBuildHAR_WebSocket(t *testing.T) {
	meta := func(op int) *store.HTTPMeta {
		return &store.HTTPMeta{Method: "GET", Path: "/ws?k=1", Status: 101, Stream: store.StreamWS, WSOpcode: op,
			RequestHeader: hdr("Sec-Websocket-Protocol", "mcp"), ResponseHeader: hdr("Sec-Websocket-Protocol", "mcp")}
	}
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportWebSocket, Upstream: "ws://127.0.0.1:8080/ws",
		Start: harT0, End: &store.EndInfo{Time: at(500), Reason: store.EndClosed, CloseCode: 1000}},
		Messages: []*store.Message{
			{Session: "s1", Seq: 1, Dir: store.C2S, Time: at(10), Frame: []byte(initReq), HTTP: meta(1)},
			{Session: "s1", Seq: 2, Dir: store.S2C, Time: at(25), Frame: []byte{0xff, 0x00}, HTTP: meta(2)},
		}}
	_, raw, _, skipped := harOf(t, &store.Tape{Sessions: []store.TapeSession{s}})
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	if err := validateHAR(t, harSchema(t), raw); err != nil {
		t.Errorf("not a valid HAR 1.2: %v", err)
	}
	var doc struct {
		Log struct {
			Entries []struct {
				Time     float64
				Request  struct{ Method, URL string }
				Response struct{ Status int }
				WS       []struct {
					Type   string
					Time   float64
					Opcode int
					Data   string
				} `json:"_webSocketMessages"`
				MCPTape struct {
					Stream      string
					MessageSeqs []uint64 `json:"message_seqs"`
				} `json:"_mcptape"`
			}
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Log.Entries) != 1 {
		t.Fatalf("%d entries, want 1", len(doc.Log.Entries))
	}
	e := doc.Log.Entries[0]
	if e.Request.Method != "GET" || e.Request.URL != "ws://127.0.0.1:8080/ws?k=1" || e.Response.Status != 101 || e.Time != 500 {
		t.Errorf("entry %+v", e)
	}
	if len(e.WS) != 2 || e.WS[0].Type != "send" || e.WS[0].Opcode != 1 || e.WS[0].Data != initReq ||
		e.WS[1].Type != "receive" || e.WS[1].Opcode != 2 || e.WS[1].Data != "/wA=" ||
		e.WS[0].Time != float64(at(10).UnixMicro())/1e6 {
		t.Errorf("frames %+v", e.WS)
	}
	if e.MCPTape.Stream != "ws" || !slices.Equal(e.MCPTape.MessageSeqs, []uint64{1, 2}) {
		t.Errorf("_mcptape %+v", e.MCPTape)
	}
}
