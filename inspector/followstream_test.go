package inspector

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

// streamMeta is HTTP metadata of a message on stream id of kind stream.
func streamMeta(stream string, id uint64, status int) *store.HTTPMeta {
	method := "POST"
	if stream == store.StreamGetSSE {
		method = "GET"
	}
	return &store.HTTPMeta{Method: method, Path: "/mcp", Status: status, Stream: stream, StreamID: id}
}

// streamsSession is a Streamable HTTP session whose streams interleave: a
// call answered on its POST's event stream with progress (stream 3)
// while the GET stream (4) brings log messages, a ping answered with a
// JSON body (5), a message recorded without a stream id (12) and a
// WebSocket frame, which has none either (13).
var streamsSession = []metaFrame{
	{store.C2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, streamMeta(store.StreamPostBody, 1, 0)},
	{store.S2C, `{"jsonrpc":"2.0","id":0,"result":{}}`, streamMeta(store.StreamPostSSE, 1, 200)},
	{store.C2S, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, streamMeta(store.StreamPostBody, 2, 202)},
	{store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t"}}}`, streamMeta(store.StreamPostBody, 3, 0)},
	{store.S2C, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`, streamMeta(store.StreamPostSSE, 3, 200)},
	{store.S2C, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tick"}}`, streamMeta(store.StreamGetSSE, 4, 200)},
	{store.S2C, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":2}}`, streamMeta(store.StreamPostSSE, 3, 200)},
	{store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, streamMeta(store.StreamPostSSE, 3, 200)},
	{store.C2S, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, streamMeta(store.StreamPostBody, 5, 0)},
	{store.S2C, `{"jsonrpc":"2.0","id":2,"result":{}}`, streamMeta(store.StreamJSON, 5, 200)},
	{store.S2C, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tock"}}`, streamMeta(store.StreamGetSSE, 4, 200)},
	{store.C2S, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, streamMeta(store.StreamPostBody, 0, 0)},
	{store.C2S, `{"jsonrpc":"2.0","id":4,"method":"ping"}`, &store.HTTPMeta{Method: "GET", Path: "/ws", Status: 101, Stream: store.StreamWS, WSOpcode: 1}},
}

func TestParseFilter_StreamID(t *testing.T) {
	tests := []struct {
		filter string
		names  []string
		ids    []uint64
		err    string
	}{
		{filter: "stream:6", ids: []uint64{6}},
		{filter: "stream:3|12", ids: []uint64{3, 12}},
		{filter: "stream:get-sse|4", names: []string{"get-sse"}, ids: []uint64{4}},
		{filter: "stream:18446744073709551615", ids: []uint64{1<<64 - 1}},
		{filter: "stream:0", err: `filter: "stream:0": a stream id is a number from 1, as show --http prints it after the kind (post-sse#6 is stream:6), not "0"`},
		{filter: "stream:6x", err: `a stream id is a number from 1`},
		{filter: "stream:18446744073709551616", err: `not "18446744073709551616"`},
		{filter: "stream:post-sse#6", err: `unknown stream "post-sse#6" (want post-body, json, post-sse, get-sse, legacy-sse or ws, or a stream id: stream:6)`},
		{filter: "stream:-1", err: `unknown stream "-1"`},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("ParseFilter(%q) = %v, want an error with %q", tt.filter, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := f.terms[0]
			if !cmp.Equal(got.vals, tt.names) || !cmp.Equal(got.streamIDs, tt.ids) {
				t.Errorf("names %q ids %v, want %q %v", got.vals, got.streamIDs, tt.names, tt.ids)
			}
			if want := map[bool]reads{true: readsMeta, false: readsHTTP}[len(tt.ids) > 0]; got.reads() != want {
				t.Errorf("reads %b, want %b", got.reads(), want)
			}
		})
	}
}

// TestModel_FilterStreamID keeps one stream's messages, alone and with
// the other terms, on a cassette and its JSONL export, on the whole and on
// what a follower's poll brings.
func TestModel_FilterStreamID(t *testing.T) {
	db := writeHTTPSession(t, "streams.db", store.SessionInfo{Transport: store.TransportHTTP}, streamsSession)
	all := []string{"s1:1", "s1:2", "s1:3", "s1:4", "s1:5", "s1:6", "s1:7", "s1:8", "s1:9", "s1:10", "s1:11", "s1:12", "s1:13"}
	tests := []struct {
		name, filter string
		want         []string
	}{
		{"a POST and its event stream", "stream:3", []string{"s1:4", "s1:5", "s1:7", "s1:8"}},
		{"the GET stream", "stream:4", []string{"s1:6", "s1:11"}},
		{"a POST and its JSON answer", "stream:5", []string{"s1:9", "s1:10"}},
		{"as the F key writes it", "session:s1 stream:3", []string{"s1:4", "s1:5", "s1:7", "s1:8"}},
		{"ids in alternatives", "stream:3|5", []string{"s1:4", "s1:5", "s1:7", "s1:8", "s1:9", "s1:10"}},
		{"an id and a kind", "stream:get-sse|5", []string{"s1:6", "s1:9", "s1:10", "s1:11"}},
		{"negated", "!stream:3", []string{"s1:1", "s1:2", "s1:3", "s1:6", "s1:9", "s1:10", "s1:11", "s1:12", "s1:13"}},
		{"with a summary term", "stream:3 dir:s2c", []string{"s1:5", "s1:7", "s1:8"}},
		{"with a status", "stream:3 status:200", []string{"s1:5", "s1:7", "s1:8"}},
		{"with text", "stream:3 progress", []string{"s1:4", "s1:5", "s1:7"}},
		{"with a kind and a regexp", `stream:3 kind:notification /"progress":2/`, []string{"s1:7"}},
		{"an id no message has", "stream:99", nil},
		{"another session's", "session:s2 stream:3", nil},
		{"no id is no stream", "!stream:1|2|3|4|5", []string{"s1:12", "s1:13"}},
	}
	for _, path := range []string{db, jsonlTwin(t, db)} {
		for _, tt := range tests {
			t.Run(filepath.Ext(path)+"/"+tt.name, func(t *testing.T) {
				if m, _ := openModel(t, path); m.Len() != len(all) {
					t.Fatalf("%d messages, want %d", m.Len(), len(all))
				}
				checkFilterWhole(t, path, tt.filter, tt.want)
			})
		}
	}
}

// TestModel_StreamFilter: the filter the F key sets names the message's
// session and stream; a message with no stream says why it has none.
func TestModel_StreamFilter(t *testing.T) {
	db := writeHTTPSession(t, "streams.db", store.SessionInfo{Transport: store.TransportHTTP}, streamsSession)
	m, src := openModel(t, db)
	tests := []struct {
		seq       int // 1-based, as the table shows it
		want, err string
	}{
		{seq: 5, want: "session:s1 stream:3"},
		{seq: 4, want: "session:s1 stream:3"},
		{seq: 11, want: "session:s1 stream:4"},
		{seq: 10, want: "session:s1 stream:5"},
		{seq: 12, err: "s1 #12 has no stream id to follow (its HTTP metadata was recorded without one)"},
		{seq: 13, err: "s1 #13 went over WebSocket, whose one connection is the whole session: select the session in the sessions pane"},
	}
	for _, tt := range tests {
		got, err := m.StreamFilter(tt.seq-1, src)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
			t.Errorf("seq %d: %q, %v; want %q, %q", tt.seq, got, err, tt.want, tt.err)
		}
	}
	stdio, stdioSrc := openModel(t, writeCassette(t, sampleSession))
	if _, err := stdio.StreamFilter(0, stdioSrc); err == nil || err.Error() != "s1 #1 came over stdio, not on an HTTP stream to follow" {
		t.Errorf("stdio: %v", err)
	}
}

// TestView_FollowStream: F on a progress notification filters the table
// to its call's stream, with the notification still selected; on a
// message with no stream it says why and leaves the filter alone.
func TestView_FollowStream(t *testing.T) {
	db := writeHTTPSession(t, "streams.db", store.SessionInfo{Transport: store.TransportHTTP}, streamsSession)
	m, src := openModel(t, db)
	h := startApp(t, m, src, Options{}, 100, 30)
	h.waitFor(wait, []string{"streams.db 13/13"})
	for range 4 { // to seq 5, the first progress
		h.keys("j")
	}
	h.waitFor(wait, []string{"s1 #5  ←  notification"})
	h.keys("F")
	h.waitFor(wait, []string{"streams.db 4/13", "filter: session:s1 stream:3", "s1 #5  ←  notification"}, "tick", "ping")
	if r := h.selected(); r.Seq != 5 {
		t.Errorf("selected seq %d after F, want 5 still", r.Seq)
	}
	h.keys("f")
	h.key(ctrlU)
	h.key(keyEnter)
	h.waitFor(wait, []string{"streams.db 13/13"})
	h.keys("G")
	h.keys("k")
	h.waitFor(wait, []string{"s1 #12  →  request"})
	h.keys("F")
	h.waitFor(wait, []string{"streams.db 13/13", "s1 #12 has no stream id to follow"}, "filter:")
}
