package replay_test

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// tapeOf builds a one-session tape: "> " lines are client frames, "< "
// lines server frames.
func tapeOf(tb testing.TB, lines ...string) *store.Tape {
	tb.Helper()
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1", Transport: store.TransportStdio}}
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i, l := range lines {
		dir := store.C2S
		switch {
		case strings.HasPrefix(l, "> "):
		case strings.HasPrefix(l, "< "):
			dir = store.S2C
		default:
			tb.Fatalf("tape line %d: want a \"> \" or \"< \" prefix: %q", i, l)
		}
		s.Messages = append(s.Messages, &store.Message{
			Session: "s1", Seq: uint64(i + 1), Dir: dir, Time: t0.Add(time.Duration(i) * time.Millisecond), Frame: []byte(l[2:]),
		})
	}
	return &store.Tape{Sessions: []store.TapeSession{s}}
}

func cassetteOf(tb testing.TB, lines ...string) *replay.Cassette {
	tb.Helper()
	c, err := replay.NewCassette("test.db", tapeOf(tb, lines...))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// lineClient talks to a stdio session one line at a time.
type lineClient struct {
	tb    testing.TB
	in    io.WriteCloser
	lines chan string
}

func dial(tb testing.TB, s *mocktest.Server) *lineClient {
	tb.Helper()
	in, out := s.Pipes()
	c := &lineClient{tb: tb, in: in, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

func (c *lineClient) send(line string) {
	c.tb.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.tb.Fatalf("send: %v", err)
	}
}

func (c *lineClient) recv() string {
	c.tb.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.tb.Fatal("server closed the stream")
		}
		return l
	case <-time.After(10 * time.Second):
		c.tb.Fatal("no answer within 10 s")
	}
	return ""
}

// roundTrip sends and returns the next line, normalised.
func (c *lineClient) roundTrip(line string) string {
	c.tb.Helper()
	c.send(line)
	return norm(c.tb, c.recv())
}

// norm re-encodes a message with sorted keys, for comparisons.
func norm(tb testing.TB, s string) string {
	tb.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		tb.Fatalf("server wrote invalid JSON %q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

var basicTape = []string{
	`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"rec","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"srv","version":"2"}}}`,
	`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","n":1}}}`,
	`< {"result":{"content":[{"type":"text","text":"first"}]},"jsonrpc":"2.0","id":1}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","n":1}}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"second"}]}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":7}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":2}}`,
	`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2,"total":2}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
	`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"grow"}}`,
	`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"grew"}]}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}}`,
	`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
	`> {"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`,
	`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"asked"}]}}`,
	`> {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"hang"}}`,
	`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`,
	`> {"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"file:///a"}}`,
	`< {"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"Resource not found"}}`,
}

func TestServer_Lifecycle(t *testing.T) {
	tests := []struct {
		name, send, want string
	}{
		{"malformed JSON", `{"jsonrpc":`, `{"error":{"code":-32700,"message":"Parse error"},"id":null,"jsonrpc":"2.0"}`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"error":{"code":-32600,"message":"Invalid Request: batches are only for protocol 2025-03-26"},"id":null,"jsonrpc":"2.0"}`},
		{"not an object", `42`, `{"error":{"code":-32600,"message":"Invalid Request: not a JSON-RPC object"},"id":null,"jsonrpc":"2.0"}`},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"error":{"code":-32600,"message":"Invalid Request: jsonrpc must be \"2.0\""},"id":1,"jsonrpc":"2.0"}`},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"error":{"code":-32600,"message":"Invalid Request: id must be a string or a number"},"id":null,"jsonrpc":"2.0"}`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, `{"error":{"code":-32600,"message":"Invalid Request: id must not be null (leave id out for a notification)"},"id":null,"jsonrpc":"2.0"}`},
		{"no method", `{"jsonrpc":"2.0","id":1}`, `{"error":{"code":-32600,"message":"Invalid Request: neither a request, a notification nor a response"},"id":1,"jsonrpc":"2.0"}`},
		{"ping", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, `{"id":"p","jsonrpc":"2.0","result":{}}`},
		{"unknown method", `{"jsonrpc":"2.0","id":9,"method":"nope/nope"}`, `{"error":{"code":-32601,"message":"Method not found: nope/nope (mcpmock: nothing recorded or scripted answers it)"},"id":9,"jsonrpc":"2.0"}`},
		{"server/discover", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{}}}`, `{"error":{"code":-32601,"message":"Method not found: server/discover"},"id":1,"jsonrpc":"2.0"}`},
		{"initialize, another client", `{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"other","version":"9"}}}`,
			`{"id":"x","jsonrpc":"2.0","result":{"capabilities":{"tools":{"listChanged":true}},"protocolVersion":"2025-06-18","serverInfo":{"name":"srv","version":"2"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
			c := dial(t, s)
			if got := c.roundTrip(tt.send); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// A reply with a null id (a client's error for a request it could not
// parse) answers nothing mcpmock asked: it is said on stderr and gets no
// reply, where a request with a null id gets -32600 (TestServer_Lifecycle).
func TestServer_NullIDReplyIsNotAnswered(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	if got, want := c.roundTrip(`{"jsonrpc":"2.0","id":"p","method":"ping"}`), `{"id":"p","jsonrpc":"2.0","result":{}}`; got != want {
		t.Errorf("after the null-id reply, ping got %s, want %s", got, want)
	}
	if !strings.Contains(s.Warnings(), "client sent a reply with id null") {
		t.Errorf("nothing said of the null-id reply; log:\n%s", s.Warnings())
	}
}

func TestServer_Replay(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	c := dial(t, s)
	// It declares roots, as the recorded client did: it is asked for them.
	c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"live","version":"1"}}}`)
	if !strings.Contains(s.Warnings(), "client asked for protocol version 2025-11-25; mcpmock answers 2025-06-18: its sources do not speak 2025-11-25") {
		t.Errorf("no protocol version warning; log:\n%s", s.Warnings())
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	steps := []struct{ send, want string }{
		// ids rewritten, key order and white space ignored, repeats in order, then the last again
		{`{"id":"a","jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"n":1, "text":"a"},"name":"echo"}}`, `{"id":"a","jsonrpc":"2.0","result":{"content":[{"text":"first","type":"text"}]}}`},
		{`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"a","n":1}}}`, `{"id":"b","jsonrpc":"2.0","result":{"content":[{"text":"second","type":"text"}]}}`},
		{`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"text":"a","n":1}}}`, `{"id":"c","jsonrpc":"2.0","result":{"content":[{"text":"second","type":"text"}]}}`},
		// recorded errors replayed
		{`{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"file:///a"}}`, `{"error":{"code":-32002,"message":"Resource not found"},"id":10,"jsonrpc":"2.0"}`},
	}
	for _, st := range steps {
		if got := c.roundTrip(st.send); got != st.want {
			t.Errorf("sent %s\n got  %s\n want %s", st.send, got, st.want)
		}
	}

	// progress re-keyed to the live token, in order, before the answer
	c.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"live-tok"}}}`)
	for _, want := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":"live-tok","total":2}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":2,"progressToken":"live-tok","total":2}}`,
		// the progress barrier: the reply waits until the client answers a ping
		`{"id":1,"jsonrpc":"2.0","method":"ping"}`,
	} {
		if got := norm(t, c.recv()); got != want {
			t.Errorf("progress: got %s, want %s", got, want)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	if got, want := norm(t, c.recv()), `{"id":20,"jsonrpc":"2.0","result":{"content":[]}}`; got != want {
		t.Errorf("after progress: got %s, want %s", got, want)
	}

	// list_changed after the call that caused it
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"grow"}}`); !strings.Contains(got, "grew") {
		t.Errorf("grow: %s", got)
	}
	if got := norm(t, c.recv()); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Errorf("after grow: got %s, want list_changed", got)
	}

	// a server→client request with a fresh id; the answer waits for the reply
	c.send(`{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"ask"}}`)
	var call struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal([]byte(c.recv()), &call)
	if call.Method != "roots/list" || len(call.ID) == 0 {
		t.Fatalf("want a roots/list request, got %+v", call)
	}
	c.send(`{"jsonrpc":"2.0","id":` + string(call.ID) + `,"result":{"roots":[]}}`)
	if got := norm(t, c.recv()); !strings.Contains(got, "asked") {
		t.Errorf("ask: %s", got)
	}

	// a hung call, cancelled: no answer; the next request still is
	c.send(`{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"hang"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":23}}`)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":24,"method":"ping"}`); got != `{"id":24,"jsonrpc":"2.0","result":{}}` {
		t.Errorf("after cancel: %s", got)
	}

	// unmatched: the nearest recorded request and a diff
	got := c.roundTrip(`{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b","n":1}}}`)
	for _, want := range []string{`"code":-32602`, `no recorded answer for tools/call`, `test.db s1#4`, `- params.arguments.text=\"a\"`, `+ params.arguments.text=\"b\"`} {
		if !strings.Contains(got, want) {
			t.Errorf("unmatched error lacks %s:\n%s", want, got)
		}
	}
	if !strings.Contains(s.Warnings(), "unmatched tools/call") {
		t.Errorf("unmatched not logged:\n%s", s.Warnings())
	}
	r := s.Report()
	if want := `{"arguments":{"n":1,"text":"b"},"name":"echo"}`; len(r.Unmatched) != 1 || r.Unmatched[0].Method != "tools/call" || r.Unmatched[0].Params != want {
		t.Errorf("report unmatched = %+v, want tools/call with params %s", r.Unmatched, want)
	}
	if len(r.Unused) != 0 {
		t.Errorf("report unused = %v", r.Unused)
	}
}

// In strict order a recorded client ping does not count: mcpmock answers
// every live ping itself, so the cassette never sees one.
func TestServer_StrictSkipsRecordedPings(t *testing.T) {
	tape := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a"}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":4,"result":{}}`,
	}
	s := mocktest.New(t, []replay.Source{cassetteOf(t, tape...)}, mocktest.WithMatch("strict"))
	c := dial(t, s)
	for _, st := range []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"id":1,"jsonrpc":"2.0","result":{"tools":[]}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a"}}`, `{"id":2,"jsonrpc":"2.0","result":{"content":[]}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a"}}`, `every recorded request was already answered`},
	} {
		if got := c.roundTrip(st.send); !strings.Contains(got, st.want) {
			t.Errorf("sent %s\n got  %s\n want %s", st.send, got, st.want)
		}
	}
	if r := s.Report(); r.Matched != 2 || len(r.Unused) != 0 || len(r.Unmatched) != 1 {
		t.Errorf("report: %d matched, unmatched %+v, unused %v; want 2, the extra call, none", r.Matched, r.Unmatched, r.Unused)
	}
}

// A 2026-07-28 subscriptions/listen stays open for the whole session: only
// its acknowledgement is replayed on it; a list_changed the server sent
// while it was open follows the call that preceded it.
func TestServer_ListenStream(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"grow"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		// answered only because it was cancelled: replayed as unanswered
		`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
	)})
	c := dial(t, s)
	c.send(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`)
	if got := norm(t, c.recv()); !strings.Contains(got, "notifications/subscriptions/acknowledged") {
		t.Fatalf("listen: got %s, want the acknowledgement", got)
	}
	// nothing else came with the listen: the next line answers a ping
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":"q","method":"ping"}`); !strings.Contains(got, `"id":"q"`) {
		t.Fatalf("after listen: got %s, want the ping answer", got)
	}
	c.send(`{"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":"grow"}}`)
	for _, want := range []string{`"id":"g"`, "notifications/tools/list_changed"} {
		if got := c.recv(); !strings.Contains(got, want) {
			t.Errorf("after grow: got %s, want %s", got, want)
		}
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l"}}`)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); !strings.Contains(got, `"id":"p"`) {
		t.Errorf("after cancelling listen: %s", got)
	}
}
