package replay_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/replay/script"
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
	c := &peertest.RawHTTP{T: t, URL: url}
	post := func() string {
		req, _ := http.NewRequest("POST", url, strings.NewReader(strings.Replace(statelessTape[0][2:], `"id":1`, `"id":7`, 1)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		setStatelessHeaders(req, "tools/call", "counter")
		resp, err := hc.Do(req)
		if err != nil {
			c.T.Fatal(err)
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

// RestartSessionless (mcpmock serve --watch, after a reload) starts each
// sessionless client afresh at its next request. A call in flight
// finishes in the session it began in; and Close still ends that session
// if the call never does.
func TestHTTP_RestartSessionless(t *testing.T) {
	src, err := script.Parse("s.yaml", []byte(`
server: {name: s, version: "1"}
tools:
  - {name: counter, sequence: [{text: one}, {text: two}]}
  - {name: slow, answers: [{text: done, delay: 300ms}]}
  - {name: hang, answers: [{fault: hang}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	var received atomic.Int64 // requests the server has taken
	srv, err := replay.NewServer([]replay.Source{src}, replay.Options{Journal: func(replay.Received) { received.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	post := func(ctx context.Context, tool string) (string, error) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}}}`
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		setStatelessHeaders(req, "tools/call", tool)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	answer := func(tool string) string {
		t.Helper()
		body, err := post(ctx, tool)
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	// waitReceived waits until the server has taken n requests.
	waitReceived := func(n int) {
		t.Helper()
		for received.Load() < int64(n) {
			select {
			case <-ctx.Done():
				t.Fatalf("the server took %d requests, want %d", received.Load(), n)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}

	if got := answer("counter"); !strings.Contains(got, `"one"`) {
		t.Fatalf("first call: %s", got)
	}
	slow := make(chan string, 1)
	go func() { body, _ := post(ctx, "slow"); slow <- body }()
	waitReceived(2)
	srv.RestartSessionless()
	if got := answer("counter"); !strings.Contains(got, `"one"`) {
		t.Errorf("the first call after the restart: %s, want a new session's first answer", got)
	}
	if got := <-slow; !strings.Contains(got, `"done"`) {
		t.Errorf("the call in flight at the restart: %s", got)
	}

	hung := make(chan error, 1)
	go func() { _, err := post(ctx, "hang"); hung <- err }()
	waitReceived(4)
	srv.RestartSessionless()
	srv.Close()
	select {
	case <-hung: // ended by Close, with an error or an empty stream
	case <-ctx.Done():
		t.Fatal("Close left a retired session's hung call running")
	}
}
