package script_test

//lint:file-ignore SA1019 2026-07-28 deprecates sampling and roots (SEP-2577), which still work; mcpmock serves them, and this file tests that

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promptText is the text of the only message of a prompts/get result.
func promptText(t *testing.T, res *mcp.GetPromptResult) string {
	t.Helper()
	if len(res.Messages) != 1 {
		t.Fatalf("%d messages, want 1", len(res.Messages))
	}
	tc, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		t.Fatalf("message content is %T", res.Messages[0].Content)
	}
	return tc.Text
}

// resourceText is the text of the only contents of a resources/read
// result.
func resourceText(t *testing.T, res *mcp.ReadResourceResult) string {
	t.Helper()
	if len(res.Contents) != 1 {
		t.Fatalf("%d contents, want 1", len(res.Contents))
	}
	return res.Contents[0].Text
}

// TestGoSDK_PromptAndResourceElicit: a prompt's and a resource's elicit
// reach go-sdk's client as a tool's does, mid-call (2025-11-25) or as an
// input_required round that the client retries (2026-07-28), and the
// user's answer picks the messages or contents; a client without
// elicitation is not asked and gets the default.
func TestGoSDK_PromptAndResourceElicit(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			give := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"language": "French"}}
			cs := connect(t, tc, "script-elicit.yaml", &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params.Message)
					return give, nil
				},
			})
			ctx := ctxT(t)
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "translate", Arguments: map[string]string{"text": "hello"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := promptText(t, res); got != "Translate into French: hello" {
				t.Errorf("translate: %q", got)
			}

			mu.Lock()
			give = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}
			mu.Unlock()
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///secrets.env"})
			if err != nil {
				t.Fatal(err)
			}
			if got := resourceText(t, rr); got != "API_KEY=not-a-real-key" {
				t.Errorf("read allowed: %q", got)
			}

			mu.Lock()
			give = &mcp.ElicitResult{Action: "decline"}
			mu.Unlock()
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///secrets.env"})
			if err == nil || !strings.Contains(err.Error(), "file:///secrets.env: the user did not allow reading it") {
				t.Errorf("read declined: %v, want the answer's error", err)
			}

			mu.Lock()
			defer mu.Unlock()
			want := []string{"Translate hello into which language?", "Let the assistant read file:///secrets.env?", "Let the assistant read file:///secrets.env?"}
			if strings.Join(asked, "|") != strings.Join(want, "|") {
				t.Errorf("the client was asked %q, want %q", asked, want)
			}
		})
		t.Run(tc.name+"/client without elicitation", func(t *testing.T) {
			cs := connect(t, tc, "script-elicit.yaml", nil)
			ctx := ctxT(t)
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "translate", Arguments: map[string]string{"text": "hello"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := promptText(t, res); got != "Translate into English: hello" {
				t.Errorf("translate: %q, want the default", got)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///secrets.env"}); err == nil || !strings.Contains(err.Error(), "did not allow") {
				t.Errorf("read: %v, want the default answer's error", err)
			}
		})
	}
}

const readsSampleScript = `
server: {name: reads-demo, version: 1.0.0}
prompts:
  - name: brief
    arguments: [{name: topic, required: true}]
    sample:
      messages: [{role: user, text: "Three keywords for {{.args.topic}}"}]
      maxTokens: 20
    answers:
      - when: {sampled: {content: {type: text}}}
        messages: [{role: user, text: "Write about {{.args.topic}}: {{.sampled.content.text}} ({{.sampled.model}})"}]
      - messages: [{role: user, text: "Write about {{.args.topic}}."}]
resources:
  - uri: "mcpmock://workspace"
    name: workspace
    roots: true
    answers:
      - text: "{{range .roots}}{{.uri}} {{end}}"
`

// TestGoSDK_PromptAndResourceSampleRoots: a prompt's sample and a
// resource's roots reach go-sdk's client's sampling handler and roots in
// both eras; a client without sampling gets the prompt's default.
func TestGoSDK_PromptAndResourceSampleRoots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reads.yaml")
	if err := os.WriteFile(path, []byte(readsSampleScript), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			client := mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, &mcp.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					mu.Lock()
					defer mu.Unlock()
					if m, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
						asked = append(asked, m.Text)
					}
					return &mcp.CreateMessageResult{Role: "assistant", Model: "fake-model", Content: &mcp.TextContent{Text: "moon, sea, pull"}}, nil
				},
			})
			client.AddRoots(&mcp.Root{URI: "file:///work/a"}, &mcp.Root{URI: "file:///work/b"})
			cs := connectClient(t, tc, path, client)
			ctx := ctxT(t)
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "brief", Arguments: map[string]string{"topic": "tides"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := promptText(t, res); got != "Write about tides: moon, sea, pull (fake-model)" {
				t.Errorf("brief: %q", got)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcpmock://workspace"})
			if err != nil {
				t.Fatal(err)
			}
			if got := resourceText(t, rr); got != "file:///work/a file:///work/b " {
				t.Errorf("workspace: %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || asked[0] != "Three keywords for tides" {
				t.Errorf("the model was asked %q, want the rendered message once", asked)
			}
		})
		t.Run(tc.name+"/client without sampling", func(t *testing.T) {
			cs := connect(t, tc, path, nil)
			res, err := cs.GetPrompt(ctxT(t), &mcp.GetPromptParams{Name: "brief", Arguments: map[string]string{"topic": "tides"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := promptText(t, res); got != "Write about tides." {
				t.Errorf("brief: %q, want the default", got)
			}
		})
	}
}
