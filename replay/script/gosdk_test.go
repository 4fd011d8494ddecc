package script_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/script"
)

// These tests put a real client, go-sdk v1.8's, in front of scripts served
// by the replay engine, over stdio (in process) and Streamable HTTP, in
// both protocol eras.

type transportCase struct {
	name    string
	version string // ClientSessionOptions.ProtocolVersion; "" = go-sdk's newest (2026-07-28, server/discover)
	http    bool
}

var transports = []transportCase{
	{"stdio/2025-11-25", "2025-11-25", false},
	{"stdio/2026-07-28", "", false},
	{"http/2025-11-25", "2025-11-25", true},
	{"http/2026-07-28", "", true},
}

func serve(t *testing.T, file string) *replay.Server {
	t.Helper()
	return serveWith(t, file, replay.Options{})
}

// serveWith is serve with options.
func serveWith(t *testing.T, file string, opts replay.Options) *replay.Server {
	t.Helper()
	if !filepath.IsAbs(file) {
		file = filepath.Join(peertest.ModuleRoot(), "cassettes", file)
	}
	src, err := script.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer([]replay.Source{src}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// servePipes runs srv on stdio pipes: the client writes to toServer
// (closing it ends the session) and reads fromServer; done gets
// ServeStdio's result once it returns.
func servePipes(ctx context.Context, srv *replay.Server) (toServer io.WriteCloser, fromServer io.ReadCloser, done <-chan error) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	result := make(chan error, 1)
	go func() { result <- srv.ServeStdio(ctx, sr, sw); sw.Close() }()
	return cw, cr, result
}

// connect starts a server for the script and connects a go-sdk client.
func connect(t *testing.T, tc transportCase, file string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectClient(t, tc, file, mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, opts))
}

// connectClient is connect with a client of the test's own.
func connectClient(t *testing.T, tc transportCase, file string, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	return connectTo(t, tc, serve(t, file), client)
}

// connectTo is connectClient to a server of the test's own.
func connectTo(t *testing.T, tc transportCase, srv *replay.Server, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	var tr mcp.Transport
	if tc.http {
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { srv.Close(); hs.Close() })
		tr = &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}
	} else {
		cw, cr, done := servePipes(ctx, srv)
		t.Cleanup(func() {
			cw.Close()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("ServeStdio: %v", err)
			}
		})
		tr = &mcp.IOTransport{Reader: cr, Writer: cw}
	}
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("no content: %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("first block is %T", res.Content[0])
	}
	return tc.Text
}

func TestGoSDK_ToolListInPages(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc, "script-basic.yaml", nil)
			if got := cs.InitializeResult().ServerInfo; got == nil || got.Name != "demo-tools" {
				t.Errorf("serverInfo = %+v", got)
			}
			ctx := ctxT(t)
			var names []string
			pages := 0
			params := &mcp.ListToolsParams{}
			for {
				res, err := cs.ListTools(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
				if res.NextCursor == "" {
					break
				}
				params = &mcp.ListToolsParams{Cursor: res.NextCursor}
			}
			if got := strings.Join(names, ","); got != "greet,weather,picture,add,shout" || pages != 3 {
				t.Errorf("tools %s in %d pages", got, pages)
			}
			_, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "not-a-cursor"})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != -32602 {
				t.Errorf("bad cursor: %v", err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"city": "Paris"}})
			if err != nil {
				t.Fatal(err)
			}
			if m, _ := res.StructuredContent.(map[string]any); m["celsius"] != 21.5 {
				t.Errorf("structuredContent = %v", res.StructuredContent)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "picture"})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, c := range res.Content {
				kinds = append(kinds, strings.TrimPrefix(fmt.Sprintf("%T", c), "*mcp."))
			}
			if got := strings.Join(kinds, ","); got != "TextContent,ImageContent,AudioContent,ResourceLink,EmbeddedResource" {
				t.Errorf("content kinds %s", got)
			}
		})
	}
}

func TestGoSDK_ListChanged(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			changed := make(chan struct{}, 10)
			cs := connect(t, tc, "script-events.yaml", &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			})
			ctx := ctxT(t)
			for i := range 2 {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "unlock"}); err != nil {
					t.Fatalf("unlock %d: %v", i+1, err)
				}
			}
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("the list-changed handler did not fire")
			}
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			if got := strings.Join(names, ","); got != "unlock,status,secret" {
				t.Errorf("tools after the event: %s", got)
			}
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "status"})
			if err != nil || text(t, r) != "v2" {
				t.Errorf("replaced tool: %v %v", r, err)
			}
		})
	}
}

func TestGoSDK_Progress(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var progress []float64
			var logs []string
			cs := connect(t, tc, "script-progress.yaml", &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, r.Params.Progress)
					mu.Unlock()
				},
				//lint:ignore SA1019 scripts still send logging notifications, which clients before 2026-07-28 receive
				LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
					mu.Lock()
					logs = append(logs, string(r.Params.Level))
					mu.Unlock()
				},
			})
			ctx := ctxT(t)
			p := &mcp.CallToolParams{Name: "build", Arguments: map[string]any{"target": "app"}}
			if tc.version == "" {
				// 2026-07-28 logs only to a request that asks for them.
				p.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": "debug"}
			}
			p.SetProgressToken("tok-1")
			res, err := cs.CallTool(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "built app" {
				t.Errorf("text %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(progress, []float64{1, 2, 3}) {
				t.Errorf("progress %v", progress)
			}
			if !slices.Equal(logs, []string{"info", "debug"}) {
				t.Errorf("logs %v", logs)
			}
		})
	}
}

func TestGoSDK_Errors(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc, "script-errors.yaml", nil)
			ctx := ctxT(t)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "divide", Arguments: map[string]any{"a": 1, "b": 0}})
			if err != nil || !res.IsError || text(t, res) != "division by zero" {
				t.Errorf("isError answer: %+v %v", res, err)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "divide", Arguments: map[string]any{"a": 1}})
			if err != nil || !res.IsError || !strings.Contains(text(t, res), "b") {
				t.Errorf("invalid arguments as isError: %+v %v", res, err)
			}
			var werr *jsonrpc.Error
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "strict", Arguments: map[string]any{"count": 0}})
			if !errors.As(err, &werr) || werr.Code != -32602 || !strings.Contains(werr.Message, "count") {
				t.Errorf("invalid arguments as -32602: %v", err)
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "broken", Arguments: map[string]any{"q": 1}})
			if !errors.As(err, &werr) || werr.Code != -32000 || !strings.Contains(string(werr.Data), "inventory") {
				t.Errorf("JSON-RPC error: %v", err)
			}
		})
	}
}

func TestGoSDK_HungCallTimesOut(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc, "script-faults.yaml", nil)
			ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
			defer cancel()
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hang"})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("hung call: want a deadline error, got %v", err)
			}
			// The session still works after the client gave up.
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "ok"})
			if err != nil || text(t, res) != "fine" {
				t.Errorf("after the hung call: %+v %v", res, err)
			}
		})
	}
}

// TestGoSDK_Elicit puts script-elicit.yaml's form to go-sdk's client in
// both eras: as elicitation/create mid-call (2025-11-25), and as an
// input_required result the client's multi round-trip support answers
// and retries (2026-07-28). The answer the user gives picks the tool's
// answer; a client that declares no elicitation is not asked.
func TestGoSDK_Elicit(t *testing.T) {
	answers := []struct {
		give *mcp.ElicitResult
		want string
	}{
		{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true, "note": "v2.1"}}, "deployed api (v2.1)"},
		{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}, "api not deployed: not confirmed"},
		{&mcp.ElicitResult{Action: "decline"}, "the user declined to deploy api"},
		{&mcp.ElicitResult{Action: "cancel"}, "api not deployed: no answer"},
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			next := answers[0].give
			cs := connect(t, tc, "script-elicit.yaml", &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params.Message)
					return next, nil
				},
			})
			ctx := ctxT(t)
			for i, a := range answers {
				mu.Lock()
				next = a.give
				mu.Unlock()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"service": "api"}})
				if err != nil {
					t.Fatalf("answer %d: %v", i, err)
				}
				if got := text(t, res); got != a.want {
					t.Errorf("answer %d (%s): %q, want %q", i, a.give.Action, got, a.want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != len(answers) || asked[0] != "Deploy api to production?" {
				t.Errorf("the client was asked %q; want the rendered message once a call", asked)
			}
		})
		t.Run(tc.name+"/client without elicitation", func(t *testing.T) {
			cs := connect(t, tc, "script-elicit.yaml", nil)
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "deploy", Arguments: map[string]any{"service": "api"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "api not deployed: no answer" || !res.IsError {
				t.Errorf("%q (isError %v), want the default answer", got, res.IsError)
			}
		})
	}
}
