package script

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
)

// fakePeer records what a session sends while answering.
type fakePeer struct {
	mu      sync.Mutex
	version string
	sent    []string // "method params"; requests as "call method params"
	// answers answers the requests the session sends; nil answers none.
	answers func(method string, params json.RawMessage) (json.RawMessage, error)
}

func (p *fakePeer) Notify(method string, params json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, method+" "+string(params))
	return nil
}

func (p *fakePeer) NotifySession(method string, params json.RawMessage) error {
	return p.Notify("(session) "+method, params)
}

func (p *fakePeer) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.Notify("call "+method, params)
	if p.answers == nil {
		return nil, &replay.RPCError{Code: -32601, Message: "fake peer answers no requests"}
	}
	return p.answers(method, params)
}

func (p *fakePeer) ProtocolVersion() string { return p.version }

func (p *fakePeer) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sent
	p.sent = nil
	return s
}

func example(name string) string {
	return filepath.Join(peertest.ModuleRoot(), "cassettes", name)
}

func mustLoad(tb testing.TB, name string) *Script {
	tb.Helper()
	src, err := Load(example(name))
	if err != nil {
		tb.Fatalf("load %s: %v", name, err)
	}
	return src.(*Script)
}

// ask sends one request and returns the reply; ids count up per call.
type client struct {
	tb   testing.TB
	ss   replay.SessionSource
	peer *fakePeer
	id   int
}

func newClient(tb testing.TB, s *Script) *client {
	return &client{tb: tb, ss: s.Open(), peer: &fakePeer{}}
}

func (c *client) ask(method string, params any) (replay.Reply, bool) {
	c.tb.Helper()
	c.id++
	req := &replay.Request{ID: json.RawMessage(itoa(c.id)), Method: method}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			c.tb.Fatal(err)
		}
		req.Params = b
	}
	return c.ss.Answer(context.Background(), c.peer, req)
}

// result asks and decodes a successful result.
func (c *client) result(method string, params any) map[string]any {
	c.tb.Helper()
	r, ok := c.ask(method, params)
	if !ok {
		c.tb.Fatalf("%s: script did not answer", method)
	}
	if r.Error != nil || r.Result == nil {
		c.tb.Fatalf("%s: want a result, got %+v", method, r)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		c.tb.Fatal(err)
	}
	return m
}

// listed lists (method: tools/list, resources/list, …) and returns the
// key member of each item in section, in order, joined by spaces.
func (c *client) listed(method, section, key string) string {
	c.tb.Helper()
	var keys []string
	for _, item := range c.result(method, nil)[section].([]any) {
		keys = append(keys, item.(map[string]any)[key].(string))
	}
	return strings.Join(keys, " ")
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func toolCall(name string, args any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// firstText returns the text of the first content block of a tools/call result.
func firstText(tb testing.TB, res map[string]any) string {
	tb.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		tb.Fatalf("no content in %v", res)
	}
	b, _ := content[0].(map[string]any)
	s, _ := b["text"].(string)
	return s
}
