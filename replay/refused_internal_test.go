package replay

import (
	"testing"

	"github.com/mcptape/mcptape/store"
)

// TestCassette_RefusedRequest: a request recorded with a bare error
// status and no answer becomes that status; an answer recorded after
// all wins; a 202 or a status below 400 changes nothing; and a refused
// request takes none of the server traffic that follows it.
func TestCassette_RefusedRequest(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		answered bool // an answer follows the request
		want     Reply
	}{
		{"503", 503, false, Reply{HTTPStatus: 503}},
		{"401", 401, false, Reply{HTTPStatus: 401}},
		{"answered all the same", 503, true, Reply{Result: []byte(`{"ok":1}`)}},
		{"202", 202, false, Reply{NoReply: true}},
		{"no status", 0, false, Reply{NoReply: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store.TapeSession{Info: store.SessionInfo{ID: "s1"}}
			add := func(dir store.Dir, frame string, meta *store.HTTPMeta) {
				s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(len(s.Messages) + 1), Dir: dir, Frame: []byte(frame), HTTP: meta})
			}
			add(store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`, &store.HTTPMeta{Method: "POST", Status: tt.status, Stream: store.StreamPostBody})
			if tt.answered {
				add(store.S2C, `{"jsonrpc":"2.0","id":1,"result":{"ok":1}}`, &store.HTTPMeta{Status: 200, Stream: store.StreamJSON})
			}
			// Without HTTP metadata, a message goes to the newest request
			// open: not to a refused one.
			add(store.S2C, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`, nil)
			c, err := NewCassette("t", &store.Tape{Sessions: []store.TapeSession{s}})
			if err != nil {
				t.Fatal(err)
			}
			p, ok := c.Open().(*cassetteSession).Prepare(&Request{ID: []byte("9"), Method: "tools/call", Params: []byte(`{"name":"a"}`)})
			if !ok {
				t.Fatal("no match")
			}
			r := p.Reply
			if r.HTTPStatus != tt.want.HTTPStatus || r.NoReply != tt.want.NoReply || string(r.Result) != string(tt.want.Result) {
				t.Errorf("got status %d, no reply %v, result %s; want %+v", r.HTTPStatus, r.NoReply, r.Result, tt.want)
			}
			if tt.want.HTTPStatus != 0 && p.Play != nil {
				t.Errorf("the refused request took the notification after it")
			}
		})
	}
}
