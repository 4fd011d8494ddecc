package script_test

//lint:file-ignore SA1019 2026-07-28 deprecates sampling and roots (SEP-2577), which still work; mcpmock serves them, and this file tests that

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDK_Sample: a tool's sample reaches the go-sdk client's sampling
// handler (mid-call, or as an input_required round in 2026-07-28) with
// the rendered request, and the answer reads the model's reply; a tool's
// roots: true gets the client's roots. A client without a sampling
// handler is not asked.
func TestGoSDK_Sample(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []*mcp.CreateMessageParams
			client := mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, &mcp.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params)
					return &mcp.CreateMessageResult{Role: "assistant", Model: "fake-model", Content: &mcp.TextContent{Text: "a short summary"}}, nil
				},
			})
			client.AddRoots(&mcp.Root{URI: "file:///work/a", Name: "a"}, &mcp.Root{URI: "file:///work/b"})
			cs := connectClient(t, tc, "script-sample.yaml", client)
			ctx := ctxT(t)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "summarize", Arguments: map[string]any{"text": "a long story"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "summary by fake-model: a short summary" {
				t.Errorf("summarize: %q", got)
			}
			mu.Lock()
			if len(asked) != 1 {
				t.Fatalf("the model was asked %d times, want once", len(asked))
			}
			p := asked[0]
			mu.Unlock()
			if p.SystemPrompt != "You summarize in one sentence." || p.MaxTokens != 100 || len(p.Messages) != 1 {
				t.Errorf("request %+v", p)
			} else if m, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || m.Text != "Summarize: a long story" || p.Messages[0].Role != "user" {
				t.Errorf("message %+v", p.Messages[0])
			}
			if p.ModelPreferences == nil || p.ModelPreferences.IntelligencePriority != 0.8 {
				t.Errorf("modelPreferences %+v", p.ModelPreferences)
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "workspace", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "roots: file:///work/a file:///work/b" {
				t.Errorf("workspace: %q", got)
			}
		})
		t.Run(tc.name+"/client without sampling", func(t *testing.T) {
			cs := connect(t, tc, "script-sample.yaml", nil)
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "summarize", Arguments: map[string]any{"text": "x"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "no summary" || !res.IsError {
				t.Errorf("%q (isError %v), want the default answer", got, res.IsError)
			}
		})
	}
}
