package replay_test

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// What a recording's server sent outside any request (list_changed after
// a call) travels on the session's GET stream over Streamable HTTP. A
// client that opens none never gets it: the report says so, rather than
// nothing.
func TestHTTP_UndeliveredWithoutGETStream(t *testing.T) {
	tape := []string{
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rec","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"srv","version":"2"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add-tool","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	}
	tests := []struct {
		name    string
		noGET   bool
		want    []replay.Undelivered
		warning bool
	}{
		{"GET stream open: delivered", false, nil, false},
		{"no GET stream: counted and said", true, []replay.Undelivered{{Method: "notifications/tools/list_changed", Count: 1}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, tape...)})
			changed := make(chan struct{}, 1)
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			})
			ctx := context.Background()
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL(), DisableStandaloneSSE: tt.noGET}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add-tool"}); err != nil {
				t.Fatal(err)
			}
			if !tt.noGET {
				waitFor(t, changed, "list_changed on the GET stream")
			}
			if err := cs.Close(); err != nil { // DELETE: the session ends
				t.Fatal(err)
			}
			// The list_changed goes out after the answer, so it may
			// reach the session's log after the DELETE: poll.
			var got []replay.Undelivered
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				got = s.Report().Undelivered
				if len(got) > 0 || !tt.noGET || time.Now().After(deadline) {
					break
				}
			}
			s.Close()
			got = s.Report().Undelivered
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("undelivered %+v, want %+v", got, tt.want)
			}
			if warned := strings.Contains(s.Warnings(), "never reached the client (notifications/tools/list_changed)"); warned != tt.warning {
				t.Errorf("warned %v, want %v:\n%s", warned, tt.warning, s.Warnings())
			}
			select {
			case <-changed:
				if tt.noGET {
					t.Error("list_changed reached a client with no GET stream")
				}
			default:
			}
		})
	}
}

// listenTape is a 2026-07-28 recording whose list_changed travelled on
// the listen stream.
var listenTape = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"srv","version":"2"}}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`,
	`< {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true}}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grow","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"content":[]}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
}

// In 2026-07-28 over HTTP, what a server sends outside any request
// travels on the client's subscriptions/listen streams. The go-sdk client
// opens one only when it handles list_changed; without it, what the
// recording sent waits for a listen stream that never comes, and is
// counted when the session ends.
func TestUndelivered_NoListenStream(t *testing.T) {
	tests := []struct {
		name   string
		listen bool
		want   []replay.Undelivered
	}{
		{"listen stream open: delivered", true, nil},
		{"no listen stream: counted and said", false, []replay.Undelivered{{Method: "notifications/tools/list_changed", Count: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mocktest.New(t, []replay.Source{cassetteOf(t, listenTape...)})
			changed := make(chan struct{}, 1)
			var opts mcp.ClientOptions
			if tt.listen {
				opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &opts)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("the client speaks %s, want 2026-07-28", v)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "grow", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if tt.listen {
				waitFor(t, changed, "list_changed on the listen stream")
			}
			if err := cs.Close(); err != nil {
				t.Fatal(err)
			}
			// A sessionless client's session ends when the server closes
			// (or it idles out): only then is what waited for it lost.
			if got := s.Report().Undelivered; got != nil {
				t.Errorf("counted %+v before the session ended", got)
			}
			s.Close()
			got := s.Report().Undelivered
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("undelivered %+v, want %+v", got, tt.want)
			}
			warning := `session 1 (sessionless, client {"name":"host","version":"1"}): 1 message for its subscriptions/listen streams never reached the client (notifications/tools/list_changed)`
			if warned := strings.Contains(s.Warnings(), warning); warned != !tt.listen {
				t.Errorf("warned %v, want %v:\n%s", warned, !tt.listen, s.Warnings())
			}
		})
	}
}

// A client whose requests carry no clientInfo is known by its connection;
// what its session sends outside a request goes to any client's listen
// stream (the one that should carry it may be on another connection), so
// it waits even after the connection and its session end, and is lost
// only when the server closes.
func TestUndelivered_NoListenStreamByConnection(t *testing.T) {
	s := mocktest.New(t, []replay.Source{cassetteOf(t, listenTape...)})
	url := s.URL()
	hc := &http.Client{Transport: &http.Transport{}}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"grow","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setStatelessHeaders(req, "tools/call", "grow")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := bodyOf(t, resp); !strings.Contains(got, `"id":7`) {
		t.Fatalf("tools/call: %s", got)
	}
	hc.CloseIdleConnections()
	for deadline := time.Now().Add(10 * time.Second); replay.HTTPSessions(s.Server) != 0; time.Sleep(5 * time.Millisecond) { // polling, with a deadline
		if time.Now().After(deadline) {
			t.Fatal("the connection's session outlived the connection")
		}
	}
	if got := s.Report().Undelivered; got != nil {
		t.Errorf("counted %+v while another client could still listen", got)
	}
	s.Close()
	want := []replay.Undelivered{{Method: "notifications/tools/list_changed", Count: 1}}
	if got := s.Report().Undelivered; !reflect.DeepEqual(got, want) {
		t.Errorf("undelivered %+v, want %+v", got, want)
	}
	for _, w := range []string{"session 1 (sessionless, conn 127.0.0.1:", "never reached the client (notifications/tools/list_changed): no client had a subscriptions/listen stream open"} {
		if !strings.Contains(s.Warnings(), w) {
			t.Errorf("the warning lacks %q:\n%s", w, s.Warnings())
		}
	}
}

// What waits for a listen stream is bounded (10,000 messages); past the
// bound a message is lost at once, and counted then.
func TestUndelivered_ListenQueueFull(t *testing.T) {
	tape := append([]string{}, listenTape[:2]...)
	tape = append(tape,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grow","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)
	const sent = 10001
	for range sent {
		tape = append(tape, `< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	}
	s := mocktest.New(t, []replay.Source{cassetteOf(t, tape...)})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "grow", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	// Past the bound, counted as they come: after the answer, so poll.
	before := pollUndelivered(s, 1)
	s.Close()
	if want := []replay.Undelivered{{Method: "notifications/tools/list_changed", Count: sent - 10000}}; !reflect.DeepEqual(before, want) {
		t.Errorf("before the session ended: undelivered %+v, want %+v", before, want)
	}
	if got, want := s.Report().Undelivered, []replay.Undelivered{{Method: "notifications/tools/list_changed", Count: sent}}; !reflect.DeepEqual(got, want) {
		t.Errorf("undelivered %+v, want %+v", got, want)
	}
	for _, w := range []string{"and 10000 messages already waited for one", "10000 messages for its subscriptions/listen streams never reached the client"} {
		if !strings.Contains(s.Warnings(), w) {
			t.Errorf("no warning %q:\n%.2000s", w, s.Warnings())
		}
	}
}
