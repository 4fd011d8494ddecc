package replay_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

var statelessTape = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"counter","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"one"}]}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"counter","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"two"}]}}`,
}

// setStatelessHeaders sets the headers a 2026-07-28 POST mirrors from
// its body, as a real client does (mcpmock refuses a POST without them).
func setStatelessHeaders(req *http.Request, method, name string) {
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
}

// Sessionless requests are grouped per client: by clientInfo when they
// carry it, else by connection. Each group replays the recording from the
// start.
func TestHTTP_SessionlessPerClient(t *testing.T) {
	call := func(clientInfo string) string {
		meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
		if clientInfo != "" {
			meta += `,"io.modelcontextprotocol/clientInfo":` + clientInfo
		}
		return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"counter","_meta":{` + meta + `}}}`
	}
	a, b := `{"name":"a","version":"1"}`, `{"name":"b","version":"1"}`
	type step struct {
		client int // which http.Client (connection pool) sends it
		info   string
		want   string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"two clients by clientInfo, on one connection", []step{{0, a, "one"}, {0, b, "one"}, {0, a, "two"}, {0, b, "two"}}},
		{"one client by clientInfo, over two connections", []step{{0, a, "one"}, {1, a, "two"}}},
		{"no clientInfo: one session per connection", []step{{0, "", "one"}, {1, "", "one"}, {0, "", "two"}, {1, "", "two"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := replay.NewServer([]replay.Source{cassetteOf(t, statelessTape...)}, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			url := newHTTPServer(t, srv)
			clients := []*http.Client{{Transport: &http.Transport{}}, {Transport: &http.Transport{}}}
			for _, c := range clients {
				t.Cleanup(c.CloseIdleConnections)
			}
			for i, st := range tt.steps {
				req, _ := http.NewRequest("POST", url, strings.NewReader(call(st.info)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				setStatelessHeaders(req, "tools/call", "counter")
				resp, err := clients[st.client].Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if body := bodyOf(t, resp); !strings.Contains(body, `"`+st.want+`"`) {
					t.Errorf("step %d: %s, want %q", i+1, body, st.want)
				}
			}
		})
	}
}

// Closing a connection ends its sessionless session when the server calls
// ConnState: the next connection starts the recording again.
func TestHTTP_SessionlessConnClosed(t *testing.T) {
	srv, err := replay.NewServer([]replay.Source{cassetteOf(t, statelessTape...)}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	hc := &http.Client{Transport: &http.Transport{}}
	c := &httpClient{t: t, url: url}
	post := func() string {
		req, _ := http.NewRequest("POST", url, strings.NewReader(strings.Replace(statelessTape[0][2:], `"id":1`, `"id":7`, 1)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		setStatelessHeaders(req, "tools/call", "counter")
		resp, err := hc.Do(req)
		if err != nil {
			c.t.Fatal(err)
		}
		return bodyOf(t, resp)
	}
	if got := post(); !strings.Contains(got, `"one"`) {
		t.Fatalf("first call: %s", got)
	}
	hc.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for replay.HTTPSessions(srv) != 0 { // the server sees the close on its own goroutine
		if time.Now().After(deadline) {
			t.Fatal("the connection's session outlived the connection")
		}
		time.Sleep(5 * time.Millisecond) // polling, with a deadline
	}
	if got := post(); !strings.Contains(got, `"one"`) {
		t.Errorf("first call on a new connection: %s, want the first recorded answer", got)
	}
}

// Two Go SDK v1.8 clients of the stateless era replaying one cassette at
// once each get the recorded answers in recorded order.
func TestHTTP_SessionlessGoSDKClients(t *testing.T) {
	db, live := recordGo(t, "stdio", "")
	srv := mocktest.New(t, mocktest.Load(t, db))
	url := srv.URL()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	connect := func(name string) *mcp.ClientSession {
		hc := &http.Client{Transport: &http.Transport{}}
		t.Cleanup(hc.CloseIdleConnections)
		c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connect %s: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
			t.Fatalf("%s speaks %s, want the stateless era", name, v)
		}
		return cs
	}
	a, b := connect("a"), connect("b")
	counter := func(cs *mcp.ClientSession) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "counter", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return resultText(res)
	}
	var gotA, gotB []string
	for range 2 {
		gotA = append(gotA, counter(a))
		gotB = append(gotB, counter(b))
	}
	var want []string
	for _, l := range live {
		if strings.HasPrefix(l, "call counter: ") {
			want = append(want, strings.TrimPrefix(l, "call counter: "))
		}
	}
	if len(want) != 2 || want[0] == want[1] {
		t.Fatalf("the recording's counter answers %q are not two different ones", want)
	}
	for name, got := range map[string][]string{"a": gotA, "b": gotB} {
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("client %s got %q, want %q", name, got, want)
		}
	}
}
