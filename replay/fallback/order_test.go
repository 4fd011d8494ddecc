package fallback_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// TestFallback_KeepsClientOrder: a client that writes its handshake and
// forty calls at once, without waiting (as the JSON-RPC it speaks
// allows), has them reach server-everything in the order it wrote them,
// notifications/initialized first. The engine answers each message for
// the fallback on a goroutine of its own; the order comes from the turns
// it hands out as it reads (replay.Sequencer).
func TestFallback_KeepsClientOrder(t *testing.T) {
	const calls = 40
	db := filepath.Join(t.TempDir(), "order.db")
	fb := newFallback(t, fallback.Options{Command: peertest.ServerEverything(t, "stdio"), Record: db, Stderr: io.Discard})
	srv, err := replay.NewServer([]replay.Source{fb}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()

	var sent strings.Builder
	sent.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipeliner","version":"1"}}}` + "\n")
	sent.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	var want []string
	for i := range calls {
		fmt.Fprintf(&sent, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m%d"}}}`+"\n", i+1, i)
		want = append(want, fmt.Sprintf("m%d", i))
	}
	go func() { _, _ = io.WriteString(inW, sent.String()) }()

	answered := map[int]string{}
	sc := bufio.NewScanner(outR)
	for len(answered) < calls+1 && sc.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || m.Method != "" {
			continue // a notification of the server's
		}
		if m.Error != nil {
			t.Errorf("id %d answered an error: %s", *m.ID, m.Error)
		}
		answered[*m.ID] = sc.Text()
	}
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if len(answered) != calls+1 {
		t.Fatalf("%d of %d requests answered", len(answered), calls+1)
	}
	srv.Close()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}

	all := sessions(t, db)
	if len(all) != 1 {
		t.Fatalf("%d sessions recorded, want 1", len(all))
	}
	var methods, echoed []string
	for _, m := range all[0].Messages {
		if m.Dir != store.C2S {
			continue
		}
		var f struct {
			Method string `json:"method"`
			Params struct {
				Arguments struct {
					Message string `json:"message"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(m.Frame, &f) != nil || f.Method == "" {
			continue // a reply to the server
		}
		methods = append(methods, f.Method)
		if f.Method == "tools/call" {
			echoed = append(echoed, f.Params.Arguments.Message)
		}
	}
	if len(methods) < 3 || methods[0] != "initialize" || methods[1] != "notifications/initialized" || slices.Index(methods, "notifications/initialized") != 1 {
		t.Errorf("reached the server: %q…; want initialize, then the client's notifications/initialized, then the calls", methods[:min(len(methods), 5)])
	}
	if !slices.Equal(echoed, want) {
		t.Errorf("the calls reached the server in this order:\n%q\nwant the client's:\n%q", echoed, want)
	}
}

// TestFallback_LongCallDoesNotHoldUpTheNext: a request's turn ends once it
// has gone out, not once it is answered. The go-sdk server answers as JSON
// (no event stream, so the POST's response waits for the answer); while
// one call is held at the server, the next goes out and is answered.
func TestFallback_LongCallDoesNotHoldUpTheNext(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	s := mcp.NewServer(&mcp.Implementation{Name: "holder", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "hold"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		close(entered)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ Text string }) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	real := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	defer real.Close()
	u, _ := url.Parse(real.URL)
	fb := newFallback(t, fallback.Options{URL: u})
	srv := mocktest.New(t, []replay.Source{fb})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(ctx, t, srv.Transport())
	defer c.cs.Close()

	held := make(chan error, 1)
	go func() {
		_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{}})
		held <- err
	}()
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("hold never reached the server")
	}
	if got := c.call(ctx, t, "echo", map[string]any{"Text": "while held"}, nil); got != "while held" {
		t.Errorf("echo while hold is held: %q", got)
	}
	select {
	case err := <-held:
		t.Fatalf("hold returned (%v) before it was released", err)
	default:
	}
	release <- struct{}{}
	if err := <-held; err != nil {
		t.Errorf("hold: %v", err)
	}
}
