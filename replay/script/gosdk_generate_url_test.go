package script_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// urlHost is go-sdk's client as a host that takes URL-mode elicitations,
// accepts each and keeps what it was asked.
type urlHost struct {
	mu    sync.Mutex
	asked []*mcp.ElicitParams
}

func (h *urlHost) client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.asked = append(h.asked, req.Params)
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
}

// TestGoSDK_FromTapeURLElicitation: server-everything's
// trigger-url-elicitation, called with two URLs by go-sdk's client
// through mcpspy's stdio proxy, becomes an elicit in mode url whose url
// follows the call's argument: the script sends the same client to the
// URL a third call names, in both eras, and answers the recorded calls as
// server-everything did.
func TestGoSDK_FromTapeURLElicitation(t *testing.T) {
	calls := []map[string]any{
		{"url": "https://auth.example.com/a", "elicitationId": "e-1"},
		{"url": "https://auth.example.com/b", "elicitationId": "e-2"},
	}
	drive := func(t *testing.T, ctx context.Context, cs *mcp.ClientSession, args []map[string]any) []string {
		t.Helper()
		var answers []string
		for _, a := range args {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "trigger-url-elicitation", Arguments: a})
			if err != nil {
				t.Fatal(err)
			}
			answers = append(answers, normalResult(t, res))
		}
		return answers
	}
	live := &urlHost{}
	var recorded []string
	tape := recordWith(t, live.client(), stdioRecording, func(ctx context.Context, cs *mcp.ClientSession) {
		recorded = drive(t, ctx, cs, calls)
	})
	path, out := scriptFile(t, "url.yaml", tape)
	if !strings.Contains(string(out), "mode: url") || !strings.Contains(string(out), "url: '{{.args.url}}'") {
		t.Errorf("the elicit is not in mode url with the call's url:\n%s", out)
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			host := &urlHost{}
			cs := connectClient(t, tc, path, host.client())
			ctx := ctxT(t)
			if got := drive(t, ctx, cs, calls); !reflect.DeepEqual(got, recorded) {
				t.Errorf("answers\n%q\nrecorded\n%q", got, recorded)
			}
			drive(t, ctx, cs, []map[string]any{{"url": "https://auth.example.com/c"}})
			host.mu.Lock()
			defer host.mu.Unlock()
			var urls []string
			for _, p := range host.asked {
				if p.Mode != "url" {
					t.Errorf("asked in mode %q, want url", p.Mode)
				}
				urls = append(urls, p.URL)
			}
			if want := []string{"https://auth.example.com/a", "https://auth.example.com/b", "https://auth.example.com/c"}; !reflect.DeepEqual(urls, want) {
				t.Errorf("sent to %q, want %q", urls, want)
			}
		})
	}
}

// TestGoSDK_FromTapeOneTemplate: server-everything's echo, called with
// two messages through mcpspy's stdio proxy, becomes one answer over the
// message: the script echoes a third message go-sdk's client sends, in
// both eras, as server-everything would have.
func TestGoSDK_FromTapeOneTemplate(t *testing.T) {
	echo := func(t *testing.T, ctx context.Context, cs *mcp.ClientSession, msg string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
		if err != nil {
			t.Fatal(err)
		}
		return text(t, res)
	}
	var recorded []string
	tape := recordWith(t, mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil), stdioRecording, func(ctx context.Context, cs *mcp.ClientSession) {
		recorded = []string{echo(t, ctx, cs, "one"), echo(t, ctx, cs, "two")}
	})
	if recorded[0] != "Echo: one" {
		t.Fatalf("server-everything echoed %q", recorded)
	}
	path, out := scriptFile(t, "echo.yaml", tape)
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc, path, nil)
			if got := echo(t, ctxT(t), cs, "a message never recorded"); got != "Echo: a message never recorded" {
				t.Errorf("echo: %q\nscript:\n%s", got, out)
			}
		})
	}
}
