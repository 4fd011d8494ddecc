package inspector

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

func TestParseFilter_HTTPTerms(t *testing.T) {
	tests := []struct {
		name, filter string
		codes        [][2]int // status: the ranges parsed
		streams      []string // stream: the names parsed
		err          string   // a bad value: the error says this
	}{
		{name: "status", filter: "status:404", codes: [][2]int{{404, 404}}},
		{name: "class", filter: "status:4xx", codes: [][2]int{{400, 499}}},
		{name: "class in capitals", filter: "status:5XX", codes: [][2]int{{500, 599}}},
		{name: "alternatives", filter: "status:429|5xx|202", codes: [][2]int{{429, 429}, {500, 599}, {202, 202}}},
		{name: "lowest and highest", filter: "!status:100|599", codes: [][2]int{{100, 100}, {599, 599}}},
		{name: "stream", filter: "stream:get-sse", streams: []string{"get-sse"}},
		{name: "every stream", filter: "stream:post-body|json|post-sse|get-sse|legacy-sse|ws",
			streams: []string{"post-body", "json", "post-sse", "get-sse", "legacy-sse", "ws"}},

		{name: "status not a number", filter: "status:abc", err: `filter: "status:abc": status must be an HTTP status from 100 to 599 (404) or a class from 1xx to 5xx, not "abc"`},
		{name: "no class 6xx", filter: "status:6xx", err: `not "6xx"`},
		{name: "status past 599", filter: "status:600", err: `not "600"`},
		{name: "status under 100", filter: "status:99", err: `not "99"`},
		{name: "status of four digits", filter: "status:4040", err: `not "4040"`},
		{name: "half a class", filter: "status:4x", err: `not "4x"`},
		{name: "class with a digit", filter: "status:4x4", err: `not "4x4"`},
		{name: "signed", filter: "status:+20", err: `not "+20"`},
		{name: "bad alternative", filter: "status:404|nope", err: `not "nope"`},
		{name: "empty alternative", filter: "status:404|", err: `status: an empty alternative in "404|"`},
		{name: "status without value", filter: "status:", err: `status: needs a value`},
		{name: "unknown stream", filter: "stream:nope", err: `filter: "stream:nope": unknown stream "nope" (want post-body, json, post-sse, get-sse, legacy-sse or ws, or a stream id: stream:6)`},
		{name: "stream names are exact", filter: "stream:GET-SSE", err: `unknown stream "GET-SSE"`},
		{name: "stream without value", filter: "stream:", err: `stream: needs a value`},
		{name: "keys are listed", filter: "http:DELETE", err: `unknown key "http" (want method, tool, dir, kind, id, session, slow, time, lint, status, stream;`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("ParseFilter(%q) = %v, want an error with %q", tt.filter, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFilter(%q): %v", tt.filter, err)
			}
			if len(f.terms) != 1 {
				t.Fatalf("%d terms, want 1", len(f.terms))
			}
			term := f.terms[0]
			if term.reads() != readsHTTP {
				t.Errorf("term reads %d, want the HTTP metadata (%d)", term.reads(), readsHTTP)
			}
			if tt.streams != nil {
				if diff := cmp.Diff(tt.streams, term.vals); term.kind != tStream || diff != "" {
					t.Errorf("kind %d, streams (-want +got):\n%s", term.kind, diff)
				}
				return
			}
			if diff := cmp.Diff(tt.codes, term.codes); term.kind != tStatus || diff != "" {
				t.Errorf("kind %d, codes (-want +got):\n%s", term.kind, diff)
			}
		})
	}
}

// httpFrame is a message to record with its HTTP metadata.
type httpFrame struct {
	dir    store.Dir
	json   string
	stream string // "": none (stdio)
	status int
	amend  bool // the status is learnt after: recorded by Session.Amend
}

// httpSessions are a Streamable HTTP session with every kind of answer,
// a legacy HTTP+SSE session and a stdio one.
var httpSessions = [][]httpFrame{
	{
		{dir: store.C2S, json: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, stream: store.StreamPostBody},
		{dir: store.S2C, json: `{"jsonrpc":"2.0","id":1,"result":{}}`, stream: store.StreamPostSSE, status: 200},
		{dir: store.C2S, json: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, stream: store.StreamPostBody, status: 202, amend: true},
		{dir: store.C2S, json: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, stream: store.StreamPostBody},
		{dir: store.S2C, json: `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`, stream: store.StreamJSON, status: 200},
		{dir: store.S2C, json: `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, stream: store.StreamGetSSE, status: 200},
		{dir: store.C2S, json: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`, stream: store.StreamPostBody, status: 429, amend: true},
		{dir: store.C2S, json: `{"jsonrpc":"2.0","id":4,"method":"ping"}`, stream: store.StreamPostBody, status: 503, amend: true},
	},
	{
		{dir: store.C2S, json: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, stream: store.StreamPostBody, status: 202},
		{dir: store.S2C, json: `{"jsonrpc":"2.0","id":1,"result":{}}`, stream: store.StreamLegacySSE, status: 200},
	},
	{
		{dir: store.C2S, json: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{dir: store.S2C, json: `{"jsonrpc":"2.0","id":1,"result":{}}`},
	},
}

// writeHTTPCassette records sessions of httpFrame and returns the path.
func writeHTTPCassette(tb testing.TB, sessions [][]httpFrame) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "http.db")
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	for i, msgs := range sessions {
		start := t0.Add(time.Duration(i) * time.Second)
		transport := store.TransportHTTP
		switch {
		case msgs[0].stream == "":
			transport = store.TransportStdio
		case slices.ContainsFunc(msgs, func(m httpFrame) bool { return m.stream == store.StreamLegacySSE }):
			transport = store.TransportLegacySSE
		}
		s, err := w.NewSession(store.SessionInfo{Transport: transport, Upstream: "server", Start: start})
		if err != nil {
			tb.Fatal(err)
		}
		for j, msg := range msgs {
			at := start.Add(time.Duration(j) * time.Millisecond)
			var meta *store.HTTPMeta
			if msg.stream != "" {
				meta = &store.HTTPMeta{Method: "POST", Path: "/mcp", Stream: msg.stream, StreamID: uint64(j + 1)}
				if msg.stream == store.StreamGetSSE || msg.stream == store.StreamLegacySSE {
					meta.Method = "GET"
				}
				if !msg.amend {
					meta.Status = msg.status
				}
			}
			seq := s.Append(msg.dir, at, []byte(msg.json), meta)
			if msg.amend {
				answered := *meta
				answered.Status = msg.status
				s.Amend(store.Message{Seq: seq, Dir: msg.dir, Time: at, Frame: []byte(msg.json), HTTP: &answered})
			}
		}
		if err := s.End(store.EndInfo{Reason: store.EndEOF, Time: start.Add(time.Second)}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestModel_FilterHTTP filters on the status and stream recorded with the
// messages, alone and with the other terms, in a cassette and in its JSONL
// export, on a whole cassette and on messages as a follower adds them.
func TestModel_FilterHTTP(t *testing.T) {
	db := writeHTTPCassette(t, httpSessions)
	jsonl := filepath.Join(t.TempDir(), "http.jsonl")
	out, err := os.Create(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Export(db, out, nil); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, filter string
		want         []string
	}{
		{"a status", "status:202", []string{"s1:3", "s2:1"}},
		{"a class", "status:2xx", []string{"s1:2", "s1:3", "s1:5", "s1:6", "s2:1", "s2:2"}},
		{"alternatives", "status:429|5xx", []string{"s1:7", "s1:8"}},
		{"classes", "status:4xx|5xx", []string{"s1:7", "s1:8"}},
		{"a refused request", "status:4xx kind:request tool:echo", []string{"s1:7"}},
		{"no status matches the negation", "!status:2xx", []string{"s1:1", "s1:4", "s1:7", "s1:8", "s3:1", "s3:2"}},
		{"a status no message has", "status:404", nil},
		{"stdio has none", "session:s3 status:1xx|2xx|3xx|4xx|5xx", nil},
		{"the GET stream", "stream:get-sse", []string{"s1:6"}},
		{"server-sent streams", "stream:get-sse|legacy-sse", []string{"s1:6", "s2:2"}},
		{"no stream matches the negation", "!stream:post-body dir:c2s", []string{"s3:1"}},
		{"stream and status", "stream:json status:200", []string{"s1:5"}},
		{"with a summary term", "dir:c2s status:2xx", []string{"s1:3", "s2:1"}},
		{"with text", "status:200 list_changed", []string{"s1:6"}},
		{"with negated text", "status:200 !list_changed dir:s2c session:s1", []string{"s1:2", "s1:5"}},
		{"with a regexp", `stream:post-body /"id":[34]/`, []string{"s1:7", "s1:8"}},
	}
	for _, path := range []string{db, jsonl} {
		for _, tt := range tests {
			t.Run(filepath.Ext(path)+"/"+tt.name, func(t *testing.T) {
				checkFilterWhole(t, path, tt.filter, tt.want)
			})
		}
	}
}

// checkFilterWhole checks that filter shows want of the recording at path,
// on the whole of it and on what a follower's first poll brings.
func checkFilterWhole(t *testing.T, path, filter string, want []string) {
	t.Helper()
	m, src := openModel(t, path)
	if diff := cmp.Diff(want, filtered(t, m, src, filter)); diff != "" {
		t.Errorf("filter %q (-want +got):\n%s", filter, diff)
	}
	// A follower judges what a poll brings the same way.
	f, err := ParseFilter(filter)
	if err != nil {
		t.Fatal(err)
	}
	fresh := NewModel(path)
	if err := fresh.SetFilter(f, src); err != nil {
		t.Fatal(err)
	}
	b, err := src.Poll(Mark{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Apply(b, src); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, visibleSeqs(fresh)); diff != "" {
		t.Errorf("filter %q on what a poll brought (-want +got):\n%s", filter, diff)
	}
}

// TestModel_FilterHTTPRealRecording filters the shipped recording of
// server-everything over Streamable HTTP (202s for the client's
// notifications, event streams on POSTs, a GET stream that carried no
// message, a DELETE) and checks each filter against the recording's own
// metadata, read whole through the store.
func TestModel_FilterHTTPRealRecording(t *testing.T) {
	path := peertest.CopyShipped(t, "everything-http.db")
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// selectMsgs lists the messages of the recording for which pick holds.
	selectMsgs := func(pick func(m *store.Message, c jsonrpc.Summary) bool) []string {
		var out []string
		for _, s := range tape.Sessions {
			for _, msg := range s.Messages {
				if pick(msg, jsonrpc.Classify(msg.Frame)) {
					out = append(out, fmt.Sprintf("%s:%d", s.Info.ID, msg.Seq))
				}
			}
		}
		return out
	}
	status := func(m *store.Message) int { return m.HTTP.Brief().Status }
	stream := func(m *store.Message) string { return m.HTTP.Brief().Stream }
	clientNotifications := selectMsgs(func(m *store.Message, c jsonrpc.Summary) bool {
		return m.Dir == store.C2S && c.Kind == jsonrpc.Notification
	})
	tests := []struct {
		name, filter string
		want         []string
		notEmpty     bool // the recording has such messages: an empty want is a broken test
	}{
		{"202 is what the client's notifications got", "status:202", clientNotifications, true},
		{"202 by the metadata", "status:202", selectMsgs(func(m *store.Message, _ jsonrpc.Summary) bool { return status(m) == 202 }), true},
		{"200 came with the server's messages", "status:200", selectMsgs(func(m *store.Message, _ jsonrpc.Summary) bool {
			return m.Dir == store.S2C && status(m) == 200
		}), true},
		{"requests answered on an event stream have no status", "!status:2xx", selectMsgs(func(m *store.Message, c jsonrpc.Summary) bool {
			return status(m)/100 != 2
		}), true},
		{"refusals", "status:4xx|5xx", selectMsgs(func(m *store.Message, _ jsonrpc.Summary) bool {
			s, _ := m.HTTP.Refusal()
			return s != 0
		}), false},
		{"the GET stream", "stream:get-sse", selectMsgs(func(m *store.Message, _ jsonrpc.Summary) bool { return stream(m) == store.StreamGetSSE }), false},
		{"the POSTs' event streams", "stream:post-sse", selectMsgs(func(m *store.Message, _ jsonrpc.Summary) bool { return stream(m) == store.StreamPostSSE }), true},
		{"what the client sent", "stream:post-body", selectMsgs(func(m *store.Message, _ jsonrpc.Summary) bool { return m.Dir == store.C2S }), true},
	}
	m, src := openModel(t, path)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.notEmpty && len(tt.want) == 0 {
				t.Fatalf("the recording has no message for %q: re-recorded without them?", tt.filter)
			}
			if diff := cmp.Diff(tt.want, filtered(t, m, src, tt.filter)); diff != "" {
				t.Errorf("filter %q (-want +got):\n%s", tt.filter, diff)
			}
		})
	}
	// The GET stream's exchange carried no message: it is a bare exchange
	// of the session, which no filter shows.
	if !slices.ContainsFunc(tape.Sessions[0].Info.Bare, func(b store.BareExchange) bool { return b.HTTP.Stream == store.StreamGetSSE }) {
		t.Errorf("the recording's bare exchanges %+v lack the GET stream", tape.Sessions[0].Info.Bare)
	}
}
