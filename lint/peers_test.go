package lint_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/crossretry"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
	"github.com/mcptape/mcptape/vcr"
)

// Real peers speak the protocol as the spec says, so traffic between them
// must lint clean: every finding here is either a false alarm of ours or
// a peer's bug worth writing down. The sessions cover both eras, stdio,
// Streamable HTTP with SSE and with JSON answers, and 2026-07-28 stateless
// HTTP; the go-sdk client drives tool listings, structured results,
// progress and list_changed.
func TestRealPeers_LintClean(t *testing.T) {
	shipped, _ := filepath.Glob(filepath.Join(peertest.ModuleRoot(), "cassettes", "*.db"))
	if len(shipped) < 2 {
		t.Fatalf("shipped cassettes: %q", shipped)
	}
	for _, path := range shipped { // the TypeScript SDK client and server-everything
		t.Run(filepath.Base(path), func(t *testing.T) { wantFindings(t, path) })
	}

	goServer := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	mcpmock := peertest.Binary(t, "mcpmock")
	shippedFile := func(name string) string { return filepath.Join(peertest.ModuleRoot(), "cassettes", name) }
	stdio := []struct {
		name    string
		command []string
		drive   func(t *testing.T, c *client)
		allowed []string
	}{
		{"go-sdk client, go-sdk server, stdio", []string{goServer}, driveGoServer, nil},
		{"go-sdk client, server-everything, stdio", peertest.ServerEverything(t, "stdio"), driveEverything, nil},
		// mcpmock must be as correct on the wire as the servers it fakes.
		{"go-sdk client, mcpmock replaying server-everything", []string{mcpmock, "serve", shippedFile("everything-stdio.db")}, driveShipped, nil},
		{"go-sdk client, mcpmock serving script-basic", []string{mcpmock, "serve", shippedFile("script-basic.yaml")}, driveBasicScript, nil},
		// mcpmock answers go-sdk's server/discover, so they speak
		// 2026-07-28, which deprecates the logging the script sends.
		{"go-sdk client, mcpmock serving script-progress", []string{mcpmock, "serve", shippedFile("script-progress.yaml")}, driveProgressScript, []string{"deprecated"}},
		{"go-sdk client, mcpmock serving script-events", []string{mcpmock, "serve", shippedFile("script-events.yaml")}, driveEventsScript, nil},
		{"go-sdk client, mcpmock serving script-elicit", []string{mcpmock, "serve", shippedFile("script-elicit.yaml")}, driveElicitScript, nil},
		// Sampling and roots too are deprecated in 2026-07-28 (SEP-2577);
		// a go-sdk v1.8 server can still ask for them, and so does mcpmock.
		{"go-sdk client, mcpmock serving script-sample", []string{mcpmock, "serve", shippedFile("script-sample.yaml")}, driveSampleScript, []string{"deprecated"}},
	}
	for _, tt := range stdio {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rec.db")
			t.Run("record", func(t *testing.T) {
				srv := vcr.New(t, path, tt.command, vcr.WithMode(vcr.Record))
				tt.drive(t, connect(t, srv.Transport()))
			})
			wantFindings(t, path, tt.allowed...)
		})
	}

	httpServers := []struct {
		name    string
		opts    mcp.StreamableHTTPOptions
		allowed []string
	}{
		{"go-sdk client and server, Streamable HTTP, SSE answers", mcp.StreamableHTTPOptions{}, nil},
		// go-sdk v1.8's server, answering in JSON, sends a call's
		// progress on the GET stream, racing the answer on the POST: in
		// some runs the progress comes after the answer, when its token
		// is no longer active (a MUST of the spec's progress rules).
		{"go-sdk client and server, Streamable HTTP, JSON answers", mcp.StreamableHTTPOptions{JSONResponse: true},
			[]string{"progress-after-response"}},
		{"go-sdk client and server, stateless 2026-07-28", mcp.StreamableHTTPOptions{Stateless: true}, nil},
	}
	for _, tt := range httpServers {
		t.Run(tt.name, func(t *testing.T) {
			srv := gosdk.NewServer("lint-go")
			up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &tt.opts))
			defer up.Close()
			path := filepath.Join(t.TempDir(), "rec.db")
			t.Run("record", func(t *testing.T) {
				rec := vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record))
				driveGoServer(t, connect(t, &mcp.StreamableClientTransport{Endpoint: rec.URL()}))
			})
			wantFindings(t, path, tt.allowed...)
		})
	}
	// Legacy HTTP+SSE (2024-11-05): the stream's endpoint event is kept
	// as a server frame, and is no malformed message.
	t.Run("TypeScript SDK client, server-everything, legacy HTTP+SSE", func(t *testing.T) {
		base := peertest.EverythingHTTP(t, "sse")
		path := filepath.Join(t.TempDir(), "rec.db")
		t.Run("record", func(t *testing.T) {
			rec := vcr.NewHTTP(t, path, base+"/sse", vcr.WithMode(vcr.Record))
			argv := peertest.NodeScript(t, "http-client.mjs", "sse", rec.URL(), "echo", `{"message":"hi"}`,
				"trigger-long-running-operation", `{"duration":0.3,"steps":3}`)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir = peertest.NPMDir(t)
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"echo":"Echo: hi"`) {
				t.Fatalf("http-client.mjs: %v\n%s", err, out)
			}
		})
		tape, err := store.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(tape.Sessions) == 0 || tape.Sessions[0].Info.Transport != store.TransportLegacySSE || len(tape.Sessions[0].Messages) == 0 || tape.Sessions[0].Messages[0].HTTP.EventType != "endpoint" {
			t.Fatalf("recorded %d sessions; want a legacy one that begins with its endpoint event", len(tape.Sessions))
		}
		wantFindings(t, path)
	})
	// The TypeScript SDK client, to a server without sessions, sends its
	// initialize, its notifications/initialized and its requests on
	// connections of their own, each recorded as a session: none is
	// judged alone as if it lacked its handshake.
	t.Run("TypeScript SDK client, go-sdk server without sessions (handshake era)", func(t *testing.T) {
		srv := gosdk.NewServer("lint-go")
		up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
		defer up.Close()
		path := filepath.Join(t.TempDir(), "rec.db")
		t.Run("record", func(t *testing.T) {
			rec := vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record))
			argv := peertest.NodeScript(t, "http-client.mjs", "streamable", rec.URL(), "echo", `{"text":"hi"}`, "progress", `{"steps":3}`)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir = peertest.NPMDir(t)
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"progress":3`) {
				t.Fatalf("http-client.mjs: %v\n%s", err, out)
			}
		})
		tape, err := store.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(tape.Sessions) < 2 {
			t.Fatalf("%d sessions recorded; want the client's connections apart", len(tape.Sessions))
		}
		wantFindings(t, path)
	})
	// A client with a connection per POST: every retry in another
	// session than its input_required result (crossretry.Find fails the
	// test when none is).
	t.Run("go-sdk client and server, stateless 2026-07-28, a connection per POST", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "rec.db")
		crossretry.Record(t, path, 2)
		tape, err := store.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		crossretry.Find(t, tape)
		wantFindings(t, path)
	})
}

// A go-sdk client of a go-sdk server without sessions, in 2026-07-28,
// subscribes to a resource with a subscriptions/listen of its own, gets
// its update on that stream, and cancels the listen with a
// notifications/cancelled on yet another connection: none of it is a
// finding (not the update, nor the listen never answered, nor the
// cancellation of a request of another session).
func TestRealPeers_SubscriptionsListen(t *testing.T) {
	const uri = "res://counter"
	srv := mcp.NewServer(&mcp.Implementation{Name: "lint-listen", Version: "1.0.0"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	srv.AddResource(&mcp.Resource{URI: uri, Name: "counter", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "1"}}}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "touch", Description: "Updates the counter"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if err := srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "touched"}}}, nil, nil
		})
	// The server's handler is done with each notifications/cancelled
	// POST (the recorder has it) when it says so here.
	cancelled := make(chan struct{}, 10)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.Header.Get("Mcp-Method") == "notifications/cancelled" {
			cancelled <- struct{}{}
		}
	}))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "rec.db")
	t.Run("record", func(t *testing.T) {
		rec := vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		updated, acked := make(chan struct{}, 10), make(chan struct{}, 10)
		c := mcp.NewClient(&mcp.Implementation{Name: "lint-test", Version: "1"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { updated <- struct{}{} },
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}, // go-sdk listens for it too
		})
		c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && method == "notifications/subscriptions/acknowledged" &&
					slices.Contains(p.Notifications.ResourceSubscriptions, uri) {
					acked <- struct{}{}
				}
				return next(ctx, method, req)
			}
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rec.URL()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		wait := func(ch <-chan struct{}, what string) {
			t.Helper()
			select {
			case <-ch:
			case <-ctx.Done():
				t.Fatalf("no %s", what)
			}
		}
		wait(acked, "acknowledgement of the listen")
		call(t, cs, "touch", map[string]any{}, nil)
		wait(updated, "notifications/resources/updated")
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		wait(cancelled, "notifications/cancelled at the server")
		call(t, cs, "touch", map[string]any{}, nil)
	})
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// What the test is about must be in the recording.
	listens := map[string]string{} // the listen's id → its session
	var updates, foreignCancels int
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			sum := jsonrpc.Classify(m.Frame)
			switch {
			case sum.Method == "subscriptions/listen":
				listens[sum.ID] = s.Info.ID
			case sum.Method == "notifications/resources/updated":
				updates++
			}
		}
	}
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			if sum := jsonrpc.Classify(m.Frame); sum.Method == "notifications/cancelled" {
				var p struct {
					Params struct {
						RequestID json.RawMessage `json:"requestId"`
					} `json:"params"`
				}
				if json.Unmarshal(m.Frame, &p) == nil && listens[string(p.Params.RequestID)] != "" && listens[string(p.Params.RequestID)] != s.Info.ID {
					foreignCancels++
				}
			}
		}
	}
	if len(listens) == 0 || updates == 0 || foreignCancels == 0 {
		t.Fatalf("recorded %d listens, %d updates, %d cancellations of a listen in another session; want some of each", len(listens), updates, foreignCancels)
	}
	wantFindings(t, path)
}

// wantFindings fails the test for every finding in the cassette at path
// under a rule not allowed (none is, for clean traffic).
func wantFindings(t *testing.T, path string, allowed ...string) {
	t.Helper()
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range tape.Sessions {
		n += len(s.Messages)
	}
	if n < 10 {
		t.Fatalf("%s: %d messages, too few to judge", path, n)
	}
	before := lint.Tape(tape, lint.Options{})
	for _, f := range before {
		if !slices.Contains(allowed, f.Rule) {
			t.Errorf("%s %s\n\tframe: %.300s", filepath.Base(path), f, frameOf(tape, f))
		}
	}
	// The control: with the last answer to a tools/call cut out, the same
	// traffic shows that too, so the check above did look at it. Not an
	// input_required answer: cutting it also makes its retry, perhaps in
	// another session, a retry of nothing, a second finding as right.
	for i := range tape.Sessions {
		s := &tape.Sessions[i]
		calls := map[string]bool{} // ids of the client's tools/calls
		for _, m := range s.Messages {
			if sum := jsonrpc.Classify(m.Frame); m.Dir == store.C2S && sum.Method == "tools/call" {
				calls[sum.ID] = true
			}
		}
		for j := len(s.Messages) - 1; j >= 0; j-- {
			m := s.Messages[j]
			sum := jsonrpc.Classify(m.Frame)
			if m.Dir != store.S2C || sum.Kind != jsonrpc.Response || !calls[sum.ID] || sum.InputRequired {
				continue
			}
			s.Messages = slices.Delete(s.Messages, j, j+1)
			after := lint.Tape(tape, lint.Options{})
			var added []lint.Finding
			for _, f := range after {
				if !slices.Contains(before, f) {
					added = append(added, f)
				}
			}
			if len(added) != 1 || added[0].Rule != "unanswered" || !strings.Contains(added[0].Message, "tools/call "+sum.ID) {
				t.Errorf("with the answer at %s:%d cut out, new findings %v, want one unanswered tools/call %s", s.Info.ID, m.Seq, added, sum.ID)
			}
			return
		}
	}
	t.Errorf("%s: no tools/call answer to cut out", path)
}

func frameOf(tape *store.Tape, f lint.Finding) []byte {
	for _, s := range tape.Sessions {
		if s.Info.ID == f.Session && f.Seq > 0 && int(f.Seq) <= len(s.Messages) {
			return s.Messages[f.Seq-1].Frame
		}
	}
	return nil
}

// client is a go-sdk client session that counts the progress it gets.
type client struct {
	cs       *mcp.ClientSession
	progress chan struct{}
}

func connect(t *testing.T, tr mcp.Transport) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	progress := make(chan struct{}, 100)
	c := mcp.NewClient(&mcp.Implementation{Name: "lint-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress <- struct{}{} },
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if s, ok := req.Params.RequestedSchema.(map[string]any); ok {
				props, _ := s["properties"].(map[string]any)
				switch { // script-elicit's forms
				case props["confirm"] != nil:
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true, "note": "lint"}}, nil
				case props["language"] != nil:
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"language": "French"}}, nil
				case props["allow"] != nil:
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
				}
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		// Sampling is deprecated in 2026-07-28 (SEP-2577) but still served: script-sample asks for it.
		//lint:ignore SA1019 see above
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			//lint:ignore SA1019 see above
			return &mcp.CreateMessageResult{Role: "assistant", Model: "lint-model", Content: &mcp.TextContent{Text: "short"}}, nil
		},
	})
	//lint:ignore SA1019 handshake-era servers (server-everything's get-roots-list) still ask for roots
	c.AddRoots(&mcp.Root{URI: "file:///tmp", Name: "tmp"})
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &client{cs: cs, progress: progress}
}

// awaitProgress waits for n progress notifications, wherever the server
// sends them (go-sdk with JSON answers sends them later, on the GET
// stream), so that the recording holds them before the session closes.
func (c *client) awaitProgress(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for range n {
		select {
		case <-c.progress:
		case <-deadline:
			t.Fatalf("fewer than %d progress notifications", n)
		}
	}
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, token any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.Meta = mcp.Meta{"progressToken": token}
	}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func listTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// driveGoServer lists, calls a plain, a structured and a progress tool,
// grows the tool set (list_changed) and lists again.
func driveGoServer(t *testing.T, c *client) {
	cs := c.cs
	defer cs.Close()
	listTools(t, cs)
	call(t, cs, "echo", map[string]any{"text": "hi"}, nil)
	if res := call(t, cs, "sum", map[string]any{"a": 2, "b": 3}, nil); res.StructuredContent == nil {
		t.Error("sum: no structured content")
	}
	call(t, cs, "progress", map[string]any{"steps": 3}, "tok-1")
	c.awaitProgress(t, 3)
	// Input asked of the client: an input_required result and a retry
	// in 2026-07-28, an elicitation/create request before.
	if res := call(t, cs, "confirm", map[string]any{}, nil); len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hello Ada" {
		t.Errorf("confirm: %+v", res.Content)
	}
	call(t, cs, "grow", map[string]any{}, nil)
	if names := listTools(t, cs); !strings.Contains(strings.Join(names, ","), "grown") {
		t.Errorf("tools after grow: %q", names)
	}
}

// driveEverything calls server-everything's tools that exercise content
// types, structured output and progress.
func driveEverything(t *testing.T, c *client) {
	cs := c.cs
	defer cs.Close()
	listTools(t, cs)
	call(t, cs, "echo", map[string]any{"message": "hi"}, nil)
	call(t, cs, "get-sum", map[string]any{"a": 1, "b": 2}, nil)
	call(t, cs, "get-structured-content", map[string]any{"location": "New York"}, nil)
	call(t, cs, "get-tiny-image", map[string]any{}, nil)
	call(t, cs, "get-resource-links", map[string]any{"count": 2}, nil)
	call(t, cs, "trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3}, 7)
	c.awaitProgress(t, 3)
	call(t, cs, "get-roots-list", map[string]any{}, nil)
	// A form with a field of every kind (formats, titled and legacy
	// enums, multi-selects, bounds), accepted with what it requires:
	// elicitation-content must find nothing wrong with it.
	if res := call(t, cs, "trigger-elicitation-request", map[string]any{}, nil); !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "User provided") {
		t.Errorf("trigger-elicitation-request: %+v", res.Content[0])
	}
	call(t, cs, "trigger-sampling-request", map[string]any{"prompt": "hi"}, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resources, err := cs.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) == 0 {
		t.Fatalf("resources/list: %v, %v", resources, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: resources.Resources[0].URI}); err != nil {
		t.Fatalf("resources/read %s: %v", resources.Resources[0].URI, err)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for _, p := range prompts.Prompts {
		if len(p.Arguments) == 0 {
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name}); err != nil {
				t.Fatalf("prompts/get %s: %v", p.Name, err)
			}
			asked++
		}
	}
	if asked == 0 {
		t.Fatalf("no prompt without arguments among %d", len(prompts.Prompts))
	}
	//lint:ignore SA1019 server-everything speaks 2025-11-25, where logging is current
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
}

// driveShipped makes the calls the shipped everything-stdio cassette
// recorded, so that mcpmock answers each from it.
func driveShipped(t *testing.T, c *client) {
	cs := c.cs
	defer cs.Close()
	listTools(t, cs)
	call(t, cs, "echo", map[string]any{"message": "hello from mcptape"}, nil)
	call(t, cs, "get-sum", map[string]any{"a": 2, "b": 3}, nil)
	call(t, cs, "get-structured-content", map[string]any{"location": "New York"}, nil)
	call(t, cs, "get-tiny-image", map[string]any{}, nil)
	call(t, cs, "trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3}, "p")
	c.awaitProgress(t, 3)
}

// driveBasicScript lists every page of script-basic's tools and calls
// those with structured output and every content type.
func driveBasicScript(t *testing.T, c *client) {
	cs := c.cs
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := 0
	for _, err := range cs.Tools(ctx, nil) { // every page
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 5 {
		t.Errorf("%d tools listed, want 5", n)
	}
	call(t, cs, "greet", map[string]any{"name": "lint"}, nil)
	call(t, cs, "weather", map[string]any{"city": "Paris"}, nil)
	call(t, cs, "picture", map[string]any{}, nil)
	call(t, cs, "add", map[string]any{"a": 1, "b": 2}, nil)
}

// driveProgressScript calls a tool that logs and reports progress.
func driveProgressScript(t *testing.T, c *client) {
	cs := c.cs
	defer cs.Close()
	listTools(t, cs)
	// In 2026-07-28 a server logs to a request only at the level its
	// _meta asks for (none without one): ask for all the script sends.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "build", Arguments: map[string]any{"target": "all"},
		Meta: mcp.Meta{"progressToken": 1, "io.modelcontextprotocol/logLevel": "debug"}}); err != nil {
		t.Fatalf("build: %v", err)
	}
	c.awaitProgress(t, 3)
}

// driveElicitScript calls script-elicit's tool, gets its prompt and reads
// its resource, which all ask the user first (in 2026-07-28: an
// input_required result and a retry).
func driveElicitScript(t *testing.T, c *client) {
	cs := c.cs
	defer cs.Close()
	listTools(t, cs)
	for range 2 {
		if res := call(t, cs, "deploy", map[string]any{"service": "api"}, nil); res.Content[0].(*mcp.TextContent).Text != "deployed api (lint)" {
			t.Errorf("deploy: %+v", res.Content[0])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "translate", Arguments: map[string]string{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Messages[0].Content.(*mcp.TextContent).Text; got != "Translate into French: hi" {
		t.Errorf("translate: %q", got)
	}
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///secrets.env"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Contents[0].Text; got != "API_KEY=not-a-real-key" {
		t.Errorf("secrets.env: %q", got)
	}
}

// driveSampleScript calls script-sample's tools, which ask the client's
// model and its roots first.
func driveSampleScript(t *testing.T, c *client) {
	cs := c.cs
	defer cs.Close()
	listTools(t, cs)
	if res := call(t, cs, "summarize", map[string]any{"text": "a long story"}, nil); res.Content[0].(*mcp.TextContent).Text != "summary by lint-model: short" {
		t.Errorf("summarize: %+v", res.Content[0])
	}
	if res := call(t, cs, "workspace", map[string]any{}, nil); res.Content[0].(*mcp.TextContent).Text != "roots: file:///tmp" {
		t.Errorf("workspace: %+v", res.Content[0])
	}
}

// driveEventsScript changes script-events' tool set, then reads its
// resource and prompt.
func driveEventsScript(t *testing.T, c *client) {
	cs := c.cs
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listTools(t, cs)
	call(t, cs, "unlock", map[string]any{}, nil)
	call(t, cs, "unlock", map[string]any{}, nil)
	if names := listTools(t, cs); !slices.Contains(names, "secret") {
		t.Errorf("tools after two unlocks: %q", names)
	}
	call(t, cs, "secret", map[string]any{}, nil)
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///readme.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize", Arguments: map[string]string{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
}

// server-everything goes on reporting progress for a call the client has
// cancelled (trigger-long-running-operation runs to its end), which the
// spec says a receiver should not: lint tells, as info, since the first
// such progress may have crossed the cancel.
func TestRealPeers_ProgressAfterCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.db")
	t.Run("record", func(t *testing.T) {
		srv := vcr.New(t, path, peertest.ServerEverything(t, "stdio"), vcr.WithMode(vcr.Record))
		c := connect(t, srv.Transport())
		defer c.cs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{
				Name:      "trigger-long-running-operation",
				Arguments: map[string]any{"duration": 2, "steps": 4},
				Meta:      mcp.Meta{"progressToken": "tok"},
			})
			done <- err
		}()
		c.awaitProgress(t, 1)
		cancel() // go-sdk sends notifications/cancelled
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled call returned %v", err)
		}
		c.awaitProgress(t, 1) // the server did not stop
	})
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var found []lint.Finding
	for _, f := range lint.Tape(tape, lint.Options{}) {
		if f.Rule == "progress-after-cancel" {
			found = append(found, f)
			continue
		}
		t.Errorf("finding %s", f) // nothing else is wrong with the traffic
	}
	if len(found) == 0 || found[0].Severity != lint.Info {
		t.Fatalf("progress-after-cancel findings %v, want at least one, at info", found)
	}
}
