package replay_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
				var tr mcp.Transport
				if over == "stdio" {
					tr = srv.Transport()
				} else {
					hc := &http.Client{Transport: &http.Transport{}}
					t.Cleanup(hc.CloseIdleConnections)
					tr = &mcp.StreamableClientTransport{Endpoint: srv.URL(), HTTPClient: hc}
				}
				n := newNotes()
				n.token = "tok"
				c := mcp.NewClient(&mcp.Implementation{Name: "barrier", Version: "1"}, n.clientOptions())
				var pings atomic.Int64
				c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if method == "ping" {
							pings.Add(1)
						}
						return next(ctx, method, req)
					}
				})
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var so *mcp.ClientSessionOptions
				if era.version != "" {
					so = &mcp.ClientSessionOptions{ProtocolVersion: era.version}
				}
				cs, err := c.Connect(ctx, tr, so)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
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
	if want := `{"id":5,"jsonrpc":"2.0","result":{"content":[{"text":"asked","type":"text"}]}}`; got != want {
		t.Errorf("got %s, want the reply, without roots/list first", got)
	}
	if w := s.Warnings(); !strings.Contains(w, "roots/list not sent to the client during tools/call: a 2026-07-28 client takes no requests from the server") {
		t.Errorf("log:\n%s\nwant a warning about the roots/list not sent", w)
	}
}
