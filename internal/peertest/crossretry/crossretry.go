// Package crossretry records real peers' 2026-07-28 multi round-trip
// requests with every retry on another connection than its call: go-sdk's
// client and server (package gosdk's confirm tool, which answers
// input_required) over stateless Streamable HTTP, through mcpspy's HTTP
// proxy (package vcr). The client opens a connection per POST, as a
// client without keep-alive does, and mcpspy records sessionless traffic
// one session per connection: each retry is in a session of its own, after
// the session of the input_required result it answers. It is test
// plumbing; nothing in the product imports it.
package crossretry

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/store"
	"github.com/mcptape/mcptape/vcr"
)

// Record records into path (a .db that must not exist) the go-sdk client
// calling the go-sdk server's confirm tool confirms times, and echo once
// between, over stateless Streamable HTTP. go-sdk's server gives every
// input_required result of one process the same requestState, so that
// with two confirms or more two asks share it.
func Record(t *testing.T, path string, confirms int) {
	t.Helper()
	srv := gosdk.NewServer("crossretry")
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer up.Close()
	t.Run("record", func(t *testing.T) {
		rec := vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := mcp.NewClient(&mcp.Implementation{Name: "crossretry", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			},
		})
		tr := &mcp.StreamableClientTransport{Endpoint: rec.URL(), HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
		cs, err := c.Connect(ctx, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for i := range confirms {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{}})
			if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hello Ada" {
				t.Fatalf("confirm: %+v, %v", res, err)
			}
			if i == 0 {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "between"}}); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// Exchange is where Find found a multi round-trip request: the session
// indexes and seqs of the input_required result and of the retry.
type Exchange struct {
	AskSession, RetrySession int
	AskSeq, RetrySeq         uint64
}

// Find returns the multi round-trip requests of tape whose retry is in
// another session than the input_required result it answers, pairing
// each retry with the latest input_required result before it; it fails
// the test when there is none, so that a test of such retries knows the
// recording holds one.
func Find(t testing.TB, tape *store.Tape) []Exchange {
	t.Helper()
	type ask struct {
		sess int
		seq  uint64
		at   time.Time
	}
	var asks []ask
	var out []Exchange
	for i, s := range tape.Sessions {
		for _, m := range s.Messages {
			sum := jsonrpc.Classify(m.Frame)
			if m.Dir == store.S2C && sum.InputRequired {
				asks = append(asks, ask{i, m.Seq, m.Time})
			}
			if m.Dir != store.C2S || sum.Method != "tools/call" || !HasInputResponses(m.Frame) {
				continue
			}
			var last *ask
			for j := range asks {
				if !asks[j].at.After(m.Time) && (last == nil || asks[j].at.After(last.at)) {
					last = &asks[j]
				}
			}
			if last != nil && last.sess != i {
				out = append(out, Exchange{AskSession: last.sess, RetrySession: i, AskSeq: last.seq, RetrySeq: m.Seq})
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("the recording holds no retry in another session than its input_required result")
	}
	return out
}

// HasInputResponses reports whether a request frame retries with
// inputResponses.
func HasInputResponses(frame []byte) bool {
	var v struct {
		Params struct {
			InputResponses json.RawMessage `json:"inputResponses"`
		} `json:"params"`
	}
	return json.Unmarshal(frame, &v) == nil && v.Params.InputResponses != nil
}

// SetInputResponses returns a copy of request frame with its
// inputResponses replaced by responses (JSON).
func SetInputResponses(t testing.TB, frame []byte, responses string) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(frame, &v); err != nil {
		t.Fatal(err)
	}
	var r any
	if err := json.Unmarshal([]byte(responses), &r); err != nil {
		t.Fatal(err)
	}
	v["params"].(map[string]any)["inputResponses"] = r
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Case is a cassette of hand-written 2026-07-28 sessions over Streamable
// HTTP, each a connection, whose retries cross sessions; Want is what
// mcpspy lint finds in it (lint.Finding's String).
type Case struct {
	Name string
	Tape *store.Tape
	Want []string
}

// T0 is when the cases' first session starts.
var T0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// Msg is a message of a case: when (after T0), which way, and its frame.
type Msg struct {
	At    time.Duration
	Dir   store.Dir
	Frame string
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

// Ask is tools/call confirm (id) at at, answered input_required a
// millisecond later with requestState state, asking for the named
// elicitation.
func Ask(at time.Duration, id int, state, asks string) []Msg {
	return []Msg{
		{at, store.C2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"confirm","arguments":{},%s}}`, id, meta)},
		{at + time.Millisecond, store.S2C, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"resultType":"input_required","requestState":%q,"inputRequests":{%q:{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}}}`, id, state, asks)},
	}
}

// Retry is tools/call confirm (id) sent again at at with requestState
// state and inputResponses responses (JSON), answered a millisecond later.
func Retry(at time.Duration, id int, state, responses string) []Msg {
	return []Msg{
		{at, store.C2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"confirm","arguments":{},"requestState":%q,"inputResponses":%s,%s}}`, id, state, responses, meta)},
		{at + time.Millisecond, store.S2C, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"hello Ada"}],"resultType":"complete"}}`, id)},
	}
}

// Answer answers the elicitation named who.
func Answer(who string) string {
	return fmt.Sprintf(`{%q:{"action":"accept","content":{"name":"Ada"}}}`, who)
}

// Session is a recorded connection: it starts at start (after T0), holds
// msgs, and ends a second after its last message.
func Session(id string, start time.Duration, msgs ...[]Msg) store.TapeSession {
	s := store.TapeSession{Info: store.SessionInfo{ID: id, Transport: store.TransportHTTP, Upstream: "http://127.0.0.1/mcp", Start: T0.Add(start)}}
	var last time.Time
	for _, group := range msgs {
		for _, m := range group {
			msg := &store.Message{Session: id, Seq: uint64(len(s.Messages) + 1), Dir: m.Dir, Time: T0.Add(m.At), Frame: []byte(m.Frame), HTTP: HTTPMeta(m.Dir, []byte(m.Frame))}
			s.Messages = append(s.Messages, msg)
			last = msg.Time
		}
	}
	s.Info.End = &store.EndInfo{Reason: store.EndEOF, Time: last.Add(time.Second)}
	return s
}

// HTTPMeta is what mcpspy's proxy records of a 2026-07-28 message: a
// client's POST with the headers the spec asks for, the server's answer
// on the POST's SSE stream.
func HTTPMeta(dir store.Dir, frame []byte) *store.HTTPMeta {
	if dir == store.S2C {
		return &store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200, Stream: store.StreamPostSSE, RequestHeader: http.Header{}, ResponseHeader: http.Header{"Content-Type": {"text/event-stream"}}}
	}
	sum := jsonrpc.Classify(frame)
	h := http.Header{"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {sum.Method}}
	if sum.Tool != "" {
		h.Set("Mcp-Name", sum.Tool)
	}
	return &store.HTTPMeta{Method: "POST", Path: "/mcp", Stream: store.StreamPostBody, RequestHeader: h}
}

// Cases are the edge cases of retries across sessions.
func Cases() []Case {
	const state = "step=1"
	tape := func(sessions ...store.TapeSession) *store.Tape { return &store.Tape{Sessions: sessions} }
	unasked := `(asked in %s) [input-responses]`
	return []Case{
		{"answered on the next connection",
			tape(Session("s1", 0, Ask(0, 1, state, "who")), Session("s2", time.Second, Retry(time.Second, 2, state, Answer("who")))),
			nil},
		{"the retry answers what was not asked",
			tape(Session("s1", 0, Ask(0, 1, state, "who")), Session("s2", time.Second, Retry(time.Second, 2, state, `{"who":{"action":"accept"},"other":{"action":"accept"}}`))),
			[]string{`s2:1: error: answers input request "other", which the server did not ask ` + fmt.Sprintf(unasked, "s1:2")}},
		// The retry's connection opened first and idled: in the
		// cassette's order the retry comes before the ask it answers.
		{"the retry's session before the ask's",
			tape(Session("s1", 0, Retry(2*time.Second, 2, state, `{"other":{"action":"accept"}}`)), Session("s2", time.Second, Ask(time.Second, 1, state, "who"))),
			[]string{
				`s1:1: error: the retry leaves input request "who" (elicitation/create) unanswered ` + fmt.Sprintf(unasked, "s2:2"),
				`s1:1: error: answers input request "other", which the server did not ask ` + fmt.Sprintf(unasked, "s2:2"),
			}},
		{"retried before it was asked",
			tape(Session("s1", 0, Retry(0, 2, state, Answer("who"))), Session("s2", time.Second, Ask(time.Second, 1, state, "who"))),
			[]string{`s1:1: error: tools/call carries requestState "step=1", but the server answered no earlier tools/call with input_required that it could retry [input-responses]`}},
		{"an ask never answered",
			tape(Session("s1", 0, Ask(0, 1, state, "who")), Session("s2", time.Second, Ask(time.Second, 1, "step=2", "what"))),
			nil},
		{"two asks with one requestState: the latest before the retry",
			tape(Session("s1", 0, Ask(0, 1, state, "who")), Session("s2", time.Second, Ask(time.Second, 1, state, "what")), Session("s3", 2*time.Second, Retry(2*time.Second, 2, state, Answer("who")))),
			[]string{
				`s3:1: error: the retry leaves input request "what" (elicitation/create) unanswered ` + fmt.Sprintf(unasked, "s2:2"),
				`s3:1: error: answers input request "who", which the server did not ask ` + fmt.Sprintf(unasked, "s2:2"),
			}},
		// The later ask is in the earlier session: the latest is by time,
		// not by the cassette's order.
		{"two asks with one requestState: the latest by time",
			tape(Session("s1", 0, Ask(time.Second, 1, state, "what")), Session("s2", 200*time.Millisecond, Ask(500*time.Millisecond, 1, state, "who")), Session("s3", 2*time.Second, Retry(2*time.Second, 2, state, Answer("what")))),
			nil},
		{"two asks with one requestState: a retry between them",
			tape(Session("s1", 0, Ask(0, 1, state, "who")), Session("s2", 500*time.Millisecond, Retry(500*time.Millisecond, 2, state, Answer("who"))), Session("s3", time.Second, Ask(time.Second, 1, state, "what"))),
			nil},
		// An ask of the retry's own session answers it, though another
		// session asked later.
		{"two asks with one requestState: the retry's own session's",
			tape(Session("s1", 0, Ask(0, 1, state, "who"), Retry(2*time.Second, 2, state, Answer("who"))), Session("s2", time.Second, Ask(time.Second, 1, state, "what"))),
			nil},
	}
}

// Rewrite writes tape into w as its recorders wrote it: each session
// opened at its start (or its first message, which a recorder may stamp
// earlier), each message appended at its time, each session ended at its
// end, all in time order, the writer flushed after each step. after is
// called after each step with its time and the id of the session it was
// about, which the writer gives (s1, s2… in the order they open).
func Rewrite(t testing.TB, w *store.Writer, tape *store.Tape, after func(at time.Time, session string)) {
	t.Helper()
	type step struct {
		at   time.Time
		kind int // 0 open, 1 message, 2 end, in this order at one time
		sess int
		msg  *store.Message
	}
	var steps []step
	for i, s := range tape.Sessions {
		open := s.Info.Start
		if len(s.Messages) > 0 && s.Messages[0].Time.Before(open) {
			open = s.Messages[0].Time
		}
		steps = append(steps, step{at: open, kind: 0, sess: i})
		for _, m := range s.Messages {
			steps = append(steps, step{at: m.Time, kind: 1, sess: i, msg: m})
		}
		if s.Info.End != nil {
			steps = append(steps, step{at: s.Info.End.Time, kind: 2, sess: i})
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int { return cmp.Or(a.at.Compare(b.at), a.kind-b.kind) })
	live := make([]*store.Session, len(tape.Sessions))
	for _, st := range steps {
		switch st.kind {
		case 0:
			info := tape.Sessions[st.sess].Info
			info.ID, info.End = "", nil
			s, err := w.NewSession(info)
			if err != nil {
				t.Fatal(err)
			}
			live[st.sess] = s
		case 1:
			live[st.sess].Append(st.msg.Dir, st.msg.Time, st.msg.Frame, st.msg.HTTP)
		case 2:
			if err := live[st.sess].End(*tape.Sessions[st.sess].Info.End); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		after(st.at, live[st.sess].ID())
	}
}
