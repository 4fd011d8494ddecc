package script_test

//lint:file-ignore SA1019 2026-07-28 deprecates sampling (SEP-2577), which still works; server-everything asks for it, and this file tests that

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// askingHost is go-sdk's client as a host that answers elicitations with
// the replies it is given, in turn, and sampling requests with a fixed
// model; it keeps what it was asked.
type askingHost struct {
	mu       sync.Mutex
	replies  []*mcp.ElicitResult
	elicited []*mcp.ElicitParams
	sampled  []*mcp.CreateMessageParams
}

func (h *askingHost) client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.elicited = append(h.elicited, req.Params)
			reply := h.replies[0]
			h.replies = h.replies[1:]
			return reply, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.sampled = append(h.sampled, req.Params)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "fake-model", Content: &mcp.TextContent{Text: "a reply"}}, nil
		},
	})
}

// askingCalls is what the host does, live and against the script: an
// elicitation accepted, one declined, and two sampling requests.
func askingCalls(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	var answers []string
	for _, c := range []mcp.CallToolParams{
		{Name: "trigger-elicitation-request", Arguments: map[string]any{}},
		{Name: "trigger-elicitation-request", Arguments: map[string]any{}},
		{Name: "trigger-sampling-request", Arguments: map[string]any{"prompt": "the tides", "maxTokens": 30}},
		{Name: "trigger-sampling-request", Arguments: map[string]any{"prompt": "the moon", "maxTokens": 30}},
	} {
		res, err := cs.CallTool(ctx, &c)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		answers = append(answers, normalResult(t, res))
	}
	return answers
}

func askingReplies() []*mcp.ElicitResult {
	return []*mcp.ElicitResult{
		{Action: "accept", Content: map[string]any{"name": "Ada", "check": true}},
		{Action: "decline"},
	}
}

// TestGoSDK_FromTapeAsks: go-sdk's client, as a host that answers
// elicitations and sampling requests, uses server-everything through
// mcpspy's stdio proxy. The script made from that recording asks the same
// client the same questions, in both eras and over both transports, and
// answers each call as server-everything did, the elicited action
// choosing the answer (the user declines first this time, and still gets
// the declined answer); the sampling prompt follows the call's argument.
func TestGoSDK_FromTapeAsks(t *testing.T) {
	t.Run("recorded over stdio", func(t *testing.T) {
		live := &askingHost{replies: askingReplies()}
		tape, recorded := recordAsking(t, live, stdioRecording)
		checkAskingScript(t, live, tape, recorded)
	})
	// Over HTTP the questions come on the stream of the call's POST.
	t.Run("recorded over Streamable HTTP", func(t *testing.T) {
		live := &askingHost{replies: askingReplies()}
		tape, recorded := recordAsking(t, live, httpRecording)
		checkAskingScript(t, live, tape, recorded)
	})
}

// checkAskingScript serves the script made from a recording of
// askingCalls to go-sdk's client over each transport and era.
func checkAskingScript(t *testing.T, live *askingHost, tape *store.Tape, recorded []string) {
	t.Helper()
	path, out := scriptFile(t, "asking.yaml", tape)
	if !strings.Contains(string(out), "{{.args.prompt}}") {
		t.Errorf("the sampling prompt is not a template over the call's prompt:\n%s", out)
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			// The user declines first this time: the reply, not the
			// call count, chooses the answer.
			replies := askingReplies()
			host := &askingHost{replies: []*mcp.ElicitResult{replies[1], replies[0]}}
			cs := connectClient(t, tc, path, host.client())
			want := []string{recorded[1], recorded[0], recorded[2], recorded[3]}
			if got := askingCalls(t, ctxT(t), cs); !reflect.DeepEqual(got, want) {
				t.Errorf("answers\n%q\nwant, as recorded\n%q\nscript:\n%s", got, want, out)
			}
			host.mu.Lock()
			defer host.mu.Unlock()
			if len(host.elicited) != 2 || len(host.sampled) != 2 {
				t.Fatalf("the host was asked %d elicitations and %d samplings, want 2 and 2", len(host.elicited), len(host.sampled))
			}
			for i, got := range host.elicited {
				want := live.elicited[1-i]
				if got.Message != want.Message || !sameJSON(t, got.RequestedSchema, want.RequestedSchema) {
					t.Errorf("elicitation %d: %q %s\nrecorded %q %s", i+1, got.Message, mustMarshal(t, got.RequestedSchema), want.Message, mustMarshal(t, want.RequestedSchema))
				}
			}
			for i, got := range host.sampled {
				if want := live.sampled[i]; !sameJSON(t, got, want) {
					t.Errorf("sampling %d: %s\nrecorded %s", i+1, mustMarshal(t, got), mustMarshal(t, want))
				}
			}
		})
	}
}

// recordAsking runs the host's calls against server-everything through
// one of mcpspy's proxies and returns the recording and the answers.
func recordAsking(t *testing.T, host *askingHost, through recording) (*store.Tape, []string) {
	t.Helper()
	var answers []string
	tape := recordWith(t, host.client(), through, func(ctx context.Context, cs *mcp.ClientSession) {
		answers = askingCalls(t, ctx, cs)
	})
	return tape, answers
}

// recording puts one of mcpspy's proxies in front of server-everything,
// recording into w; stop ends it.
type recording func(t *testing.T, ctx context.Context, w *store.Writer) (tr mcp.Transport, stop func() error)

// recordWith connects client to server-everything through a proxy,
// lets drive use the session (2025-11-25), and returns the recording.
func recordWith(t *testing.T, client *mcp.Client, through recording, drive func(context.Context, *mcp.ClientSession)) *store.Tape {
	t.Helper()
	db := filepath.Join(t.TempDir(), "recorded.db")
	w, err := store.NewWriter(db, store.WriterOptions{NoSync: true, Observe: store.ObserveHandshake})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr, stop := through(t, ctx, w)
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	drive(ctx, cs)
	cs.Close()
	return finishRecording(t, stop, w, db)
}

// finishRecording stops the proxy recording into w, closes w, and loads
// what it recorded at db.
func finishRecording(t *testing.T, stop func() error, w *store.Writer, db string) *store.Tape {
	t.Helper()
	if err := stop(); err != nil {
		t.Errorf("proxy: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	return tape
}

// stdioRecording runs server-everything behind mcpspy's stdio proxy.
func stdioRecording(t *testing.T, ctx context.Context, w *store.Writer) (mcp.Transport, func() error) {
	sess, err := w.NewSession(store.SessionInfo{Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	toProxy, clientOut := io.Pipe()
	clientIn, fromProxy := io.Pipe()
	p := &recorder.StdioProxy{Command: peertest.ServerEverything(t, "stdio"), Stdin: toProxy, Stdout: fromProxy, Stderr: io.Discard, Tap: sess, Grace: 5 * time.Second}
	ran := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx)
		fromProxy.Close()
		ran <- err
	}()
	return &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, func() error { return <-ran }
}

// httpRecording runs server-everything's Streamable HTTP server behind
// mcpspy's HTTP proxy.
func httpRecording(t *testing.T, ctx context.Context, w *store.Writer) (mcp.Transport, func() error) {
	proxy, stop := httpProxying(t, ctx, w, peertest.EverythingHTTP(t, "streamableHttp")+"/mcp")
	return &mcp.StreamableClientTransport{Endpoint: proxy + "/mcp"}, stop
}

// httpProxying runs mcpspy's HTTP proxy on 127.0.0.1 in front of
// upstream, recording into w, until stop (or ctx's end); proxy is its
// base URL.
func httpProxying(t *testing.T, ctx context.Context, w *store.Writer, upstream string) (proxy string, stop func() error) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	up := recorder.NewUpstreamTransport(false)
	p := &recorder.HTTPProxy{Upstream: u, Writer: w, Transport: up, Info: store.SessionInfo{Upstream: upstream}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() error {
		cancel()
		err := <-served
		up.CloseIdleConnections()
		return err
	}
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(mustMarshal(t, a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mustMarshal(t, b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
