package replay

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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
			p := prepareCallA(t, s)
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

// TestCassette_RefusalDetail: what a refusal replays besides its status.
// Of the recorded headers, those a client acts on; none the server owns,
// and no "[redacted]" value. The body the recorder kept as a frame on the
// request's stream, when it is no answer to the request (text, or an
// error with a null id); Content-Type only with it.
func TestCassette_RefusalDetail(t *testing.T) {
	post := func(status int, req, resp http.Header) *store.HTTPMeta {
		return &store.HTTPMeta{Method: "POST", Status: status, RequestHeader: req, ResponseHeader: resp, Stream: store.StreamPostBody, StreamID: 7}
	}
	body := func(status int, req, resp http.Header) *store.HTTPMeta {
		return &store.HTTPMeta{Method: "POST", Status: status, RequestHeader: req, ResponseHeader: resp, Stream: store.StreamJSON, StreamID: 7}
	}
	sid := http.Header{"Mcp-Session-Id": {"abc"}}
	tests := []struct {
		name string
		req  *store.HTTPMeta // on the request
		body string          // a server frame after it, on its stream
		meta *store.HTTPMeta // the frame's
		want Reply
	}{
		{name: "Retry-After, not what the server owns",
			req:  post(503, nil, http.Header{"Retry-After": {"30"}, "Date": {"Fri, 27 Nov 2026 08:00:00 GMT"}, "Content-Length": {"0"}, "Mcp-Session-Id": {"abc"}, "Connection": {"close"}, "Server": {"x"}}),
			want: Reply{HTTPStatus: 503, Refusal: &HTTPRefusal{Header: http.Header{"Retry-After": {"30"}}}}},
		{name: "one challenge redacted, one kept",
			req:  post(401, nil, http.Header{"Www-Authenticate": {"[redacted]", `Bearer resource_metadata="http://a/.well-known/oauth-protected-resource"`}}),
			want: Reply{HTTPStatus: 401, Refusal: &HTTPRefusal{Header: http.Header{"Www-Authenticate": {`Bearer resource_metadata="http://a/.well-known/oauth-protected-resource"`}}}}},
		{name: "all redacted: the status alone",
			req:  post(401, nil, http.Header{"Www-Authenticate": {"[redacted]"}}),
			want: Reply{HTTPStatus: 401}},
		{name: "mcpspy's 502: no body, so no Content-Type",
			req:  post(502, nil, http.Header{"Content-Type": {"application/json"}}),
			want: Reply{HTTPStatus: 502}},
		{name: "text body",
			req:  post(0, nil, nil),
			body: "rate limited, slow down\n", meta: body(429, nil, http.Header{"Content-Type": {"text/plain"}, "X-Ratelimit-Reset": {"60"}}),
			want: Reply{HTTPStatus: 429, Refusal: &HTTPRefusal{Header: http.Header{"Content-Type": {"text/plain"}, "X-Ratelimit-Reset": {"60"}}, Body: []byte("rate limited, slow down\n")}}},
		{name: "JSON body with a null id, 404 for the session",
			req:  post(0, sid, nil),
			body: `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, meta: body(404, sid, http.Header{"Content-Type": {"application/json"}}),
			want: Reply{ExpireSession: true, Refusal: &HTTPRefusal{Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`)}}},
		{name: "an error answer with 400 stays an answer, with its status",
			req:  post(0, nil, nil),
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, meta: body(400, nil, nil),
			want: Reply{Error: &RPCError{Code: -32602, Message: "bad"}, HTTPStatus: 400}},
		{name: "a body on another stream is not this request's",
			req:  post(0, nil, nil),
			body: "busy", meta: &store.HTTPMeta{Method: "POST", Status: 503, Stream: store.StreamJSON, StreamID: 8},
			want: Reply{NoReply: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := store.TapeSession{Info: store.SessionInfo{ID: "s1"}}
			add := func(dir store.Dir, frame string, meta *store.HTTPMeta) {
				s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(len(s.Messages) + 1), Dir: dir, Frame: []byte(frame), HTTP: meta})
			}
			add(store.C2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`, tt.req)
			if tt.body != "" {
				add(store.S2C, tt.body, tt.meta)
			}
			p := prepareCallA(t, s)
			if diff := cmp.Diff(tt.want, p.Reply, cmpopts.IgnoreUnexported(RPCError{})); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCassette_RefusedNotification: a client notification whose POST was
// refused replays as that refusal, once per replay: the same
// notification again, in this session or another, is what the recording
// has next for it (here, accepted), or, past the recording, accepted.
func TestCassette_RefusedNotification(t *testing.T) {
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1"}}
	add := func(status int, hdr http.Header) {
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(len(s.Messages) + 1), Dir: store.C2S,
			Frame: []byte(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`),
			HTTP:  &store.HTTPMeta{Method: "POST", Status: status, ResponseHeader: hdr, Stream: store.StreamPostBody, StreamID: uint64(len(s.Messages) + 1)}})
	}
	add(429, http.Header{"Retry-After": {"2"}})
	add(202, nil)
	c, err := NewCassette("t", &store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		t.Fatal(err)
	}
	note := &Request{Method: "notifications/roots/list_changed"}
	refusal := Reply{HTTPStatus: 429, Refusal: &HTTPRefusal{Header: http.Header{"Retry-After": {"2"}}}}
	tests := []struct {
		name string
		sess *cassetteSession
		want Reply
	}{
		{"first", c.Open().(*cassetteSession), refusal},
		{"another session, after the refusal was given", c.Open().(*cassetteSession), Reply{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := tt.sess.Prepare(note)
			if !ok {
				t.Fatal("no match")
			}
			if diff := cmp.Diff(tt.want, p.Reply); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			for i := range 2 { // what the recording has next, then past it
				if p, ok := tt.sess.Prepare(note); !ok || p.Reply.HTTPStatus != 0 {
					t.Errorf("notification %d after: %+v, %v; want it accepted", i+2, p, ok)
				}
			}
		})
	}
}

// prepareCallA loads the recorded session s and prepares a live
// tools/call of tool "a".
func prepareCallA(t *testing.T, s store.TapeSession) *Prepared {
	t.Helper()
	c, err := NewCassette("t", &store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.Open().(*cassetteSession).Prepare(&Request{ID: []byte("9"), Method: "tools/call", Params: []byte(`{"name":"a"}`)})
	if !ok {
		t.Fatal("no match")
	}
	return p
}
