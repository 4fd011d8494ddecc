package replay

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// TestCassette_NotAskedLeftOut: a server request that mcpmock's fallback
// answered itself without asking its client (its answer noted
// NoteNotAsked, perhaps with a note of the recorder's after it) is no
// part of the conversation: neither it nor that answer is replayed after
// the call it followed. What else the server sent there still is,
// another roots/list included, and a client request with the same id
// (the client's own id space) is still answered.
func TestCassette_NotAskedLeftOut(t *testing.T) {
	for _, note := range []string{NoteNotAsked, NoteNotAsked + "; refused without a message: busy"} {
		var s sessionBuilder
		s.add(store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`, "")
		s.add(store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "")
		s.add(store.S2C, `{"jsonrpc":"2.0","id":7,"method":"roots/list"}`, "")
		s.add(store.C2S, `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"mcpmock: not asked of the client"}}`, note)
		s.add(store.S2C, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, "")
		s.add(store.S2C, `{"jsonrpc":"2.0","id":8,"method":"roots/list","params":{"again":true}}`, "")
		s.add(store.C2S, `{"jsonrpc":"2.0","id":8,"result":{"roots":[]}}`, "")
		s.add(store.C2S, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"b"}}`, "")
		s.add(store.S2C, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"b"}]}}`, "")

		sess, p := openAndCallA(t, s.TapeSession)
		var after []string
		for _, o := range p.Reply.After {
			after = append(after, o.Method+" "+string(o.Params))
		}
		if len(after) != 2 || after[0] != "notifications/tools/list_changed " || after[1] != `roots/list {"again":true}` {
			t.Errorf("note %q: after a: %q; want the list_changed and the second roots/list", note, after)
		}
		if p, ok := sess.Prepare(&Request{ID: []byte("9"), Method: "tools/call", Params: []byte(`{"name":"b"}`)}); !ok || string(p.Reply.Result) != `{"content":[{"type":"text","text":"b"}]}` {
			t.Errorf("note %q: b: %v %+v", note, ok, p)
		}
	}
}

// openAndCallA replays s to a session and prepares its answer to a call of
// tool a.
func openAndCallA(t *testing.T, s store.TapeSession) (*cassetteSession, *Prepared) {
	t.Helper()
	c, err := NewCassette("t", &store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		t.Fatal(err)
	}
	sess := c.Open().(*cassetteSession)
	p, ok := sess.Prepare(&Request{ID: []byte("9"), Method: "tools/call", Params: []byte(`{"name":"a"}`)})
	if !ok {
		t.Fatal("no match for a")
	}
	return sess, p
}

// TestCassette_NotAskedIDUsedAgain: a server that uses a request id again
// once it was answered (its ids need only be unique among requests in
// flight) loses only the exchange mcpmock refused: the later roots/list
// with the same id, which the client was asked and answered, is replayed
// after the call that caused it.
func TestCassette_NotAskedIDUsedAgain(t *testing.T) {
	var s sessionBuilder
	s.add(store.S2C, `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`, "")
	s.add(store.C2S, `{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"mcpmock: not asked of the client"}}`, NoteNotAsked)
	s.add(store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`, "")
	s.add(store.S2C, `{"jsonrpc":"2.0","id":0,"method":"roots/list","params":{"during":"a"}}`, "")
	s.add(store.C2S, `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`, "")
	s.add(store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "")

	if asked := askedDuringA(t, s.TapeSession); len(asked) != 1 || asked[0] != `roots/list {"during":"a"}` {
		t.Errorf("server requests during a: %q; want the roots/list the client answered", asked)
	}
}

// askedPeer is a Peer that notes the requests it is asked and answers
// each with an empty object.
type askedPeer struct{ asked []string }

func (p *askedPeer) Notify(string, json.RawMessage) error        { return nil }
func (p *askedPeer) NotifySession(string, json.RawMessage) error { return nil }
func (p *askedPeer) ProtocolVersion() string                     { return "2025-11-25" }
func (p *askedPeer) Call(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.asked = append(p.asked, method+" "+string(params))
	return json.RawMessage(`{}`), nil
}

// TestCassette_NotAskedIDByValue: the pairing of a server request with its
// answer compares ids by value, so that a request whose refusal wrote its
// id otherwise ("0" for "\u0030") is still left out, and one the client
// answered with its id written otherwise (0 for 0.0) is still replayed.
func TestCassette_NotAskedIDByValue(t *testing.T) {
	var s sessionBuilder
	s.add(store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`, "")
	s.add(store.S2C, `{"jsonrpc":"2.0","id":"\u0030","method":"roots/list","params":{"refused":true}}`, "")
	s.add(store.C2S, `{"jsonrpc":"2.0","id":"0","error":{"code":-32603,"message":"mcpmock: not asked of the client"}}`, NoteNotAsked)
	s.add(store.S2C, `{"jsonrpc":"2.0","id":0.0,"method":"roots/list","params":{"during":"a"}}`, "")
	s.add(store.C2S, `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`, "")
	s.add(store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "")

	if asked := askedDuringA(t, s.TapeSession); len(asked) != 1 || asked[0] != `roots/list {"during":"a"}` {
		t.Errorf("server requests during a: %q; want the roots/list the client answered", asked)
	}
}

// sessionBuilder builds session s1 by hand, numbering its messages from 1.
type sessionBuilder struct{ store.TapeSession }

func (b *sessionBuilder) add(dir store.Dir, frame, note string) {
	b.Info.ID = "s1"
	b.Messages = append(b.Messages, &store.Message{Session: "s1", Seq: uint64(len(b.Messages) + 1), Dir: dir, Frame: []byte(frame), Note: note})
}

// askedDuringA replays s, plays its answer to a call of tool a, and
// returns the server requests it asked the client meanwhile.
func askedDuringA(t *testing.T, s store.TapeSession) []string {
	t.Helper()
	_, p := openAndCallA(t, s)
	if p.Play == nil {
		t.Fatalf("a plays nothing during the call: %+v", p.Reply)
	}
	peer := &askedPeer{}
	p.Play(t.Context(), peer, &Request{ID: []byte("9"), Method: "tools/call", Params: []byte(`{"name":"a"}`)})
	return peer.asked
}
