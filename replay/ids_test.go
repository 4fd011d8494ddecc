package replay_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// elicitingClient opens a session with script-elicit.yaml's server as a
// client that takes elicitation, and calls deploy with id: the server's
// question comes back, and its id.
func elicitingClient(t *testing.T, id string) (*mocktest.Server, *lineClient, string) {
	t.Helper()
	s := mocktest.NewFromCassette(t, filepath.Join("..", "cassettes", "script-elicit.yaml"))
	c := dial(t, s)
	c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"deploy","arguments":{"service":"api"}}}`)
	var ask struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(c.recv()), &ask); err != nil || ask.Method != "elicitation/create" {
		t.Fatalf("want the server's elicitation/create, got %+v (%v)", ask, err)
	}
	return s, c, string(ask.ID)
}

// A client's reply names mcpmock's request by the id's value: an integer
// id written 1e0 answers request 1, as JSON-RPC has it.
func TestServer_ReplyIDWrittenAnotherWay(t *testing.T) {
	s, c, ask := elicitingClient(t, "2")
	c.send(`{"jsonrpc":"2.0","id":` + ask + `e0,"result":{"action":"accept","content":{"confirm":true,"note":"ok"}}}`)
	if got := norm(t, c.recv()); !strings.Contains(got, "deployed api (ok)") {
		t.Errorf("after the reply: got %s, want the call's answer for the accepted form", got)
	}
	if w := s.Warnings(); w != "" {
		t.Errorf("warnings %q, want none", w)
	}
}

// A notifications/cancelled names the client's request by the id's value:
// requestId 7e0 cancels request 7, which then gets no answer, though the
// client answers its question after the cancel. Once the client closes
// its side, the server writes what it had left and ends: no answer to 7.
func TestServer_CancelIDWrittenAnotherWay(t *testing.T) {
	_, c, ask := elicitingClient(t, "7")
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7e0}}`)
	c.send(`{"jsonrpc":"2.0","id":` + ask + `,"result":{"action":"accept","content":{"confirm":true,"note":"ok"}}}`)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); got != `{"id":"p","jsonrpc":"2.0","result":{}}` {
		t.Errorf("after the cancel: got %s, want the ping's answer (the cancelled call gets none)", got)
	}
	if err := c.in.Close(); err != nil {
		t.Fatal(err)
	}
	for l := range c.lines {
		t.Errorf("after the cancel the server sent %s, want nothing", l)
	}
}

// A recording pairs by the id's value too: its answer to request "1"
// written "\u0031", its cancel naming request 2 as 2e0 (whose answer,
// caused by the cancel, is not replayed), its progress for token 3 written
// 3.0, each still belongs to its request.
func TestServer_RecordedIDsWrittenAnotherWay(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t,
		`> {"jsonrpc":"2.0","id":"1","method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":"\u0031","result":{"tools":[{"name":"slow","inputSchema":{"type":"object"}}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`,
		`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2e0}}`,
		`< {"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":3}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3.0,"progress":1}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[]}}`,
	)})
	c := dial(t, s)
	if got := c.roundTrip(`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`); !strings.Contains(got, `"name":"slow"`) {
		t.Errorf("tools/list: got %s, want the recorded answer", got)
	}
	c.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"slow"}}`)
	c.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"t"}}}`)
	if got, want := norm(t, c.recv()), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":"t"}}`; got != want {
		t.Errorf("got %s, want the recorded progress, for the live token", got)
	}
	// The progress barrier: the answer waits for the client's pong.
	var ping struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(c.recv()), &ping); err != nil || ping.Method != "ping" {
		t.Fatalf("want the barrier's ping, got %+v (%v)", ping, err)
	}
	c.send(`{"jsonrpc":"2.0","id":` + string(ping.ID) + `,"result":{}}`)
	if got, want := norm(t, c.recv()), `{"id":"c","jsonrpc":"2.0","result":{"content":[]}}`; got != want {
		t.Errorf("got %s, want %s (the cancelled call gets no answer)", got, want)
	}
}

// Without HTTP sessions a client's requests are grouped by connection,
// and its reply to mcpmock's request may come on another connection than
// the call that asked: mcpmock finds the session that waits for it by the
// id's value, however the reply writes it.
func TestHTTP_SessionlessReplyIDWrittenAnotherWay(t *testing.T) {
	srv, err := replay.NewServer(mocktest.Load(t, filepath.Join("..", "cassettes", "script-elicit.yaml")), replay.Options{HTTPSessions: "off", CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	clients := []*http.Client{{Transport: &http.Transport{}}, {Transport: &http.Transport{}}} // two connections
	for _, c := range clients {
		t.Cleanup(c.CloseIdleConnections)
	}
	post := func(c *http.Client, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post(clients[0], `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	post(clients[0], `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	call := bufio.NewScanner(post(clients[0], `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"service":"api"}}}`).Body)
	next := func() string { // the next SSE data line of the call's stream
		t.Helper()
		for call.Scan() {
			if data, ok := strings.CutPrefix(call.Text(), "data: "); ok && data != "" {
				return data
			}
		}
		t.Fatalf("the call's stream ended: %v", call.Err())
		return ""
	}
	var ask struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(next()), &ask); err != nil || ask.Method != "elicitation/create" {
		t.Fatalf("want the server's elicitation/create, got %+v (%v)", ask, err)
	}
	reply := post(clients[1], `{"jsonrpc":"2.0","id":`+string(ask.ID)+`e0,"result":{"action":"accept","content":{"confirm":true,"note":"ok"}}}`)
	if reply.StatusCode != http.StatusAccepted {
		t.Errorf("the reply's POST: %s, want 202 Accepted", reply.Status)
	}
	if got := next(); !strings.Contains(got, "deployed api (ok)") {
		t.Errorf("the call's answer: %s, want the one for the accepted form", got)
	}
}
