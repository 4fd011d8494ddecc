package replay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// fakeSource answers a fixed set of methods, the way a script would.
type fakeSource struct{ replies map[string]replay.Reply }

func (f *fakeSource) Name() string               { return "fake.yaml" }
func (f *fakeSource) Unused() []string           { return nil }
func (f *fakeSource) Open() replay.SessionSource { return f }
func (f *fakeSource) Answer(ctx context.Context, p replay.Peer, req *replay.Request) (replay.Reply, bool) {
	r, ok := f.replies[req.Method]
	if ok && req.Method == "tools/call" {
		_ = p.Notify("notifications/message", json.RawMessage(`{"level":"info","data":"from fake"}`))
	}
	return r, ok
}

func TestServer_LayersAndFaults(t *testing.T) {
	fake := &fakeSource{replies: map[string]replay.Reply{
		"tools/call":       {Result: json.RawMessage(`{"content":[{"type":"text","text":"patched"}]}`)},
		"prompts/list":     {Raw: [][]byte{[]byte(`{"jsonrpc":"2.0","id":"wrong","result":{}}`), []byte(`not json`)}},
		"resources/list":   {Error: &replay.RPCError{Code: -32000, Message: "boom"}, After: []replay.Outgoing{{Method: "notifications/resources/list_changed"}}},
		"logging/setLevel": {Result: json.RawMessage("{\n  \"pretty\": true\n}")},
		"bye":              {Result: json.RawMessage(`{}`), CloseAfter: true},
	}}
	s := mocktest.New(t, []replay.Source{fake, cassetteOf(t, basicTape...)})
	c := dial(t, s)
	steps := []struct {
		send string
		want []string
	}{
		// the first source that answers wins: the fake patches tools/call
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","n":1}}}`,
			[]string{`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"from fake"}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"patched"}]}}`}},
		// the cassette answers what the fake does not
		{`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a"}}`,
			[]string{`{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Resource not found"}}`}},
		// raw frames go out verbatim
		{`{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`, []string{`{"jsonrpc":"2.0","id":"wrong","result":{}}`, `not json`}},
		{`{"jsonrpc":"2.0","id":4,"method":"resources/list"}`,
			[]string{`{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"boom"}}`, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`}},
		// a pretty-printed result still fits one line
		{`{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"info"}}`, []string{`{"jsonrpc":"2.0","id":5,"result":{"pretty":true}}`}},
		{`{"jsonrpc":"2.0","id":6,"method":"bye"}`, []string{`{"jsonrpc":"2.0","id":6,"result":{}}`}},
	}
	for _, st := range steps {
		c.send(st.send)
		for _, w := range st.want {
			if got := c.recv(); got != w {
				t.Errorf("after %s:\n got  %s\n want %s", st.send, got, w)
			}
		}
	}
	// CloseAfter: the connection ends
	select {
	case l, ok := <-c.lines:
		if ok {
			t.Errorf("after CloseAfter: got %s, want the stream closed", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stream not closed after CloseAfter")
	}
}

// TestServer_TimingRecorded: --timing recorded answers after the
// recorded time. The client keeps stdin open until its answer comes:
// at the end of stdin a recorded wait is given up.
func TestServer_TimingRecorded(t *testing.T) {
	srv, err := replay.NewServer([]replay.Source{cassetteOf(t, basicTape...)}, replay.Options{Timing: "recorded", Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), sr, sw) }()
	if _, err := io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(cr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	cw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + "\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if r := srv.Report(); r.Matched != 1 || len(r.Interrupted) != 0 {
		t.Errorf("report %+v", r)
	}
}
