package replay_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// Change notifications of the 2026-07-28 era over HTTP travel on
// subscriptions/listen streams, each on a connection of its own, which
// mcpspy records as a session of its own, apart from the calls that
// caused them.

// listenServer starts a stateless go-sdk server over Streamable HTTP
// whose tools change its tool list (grow) and a resource (touch), and
// returns its URL.
func listenServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "listener", Version: "1.0.0"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{Subscribe: true},
		},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Changes res://counter"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "res://counter"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "touched"}}}, nil, err
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds the tool grown"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "grown", Description: "Added by grow"},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{}, nil, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grew"}}}, nil, nil
		})
	s.AddResource(&mcp.Resource{URI: "res://counter", Name: "counter", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "res://counter", Text: "1"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String() + "/mcp"
}

type echoIn struct {
	Text string `json:"text"`
}

// listenScenario has a go-sdk client of 2026-07-28 at url call echo,
// subscribe to res://counter, call touch (which updates it) and grow
// (which changes the tool list), and returns what it saw.
func listenScenario(t *testing.T, url string) transcript {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, updated, changed := listeningClient()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	var out transcript
	out.addf("protocol %s", cs.InitializeResult().ProtocolVersion)
	out.addf("tools %s", toolNames(ctx, t, cs))
	call := func(name string) {
		args := map[string]any{}
		if name == "echo" {
			args["text"] = "hi"
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		out.addf("call %s: %s", name, resultText(res))
	}
	call("echo")
	// In 2026-07-28, go-sdk's Subscribe opens a listen stream for the
	// resource, and returns once the server has acknowledged it.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "res://counter"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	call("touch")
	out.addf("updated %s", waitFor(t, updated, "resources/updated"))
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "res://counter"}); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}
	call("grow")
	waitFor(t, changed, "tools/list_changed")
	out.addf("list_changed")
	out.addf("tools %s", toolNames(ctx, t, cs))
	if len(updated) > 0 {
		// Sent on both listen streams, one of which asked for the tool
		// list alone; a second copy comes with the first, well before
		// the calls since.
		out.addf("another resources/updated")
	}
	return out
}

// recordListen records listenScenario against listenServer through
// mcpspy and returns the cassette and what the client saw.
func recordListen(t *testing.T) (string, transcript) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "listen.db")
	spy := peertest.Binary(t, "mcpspy")
	t.Cleanup(func() { logCassette(t, spy, db) })
	upstream := listenServer(t)
	p := peertest.Start(t, "", nil, nil, nil, spy, "record", "-o", db, "--listen", "127.0.0.1:0", "--upstream", upstream)
	purl := p.WaitLine(t, "mcpspy: listening on ", 20*time.Second)
	live := listenScenario(t, strings.TrimSuffix(purl, "/")+"/mcp")
	p.Stop(t, 15*time.Second)
	return db, live
}

// TestReplay_ListenAcrossConnections replays a stateless go-sdk
// recording to the same client: the notifications its listen streams
// carried, recorded in sessions apart from the calls that caused them,
// come after those calls, once each.
func TestReplay_ListenAcrossConnections(t *testing.T) {
	db, live := recordListen(t)
	report := filepath.Join(t.TempDir(), "report.json")
	tr := mockTransport(t, "http", db, report).(*mcp.StreamableClientTransport)
	replayed := listenScenario(t, tr.Endpoint)
	if d := cmp.Diff(live, replayed); d != "" {
		t.Errorf("replay differs from live (-live +replay):\n%s", d)
	}
}

// TestReplay_ListenMCPGo replays the go-sdk recording to mcp-go's
// client, which asks for the tool list and the resource in one listen
// where go-sdk's made two: mcpmock acknowledges it as a server would, and
// sends on it what it asked for.
func TestReplay_ListenMCPGo(t *testing.T) {
	db, _ := recordListen(t)
	report := filepath.Join(t.TempDir(), "report.json")
	// Registered first, so run last: after mcpmock has stopped and
	// written its report. mcp-go's one listen used go-sdk's two.
	t.Cleanup(func() {
		for _, u := range readReport(t, report).Unused {
			if strings.Contains(u, "subscriptions/listen") {
				t.Errorf("a recorded listen reported unused though mcp-go listened: %s", u)
			}
		}
	})
	url := mockTransport(t, "http", db, report).(*mcp.StreamableClientTransport).Endpoint
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr, err := mgtransport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	c := mgclient.NewClient(tr)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	updated, changed := make(chan string, 10), make(chan struct{}, 10)
	c.OnNotification(func(n mgmcp.JSONRPCNotification) {
		switch n.Method {
		case "notifications/resources/updated":
			updated <- fmt.Sprint(n.Params.AdditionalFields["uri"])
		case "notifications/tools/list_changed":
			changed <- struct{}{}
		}
	})
	var init mgmcp.InitializeRequest
	init.Params.ClientInfo = mgmcp.Implementation{Name: "mcp-go", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	listenErr := make(chan error, 1)
	stop, err := c.ListenAsync(ctx, mgmcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"res://counter"}},
		func(err error) { listenErr <- err })
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer stop()
	call := func(name string, args map[string]any) string {
		var req mgmcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		var parts []string
		for _, ct := range res.Content {
			if tc, ok := ct.(mgmcp.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
		return strings.Join(parts, " ")
	}
	var got transcript
	got.addf("echo %s", call("echo", map[string]any{"text": "hi"}))
	got.addf("touch %s", call("touch", map[string]any{}))
	select {
	case uri := <-updated:
		got.addf("updated %s", uri)
	case err := <-listenErr:
		t.Fatalf("listen refused: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("no resources/updated within 15 s")
	}
	got.addf("grow %s", call("grow", map[string]any{}))
	select {
	case <-changed:
		got.addf("list_changed")
	case err := <-listenErr:
		t.Fatalf("listen refused: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("no tools/list_changed within 15 s")
	}
	want := transcript{"echo hi", "touch touched", "updated res://counter", "grow grew", "list_changed"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mcp-go saw (-want +got):\n%s", d)
	}
}

// TestReplay_ListenToHandshakeSubscriber replays the stateless go-sdk
// recording, whose client subscribed by a listen, to a go-sdk client of
// the handshake era, which subscribes by resources/subscribe: nothing on
// tape answers that, but the recorded server took subscriptions, so
// mcpmock does, and sends the recorded resources/updated only while the
// client is subscribed.
func TestReplay_ListenToHandshakeSubscriber(t *testing.T) {
	t.Parallel()
	db, _ := recordListen(t)
	report := filepath.Join(t.TempDir(), "report.json")
	t.Cleanup(func() { // registered first, so run after mcpmock has stopped
		if u := readReport(t, report).Unmatched; len(u) > 0 {
			t.Errorf("unmatched: %+v", u)
		}
	})
	tr := mockTransport(t, "http", db, report)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, updated, changed := listeningClient()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Fatalf("negotiated %s, want 2025-11-25", got)
	}
	touch := func() {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "touch", Arguments: map[string]any{}}); err != nil {
			t.Fatalf("call touch: %v", err)
		}
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "res://counter"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	touch()
	if uri := waitFor(t, updated, "resources/updated"); uri != "res://counter" {
		t.Errorf("resources/updated for %s, want res://counter", uri)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "res://counter"}); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
	touch()
	// grow's list_changed travels the same GET stream after whatever
	// touch brought: once it is here, nothing more of touch's is coming.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "grow", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("call grow: %v", err)
	}
	waitFor(t, changed, "tools/list_changed")
	if n := len(updated); n > 0 {
		t.Errorf("%d more resources/updated: one while subscribed, none after unsubscribing, wanted", n)
	}
}

// listeningClient is a go-sdk client that reports each resources/updated
// (its URI) and tools/list_changed it gets.
func listeningClient() (c *mcp.Client, updated chan string, changed chan struct{}) {
	updated, changed = make(chan string, 10), make(chan struct{}, 10)
	c = mcp.NewClient(&mcp.Implementation{Name: "listen-scenario", Version: "1.0.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	return c, updated, changed
}
