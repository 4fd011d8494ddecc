package rerun_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessClient is how mcpspy records a go-sdk 2026-07-28 client over
// HTTP: a session per connection. The listen stream (s1) opens first;
// the call that makes the server's tools change (s2) comes after it, and
// the cancel that closes the stream (s3) after the list_changed it got.
// Times are the recording's, ms from t0; lines as sessionOf's. The
// listen stream's connection ends after the cancel closed it.
func statelessClient(t0 time.Time) []*store.TapeSession {
	const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"gocli","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	type line struct {
		ms   int
		text string
	}
	conn := func(id string, end int, lines ...line) *store.TapeSession {
		s := &store.TapeSession{Info: store.SessionInfo{ID: id, Transport: store.TransportHTTP, Start: t0.Add(time.Duration(lines[0].ms) * time.Millisecond)}}
		for i, l := range lines {
			dir := store.C2S
			if strings.HasPrefix(l.text, "< ") {
				dir = store.S2C
			}
			h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}}
			s.Messages = append(s.Messages, &store.Message{Session: id, Seq: uint64(i + 1), Dir: dir, Time: t0.Add(time.Duration(l.ms) * time.Millisecond),
				Frame: []byte(l.text[2:]), HTTP: &store.HTTPMeta{Method: http.MethodPost, Path: "/mcp", Status: http.StatusOK, RequestHeader: h}})
		}
		s.Info.End = &store.EndInfo{Time: t0.Add(time.Duration(end) * time.Millisecond), Reason: store.EndEOF}
		return s
	}
	return []*store.TapeSession{
		conn("s1", 45,
			line{0, `> {"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{` + meta + `,"notifications":{"toolsListChanged":true}}}`},
			line{1, `< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2},"notifications":{"toolsListChanged":true}}}`},
			line{30, `< {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2}}}`}),
		conn("s2", 50,
			line{10, `> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + meta + `,"name":"grow","arguments":{}}}`},
			line{20, `< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"grew"}],"resultType":"complete"}}`}),
		conn("s3", 50,
			line{40, `> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"context canceled","requestId":2}}`}),
	}
}

// The connections of one sessionless client rerun together: the listen
// stream is open when the call that changes the tools is sent, and the
// list_changed the server sends on it is in the rerun, before the
// cancel that closes it.
func TestRunClient_Stateless(t *testing.T) {
	srv := gosdk.NewServer("listen-go") // one server: grow changes what the listen stream tells
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/mcp")
	recorded := statelessClient(time.Date(2026, 11, 28, 5, 2, 30, 0, time.UTC))
	if groups := rerun.Clients(recorded); len(groups) != 1 || len(groups[0]) != 3 {
		t.Fatalf("Clients made %d groups (%v), want the 3 connections in one", len(groups), groups)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := rerun.RunClient(ctx, recorded, rerun.Options{URL: u, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if d := differences(recorded[i], &r.Session); len(d) > 0 || len(r.Unanswered) > 0 || len(r.Unheard) > 0 {
			t.Errorf("%s: differences %q, unanswered %q, unheard %q", recorded[i].Info.ID, d, r.Unanswered, r.Unheard)
		}
	}
	listen := &res[0].Session
	if n := count(listen, store.S2C, "notifications/tools/list_changed"); n != 1 {
		t.Errorf("the listen stream carried %d list_changed, want 1; it holds:", n)
		for _, m := range listen.Messages {
			t.Logf("%s %s", m.Dir, m.Frame)
		}
	}
}

// A notification the server no longer sends is waited for once, at most
// Timeout, and named in Unheard.
func TestRunClient_Unheard(t *testing.T) {
	srv := gosdk.NewServer("listen-go")
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/mcp")
	recorded := statelessClient(time.Date(2026, 11, 28, 5, 2, 30, 0, time.UTC))
	// The call grows nothing now: the echo tool in its place.
	recorded[1].Messages[0].Frame = []byte(strings.Replace(string(recorded[1].Messages[0].Frame), `"name":"grow","arguments":{}`, `"name":"echo","arguments":{"text":"grew"}`, 1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := rerun.RunClient(ctx, recorded, rerun.Options{URL: u, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := "notifications/tools/list_changed: 1 in the recording, 0 in the rerun"
	if len(res[0].Unheard) != 1 || res[0].Unheard[0] != want {
		t.Errorf("unheard %q, want %q", res[0].Unheard, want)
	}
	if n := count(&res[2].Session, store.C2S, "notifications/cancelled"); n != 1 {
		t.Errorf("the cancel was sent %d times, want once, after the wait", n)
	}
}
