package rerun

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// echoConn is a server that answers every request at once with an empty
// result, and asks the client one question (roots/list) before its first
// answer: enough to drive every path of the driver.
type echoConn struct {
	mu    sync.Mutex
	d     *driver
	sent  [][]byte
	asked bool
}

func (c *echoConn) send(frame []byte, _ *step) error {
	c.mu.Lock()
	c.sent = append(c.sent, frame)
	ask := !c.asked
	c.asked = true
	c.mu.Unlock()
	s := jsonrpc.Classify(frame)
	if s.Kind != jsonrpc.Request || s.ID == "" {
		return nil
	}
	if ask {
		c.d.receive([]byte(`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`))
	}
	c.d.receive([]byte(`{"jsonrpc":"2.0","id":` + s.ID + `,"result":{}}`))
	return nil
}

func (c *echoConn) close() store.EndInfo { return store.EndInfo{Reason: store.EndClosed} }

// Whatever a recording holds, the driver sends each of the recorded
// client's frames once, in order, except its replies to server requests
// (it answers those itself), and it finishes.
func FuzzDriver(f *testing.F) {
	f.Add("> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n< {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n> {\"jsonrpc\":\"2.0\",\"method\":\"n\"}")
	f.Add("< {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"roots/list\"}\n> {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"roots\":[]}}\n> {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"x\"}\n> not json\n> [1,2]")
	f.Add("> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n< {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n< {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}")
	f.Fuzz(func(t *testing.T, text string) {
		s := &store.TapeSession{}
		for l := range strings.SplitSeq(text, "\n") {
			switch {
			case strings.HasPrefix(l, "> "):
				s.Messages = append(s.Messages, &store.Message{Dir: store.C2S, Frame: []byte(l[2:])})
			case strings.HasPrefix(l, "< "):
				s.Messages = append(s.Messages, &store.Message{Dir: store.S2C, Frame: []byte(l[2:])})
			}
		}
		p := planOf(s)
		d := &driver{plan: p, ready: make(chan struct{}), replyKick: make(chan struct{}, 1), answered: map[string]chan struct{}{}, sentAs: map[string]string{}, nextReply: map[string]int{}}
		c := &echoConn{d: d}
		d.conn = c
		close(d.ready)
		done := make(chan error, 1)
		go func() { done <- d.run(context.Background(), 20*time.Millisecond) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the driver did not finish")
		}
		var want [][]byte
		for _, st := range p.steps {
			want = append(want, st.frame)
		}
		var got [][]byte
		for _, f := range c.sent {
			if bytes.Contains(f, []byte(`"id":"srv-1"`)) && jsonrpc.Classify(f).Kind != jsonrpc.Request {
				continue // its own reply to the question
			}
			got = append(got, f)
		}
		if len(got) != len(want) {
			t.Fatalf("sent %d recorded frames, the plan has %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("frame %d sent as %q, recorded %q", i, got[i], want[i])
			}
		}
	})
}

// The recorded client's replies are given in order, the last again when
// they run out; ping gets {}; a method the recording never answered gets
// -32601.
func TestDriver_Reply(t *testing.T) {
	d := &driver{plan: &plan{replies: map[string][][]byte{
		"roots/list": {[]byte(`"result":{"roots":[{"uri":"file:///a"}]}`), []byte(`"result":{"roots":[]}`)},
	}}, nextReply: map[string]int{}}
	for _, tt := range []struct{ method, id, want string }{
		{"roots/list", `1`, `{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///a"}]}}`},
		{"roots/list", `"b"`, `{"jsonrpc":"2.0","id":"b","result":{"roots":[]}}`},
		{"roots/list", `3`, `{"jsonrpc":"2.0","id":3,"result":{"roots":[]}}`},
		{"ping", `4`, `{"jsonrpc":"2.0","id":4,"result":{}}`},
		{"sampling/createMessage", `5`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"mcpspy rerun: the recording has no client reply to sampling/createMessage"}}`},
	} {
		if got := string(d.reply(tt.method, tt.id)); got != tt.want {
			t.Errorf("%s %s: got %s\nwant %s", tt.method, tt.id, got, tt.want)
		}
	}
}

// failConn answers the requests named in answer at once, and fails every
// send from the failAt-th (1-based) on: a server that went away.
type failConn struct {
	d      *driver
	answer map[string]bool
	failAt int
	sends  int
}

func (c *failConn) send(frame []byte, _ *step) error {
	c.sends++
	if c.sends >= c.failAt {
		return errors.New("gone")
	}
	if s := jsonrpc.Classify(frame); c.answer[s.ID] {
		c.d.receive([]byte(`{"jsonrpc":"2.0","id":` + s.ID + `,"result":{}}`))
	}
	return nil
}

func (c *failConn) close() store.EndInfo { return store.EndInfo{Reason: store.EndEOF} }

// A rerun that stops at a send it cannot make says, of each request the
// recording has an answer to, that it was never answered: those sent
// whose answer had not come, and those never sent.
func TestDriver_StopsAtAFailedSend(t *testing.T) {
	recorded := &store.TapeSession{}
	for _, f := range []struct {
		dir   store.Dir
		frame string
	}{
		{store.C2S, `{"jsonrpc":"2.0","id":1,"method":"a"}`},
		{store.C2S, `{"jsonrpc":"2.0","id":2,"method":"b"}`},
		{store.C2S, `{"jsonrpc":"2.0","method":"notifications/n"}`},
		{store.S2C, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{store.S2C, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{store.C2S, `{"jsonrpc":"2.0","id":3,"method":"c"}`},
		{store.C2S, `{"jsonrpc":"2.0","id":4,"method":"hangs"}`},
		{store.S2C, `{"jsonrpc":"2.0","id":3,"result":{}}`},
	} {
		recorded.Messages = append(recorded.Messages, &store.Message{Dir: f.dir, Frame: []byte(f.frame)})
	}
	tests := []struct {
		name   string
		answer map[string]bool
		failAt int
		want   []string
	}{
		{"at the notification, nothing answered", nil, 3, []string{
			"a (id 1): never answered: the rerun stopped first",
			"b (id 2): never answered: the rerun stopped first",
			"c (id 3): never answered: not sent, the rerun stopped first",
		}},
		{"at the notification, one answered", map[string]bool{"2": true}, 3, []string{
			"a (id 1): never answered: the rerun stopped first",
			"c (id 3): never answered: not sent, the rerun stopped first",
		}},
		{"at the second request", map[string]bool{"1": true}, 2, []string{
			"b (id 2): never answered: not sent, the rerun stopped first",
			"c (id 3): never answered: not sent, the rerun stopped first",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &driver{plan: planOf(recorded), ready: make(chan struct{}), replyKick: make(chan struct{}, 1), answered: map[string]chan struct{}{}, sentAs: map[string]string{}, nextReply: map[string]int{}}
			d.conn = &failConn{d: d, answer: tt.answer, failAt: tt.failAt}
			close(d.ready)
			if err := d.run(context.Background(), time.Second); err == nil || !strings.Contains(err.Error(), "gone") {
				t.Fatalf("run: %v, want the send's error", err)
			}
			d.noteCut()
			if !slices.Equal(d.unanswered, tt.want) {
				t.Errorf("unanswered:\n%s\nwant:\n%s", strings.Join(d.unanswered, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
