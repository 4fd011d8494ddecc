package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// TestReplay_ProgressBarrierEras replays a call that sent progress to Go
// SDK clients of both eras, over stdio and HTTP. Before such a reply
// mcpmock pings a handshake-era client (the progress barrier, for the
// TypeScript SDK); a 2026-07-28 client has no ping and takes no requests
// from the server, so it must never see one. go-sdk's client answers the
// ping anyway, so the reply is not held up: the client's receiving
// middleware is what tells.
func TestReplay_ProgressBarrierEras(t *testing.T) {
	t.Parallel()
	eras := []struct {
		name, version string // version "": go-sdk's default, 2026-07-28
		wantPings     int64
	}{
		{"stateless era", "", 0},
		{"handshake era", "2025-11-25", 1},
	}
	for _, era := range eras {
		db, _ := recordGo(t, "stdio", era.version)
		for _, over := range []string{"stdio", "http"} {
			t.Run(era.name+" over "+over, func(t *testing.T) {
				srv := mocktest.New(t, mocktest.Load(t, db))
				n := newNotes()
				n.token = "tok"
				var pings atomic.Int64
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cs := connectEra(ctx, t, srv, over, era.version, n, func(method string) {
					if method == "ping" {
						pings.Add(1)
					}
				})
				if v := cs.InitializeResult().ProtocolVersion; (v >= "2026-07-28") != (era.version == "") {
					t.Fatalf("the client speaks %s", v)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": "tok"}})
				if err != nil || resultText(res) != "done" {
					t.Fatalf("slow: %v %+v", err, res)
				}
				for i := range 3 {
					if got, want := waitFor(t, n.progress, "progress notification"), fmt.Sprintf("progress (own token) %d/3 step %d", i+1, i+1); got != want {
						t.Errorf("progress %d: %s, want %s", i, got, want)
					}
				}
				if got := pings.Load(); got != era.wantPings {
					t.Errorf("the client was pinged %d times, want %d\nmcpmock's log:\n%s", got, era.wantPings, srv.Warnings())
				}
			})
		}
	}
}

// connectEra connects a Go SDK client with n's handlers to srv, in
// process ("stdio") or over Streamable HTTP, speaking version ("":
// go-sdk's default, server/discover first for 2026-07-28). seen gets the
// method of each request and notification the client receives, which is
// how a test tells what reached it: go-sdk answers ping and roots/list
// itself.
func connectEra(ctx context.Context, t *testing.T, srv *mocktest.Server, over, version string, n *notes, seen func(method string)) *mcp.ClientSession {
	t.Helper()
	var tr mcp.Transport
	if over == "stdio" {
		tr = srv.Transport()
	} else {
		hc := &http.Client{Transport: &http.Transport{}}
		t.Cleanup(hc.CloseIdleConnections)
		tr = &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: hc}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "eras", Version: "1"}, n.clientOptions())
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			seen(method)
			return next(ctx, method, req)
		}
	})
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(ctx, tr, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// A handshake-era client that does not answer the progress barrier's
// ping holds up the first reply after progress for barrierTimeout (1 s),
// with a warning, and no later one: the barrier rests until the client
// answers that ping after all. A 2026-07-28 request is never pinged.
func TestServer_ProgressBarrierUnanswered(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	c := dial(t, s)
	c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"live","version":"1"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// slow sends the call and returns every line up to its reply, and how
	// long the reply took.
	slow := func(id int, meta string) ([]string, time.Duration) {
		t.Helper()
		start := time.Now()
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"%s}}}`, id, meta))
		var got []string
		for {
			l := norm(t, c.recv())
			got = append(got, l)
			if strings.Contains(l, fmt.Sprintf(`"id":%d,`, id)) {
				return got, time.Since(start)
			}
		}
	}
	const ping1 = `{"id":1,"jsonrpc":"2.0","method":"ping"}`
	got, took := slow(10, "")
	if len(got) != 4 || got[2] != ping1 {
		t.Fatalf("first call: %q, want two progress notifications, a ping and the reply", got)
	}
	if took < 900*time.Millisecond {
		t.Errorf("the reply came %s after the unanswered ping, want after the barrier's second", took)
	}
	if w := s.Warnings(); !strings.Contains(w, "client did not answer ping (id 1) within 1s") || strings.Contains(w, "10s") {
		t.Errorf("log:\n%s\nwant the barrier's warning, saying how long it waited", w)
	}
	if got, _ := slow(11, ""); len(got) != 3 {
		t.Errorf("second call: %q, want no ping: the client did not answer the last one", got)
	}
	// The answer, late: the client does answer ping, so the barrier waits
	// for it again.
	c.send(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.Warnings(), "answered the progress barrier's ping 1 late") {
		if time.Now().After(deadline) {
			t.Fatalf("the late answer was not taken; log:\n%s", s.Warnings())
		}
		time.Sleep(5 * time.Millisecond) // polling the log, with a deadline
	}
	c.send(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`)
	for range 2 {
		c.recv() // progress
	}
	if l := norm(t, c.recv()); l != `{"id":2,"jsonrpc":"2.0","method":"ping"}` {
		t.Fatalf("third call: %s, want the barrier's ping again", l)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if l := c.recv(); !strings.Contains(l, `"id":12,`) {
		t.Errorf("third call: %s, want its reply", l)
	}
	// A 2026-07-28 request: progress and the reply, no ping.
	if got, _ := slow(13, `,"io.modelcontextprotocol/protocolVersion":"2026-07-28"`); len(got) != 3 || strings.Contains(strings.Join(got, ""), "ping") {
		t.Errorf("2026-07-28 call: %q, want no ping", got)
	}
}

// A recorded server→client request during a call is not sent to a
// 2026-07-28 client, which takes none (its answer would never come, and
// the reply would wait --call-timeout): the reply comes at once, with a
// warning.
func TestServer_NoRequestsToStatelessClients(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	c := dial(t, s)
	got := c.roundTrip(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if want := `{"id":5,"jsonrpc":"2.0","result":{"content":[{"text":"asked","type":"text"}],"resultType":"complete"}}`; got != want {
		t.Errorf("got %s, want the reply, without roots/list first", got)
	}
	if w := s.Warnings(); !strings.Contains(w, "roots/list not sent to the client during tools/call: a 2026-07-28 client takes no requests from the server") {
		t.Errorf("log:\n%s\nwant a warning about the roots/list not sent", w)
	}
}

// unsolicitedTape is a recording in which the server asked the client for
// its roots on its own, after a call's answer and outside any request
// (server-everything does so right after initialized), then changed its
// tools after another call. The opening is the era's: server/discover and
// a subscriptions/listen stream in 2026-07-28, initialize before.
func unsolicitedTape(version string) []string {
	meta := ""
	open := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"srv","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	if version >= "2026-07-28" {
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `"}`
		open = []string{
			`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["` + version + `"],"capabilities":{"tools":{"listChanged":true}}}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}` + meta + `}}`,
			`< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`,
		}
	}
	return append(open,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{}`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"asked"}]}}`,
		`< {"jsonrpc":"2.0","id":0,"method":"roots/list"}`,
		`> {"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"grow","arguments":{}`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"grew"}]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	)
}

// TestReplay_UnsolicitedRequestEras replays a server→client request the
// recording has outside any request to Go SDK clients of both eras, in
// process and over Streamable HTTP. A handshake-era client is asked, as
// when recorded. A 2026-07-28 client is not: that era has no server→client
// requests at all (SEP-2322 input_required results ask instead), and over
// HTTP neither a request's stream nor a subscriptions/listen stream may
// carry one. The report names what was left out, and the rest replays.
func TestReplay_UnsolicitedRequestEras(t *testing.T) {
	eras := []struct {
		name, version string // version "": go-sdk's default, 2026-07-28
		recorded      string
	}{
		{"stateless era", "", "2026-07-28"},
		{"handshake era", "2025-11-25", "2025-11-25"},
	}
	for _, era := range eras {
		for _, over := range []string{"stdio", "http"} {
			t.Run(era.name+" over "+over, func(t *testing.T) {
				srv := mocktest.New(t, []replay.Source{cassetteOf(t, unsolicitedTape(era.recorded)...)})
				n := newNotes()
				asked := make(chan struct{}, 10)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cs := connectEra(ctx, t, srv, over, era.version, n, func(method string) {
					if method == "roots/list" {
						asked <- struct{}{}
					}
				})
				if v := cs.InitializeResult().ProtocolVersion; v != era.recorded {
					t.Fatalf("the client speaks %s, want %s", v, era.recorded)
				}
				for _, call := range []struct{ tool, want string }{{"ask", "asked"}, {"grow", "grew"}} {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: map[string]any{}})
					if err != nil || resultText(res) != call.want {
						t.Fatalf("%s: %v %+v", call.tool, err, res)
					}
				}
				// list_changed follows grow's answer, and roots/list ask's:
				// by the time it arrives, a roots/list sent would have too.
				waitFor(t, n.listChanged, "tools/list_changed")
				stateless := era.recorded >= "2026-07-28"
				if stateless {
					select {
					case <-asked:
						t.Errorf("a 2026-07-28 client was sent roots/list\nmcpmock's log:\n%s", srv.Warnings())
					default:
					}
				} else {
					waitFor(t, asked, "roots/list")
				}
				r := srv.Report()
				if len(r.Unmatched) != 0 || len(r.Unused) != 0 {
					t.Errorf("report: unmatched %+v, unused %v; want every request answered and used", r.Unmatched, r.Unused)
				}
				wantSkipped := []replay.Skipped(nil)
				if stateless {
					wantSkipped = []replay.Skipped{{Method: "roots/list", When: "after tools/call", Why: "not deliverable to a 2026-07-28 client: that era takes no requests from the server", Count: 1}}
				}
				if diff := cmp.Diff(wantSkipped, r.Skipped); diff != "" {
					t.Errorf("report's skipped requests (-want +got):\n%s", diff)
				}
				// --report's key: present when something was skipped.
				if b, _ := json.Marshal(r); strings.Contains(string(b), `"skipped":[{"method":"roots/list","when":"after tools/call"`) != stateless {
					t.Errorf("report as --report writes it: %s", b)
				}
				const warning = "roots/list not sent to the client after tools/call: a 2026-07-28 client takes no requests from the server"
				if got := strings.Count(srv.Warnings(), warning); got != map[bool]int{true: 1}[stateless] {
					t.Errorf("the warning came %d times; log:\n%s", got, srv.Warnings())
				}
			})
		}
	}
}

// askingSource asks the client for its roots while it answers tools/call,
// on the call's own stream (Peer.Call) or, as package fallback does when
// its server asks between requests, as a session-level message
// (SessionCaller), and answers with what came of it.
type askingSource struct{ session bool }

func (a askingSource) Name() string               { return "asking" }
func (a askingSource) Unused() []string           { return nil }
func (a askingSource) Open() replay.SessionSource { return a }
func (a askingSource) Answer(ctx context.Context, p replay.Peer, req *replay.Request) (replay.Reply, bool) {
	if req.Method != "tools/call" {
		return replay.Reply{}, false
	}
	call := p.Call
	if a.session {
		call = p.(replay.SessionCaller).CallSession
	}
	text := "asked"
	if _, err := call(ctx, "roots/list", nil); err != nil {
		text = "not asked: " + err.Error()
	}
	b, _ := json.Marshal(text)
	return replay.Reply{Result: json.RawMessage(`{"content":[{"type":"text","text":` + string(b) + `}]}`)}, true
}

// Neither way reaches a 2026-07-28 client: the source hears why at once,
// and the report names the request, as it names a recorded one.
func TestServer_SourceRequestsToStatelessClients(t *testing.T) {
	for _, session := range []bool{false, true} {
		when := map[bool]string{false: "during tools/call", true: "after tools/call"}[session]
		t.Run(when, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{askingSource{session: session}})
			c := dial(t, s)
			got := c.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
			if want := `{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"not asked: a 2026-07-28 client takes no requests from the server","type":"text"}]}}`; got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			want := []replay.Skipped{{Method: "roots/list", When: when, Why: "not deliverable to a 2026-07-28 client: that era takes no requests from the server", Count: 1}}
			if diff := cmp.Diff(want, s.Report().Skipped); diff != "" {
				t.Errorf("report's skipped requests (-want +got):\n%s", diff)
			}
		})
	}
}
