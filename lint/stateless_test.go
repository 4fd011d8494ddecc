package lint

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// listenSession opens a 2026-07-28 session with a server that takes
// resource subscriptions and lists tools.
func listenSession(lines ...string) []string {
	return append([]string{
		`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":` + stateless(``) + `}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}}}}`,
	}, lines...)
}

// In 2026-07-28 a client subscribes to a resource's updates with a
// subscriptions/listen that names it in notifications.resourceSubscriptions,
// and the server sends them on the listen's stream until it ends. The
// listen itself is never answered unless the server ends it: the client
// cancels it, with notifications/cancelled or by closing the stream
// (as go-sdk v1.8 and mcp-go v1.2.1 do).
func TestSession_SubscriptionsListen(t *testing.T) {
	listen := func(id, filter string) string {
		return `> {"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"_meta":` + stateless(``) + `,"notifications":` + filter + `}}`
	}
	ack := func(id, filter string) string {
		return `< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `},"notifications":` + filter + `}}`
	}
	updated := func(uri string) string {
		return `< {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2},"uri":"` + uri + `"}}`
	}
	const counter = `{"resourceSubscriptions":["res://counter"]}`
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"an update for a resource the listen names, never answered", listenSession(
			listen("2", counter), ack("2", counter), updated("res://counter"),
		), []string{}},
		{"the listen cancelled", listenSession(
			listen("2", `{"toolsListChanged":true,"resourceSubscriptions":["res://a","res://counter"]}`),
			updated("res://counter"),
			`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"done"}}`,
		), []string{}},
		{"an update for a resource the listen does not name", listenSession(
			listen("2", counter), updated("res://other"),
		), []string{"resource-not-subscribed@4"}},
		{"a listen for list changes only", listenSession(
			listen("2", `{"toolsListChanged":true}`), updated("res://counter"),
		), []string{"resource-not-subscribed@4"}},
		{"an update after the server ended the listen", listenSession(
			listen("2", counter), updated("res://counter"),
			`< {"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/subscriptionId":2}}}`,
			updated("res://counter"),
		), []string{"resource-not-subscribed@6"}},
		{"two listens, one ended", listenSession(
			listen("2", counter), listen("3", counter),
			`< {"jsonrpc":"2.0","id":2,"result":{}}`,
			updated("res://counter"),
		), []string{}},
		{"another request still owes its answer", listenSession(
			listen("2", counter),
			`> {"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":`+stateless(``)+`}}`,
		), []string{"unanswered@4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := found(Session(session(tt.lines...), Options{}))
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
}

// go-sdk v1.8's client, to a server without sessions, sends each
// notifications/cancelled on a connection of its own, recorded as a
// session of its own: Tape matches it with the request it names in the
// client's other sessions of the same upstream, sent before it; Session
// alone cannot judge it.
func TestTape_CancelOnAnotherConnection(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	post := func(id, upstream string, at time.Duration, lines ...string) store.TapeSession {
		s := withHTTP(session(lines...), func(m *store.Message) http.Header {
			return http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {jsonrpc.Classify(m.Frame).Method}}
		}, func(*store.Message) (string, http.Header) {
			return "post-sse", http.Header{"Content-Type": {"text/event-stream"}}
		})
		s.Info.ID, s.Info.Upstream = id, upstream
		for _, m := range s.Messages {
			m.Session, m.Time = id, t0.Add(at+m.Time.Sub(t0))
		}
		return *s
	}
	const up, other = "http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp"
	listen := `> {"jsonrpc":"2.0","id":8,"method":"subscriptions/listen","params":{"_meta":` + stateless(``) + `,"notifications":{"toolsListChanged":true}}}`
	cancel := `> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8,"reason":"context canceled"}}`
	tests := []struct {
		name     string
		sessions []store.TapeSession
		want     []string // as session:rule@seq
	}{
		{"the request on another connection", []store.TapeSession{
			post("s1", up, 0, listen), post("s2", up, time.Second, cancel),
		}, nil},
		{"the request's id written another way", []store.TapeSession{
			post("s1", up, 0, listen), post("s2", up, time.Second, strings.Replace(cancel, `"requestId":8`, `"requestId":8e0`, 1)),
		}, nil},
		{"the cancellation recorded first", []store.TapeSession{
			post("s1", up, time.Second, cancel), post("s2", up, 0, listen),
		}, nil},
		{"no request with the id", []store.TapeSession{
			post("s1", up, 0, strings.Replace(listen, `"id":8`, `"id":7`, 1)), post("s2", up, time.Second, cancel),
		}, []string{"s2:cancel-unknown@1"}},
		{"the request to another upstream", []store.TapeSession{
			post("s1", other, 0, listen), post("s2", up, time.Second, cancel),
		}, []string{"s2:cancel-unknown@1"}},
		{"the request after the cancellation", []store.TapeSession{
			post("s1", up, 2*time.Second, listen), post("s2", up, time.Second, cancel),
		}, []string{"s2:cancel-unknown@1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range Tape(&store.Tape{Sessions: tt.sessions}, Options{}) {
				got = append(got, fmt.Sprintf("%s:%s@%d", f.Session, f.Rule, f.Seq))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
			for i := range tt.sessions {
				if fs := Session(&tt.sessions[i], Options{}); len(fs) != 0 {
					t.Errorf("%s alone: findings %v, want none", tt.sessions[i].Info.ID, fs)
				}
			}
		})
	}
	// Over stdio, or in a session with its own id, a cancellation of a
	// request the session never sent is reported by the session alone.
	stdio := session(cancel)
	if got := found(Session(stdio, Options{})); !slices.Equal(got, []string{"cancel-unknown@1"}) {
		t.Errorf("over stdio: findings %q, want cancel-unknown@1", got)
	}
	sid := post("s1", up, 0, cancel)
	sid.Info.HTTPSessionID = "abc"
	if got := found(Session(&sid, Options{})); !slices.Equal(got, []string{"cancel-unknown@1"}) {
		t.Errorf("with a session id: findings %q, want cancel-unknown@1", got)
	}
}

// A client that leaves its POST before the answer (the recorder notes it
// on the request) cancels the request in 2026-07-28, where closing a
// response stream is the cancellation; in the handshake era it does not
// (a disconnection is no cancellation there), so the request is still
// unanswered.
func TestSession_ClientLeftItsStream(t *testing.T) {
	call := func(meta string) string {
		return `> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"` + meta + `}}`
	}
	tests := []struct {
		name  string
		lines []string
		note  string
		want  []string
	}{
		{"2026-07-28, left before the answer began", mrtr(call(`,"_meta":` + stateless(``))), store.NoteLeftBeforeAnswer, []string{}},
		{"2026-07-28, left partway through the stream", mrtr(call(`,"_meta":` + stateless(``))), store.NoteLeftStream, []string{}},
		{"2026-07-28, no note", mrtr(call(`,"_meta":` + stateless(``))), "", []string{"unanswered@3"}},
		{"2026-07-28, another note", mrtr(call(`,"_meta":` + stateless(``))), "answered by mcpspy", []string{"unanswered@3"}},
		{"handshake era, left partway through the stream", opened(call(``)), store.NoteLeftStream, []string{"unanswered@4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := session(tt.lines...)
			s.Messages[len(s.Messages)-1].Note = tt.note
			got := found(Session(s, Options{}))
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
}
