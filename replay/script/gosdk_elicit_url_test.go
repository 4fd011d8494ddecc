package script_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const urlElicitScript = `
server: {name: login-demo, version: 1.0.0}
tools:
  - name: connect
    inputSchema: {type: object, properties: {service: {type: string}}}
    elicit:
      mode: url
      message: "Sign in to {{.args.service}}"
      url: "https://auth.example.com/start?service={{.args.service}}"
      complete: true
    answers:
      - when: {elicited: {action: accept}}
        text: "connected to {{.args.service}}"
      - {isError: true, text: not connected}
resources:
  - uri: "mcpmock://inbox"
    name: inbox
    elicit: {mode: url, message: "Sign in to read {{.uri}}", url: "https://auth.example.com/start?inbox", complete: true}
    answers:
      - when: {elicited: {action: accept}}
        text: no new mail
      - error: {code: -32603, message: not signed in}
`

// TestGoSDK_ElicitURL: a url-mode elicit reaches go-sdk's client as a URL
// elicitation (mid-call, or as an input_required round in 2026-07-28),
// from a tool and from a resource alike. In the handshake era it carries
// the same elicitationId each time for the same call, and, accepted, is
// followed by notifications/elicitation/complete for that id; 2026-07-28
// has neither (its schema's URL elicitation has no id, and its server
// sends no such notification). A client that takes only forms is not
// asked.
func TestGoSDK_ElicitURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "login.yaml")
	if err := os.WriteFile(path, []byte(urlElicitScript), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []*mcp.ElicitParams
			completed := make(chan string, 10)
			client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
				ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
					completed <- req.Params.ElicitationID
				},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req.Params)
					return &mcp.ElicitResult{Action: "accept"}, nil
				},
			})
			cs := connectClient(t, tc, path, client)
			ctx := ctxT(t)
			for range 2 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "connect", Arguments: map[string]any{"service": "mail"}})
				if err != nil {
					t.Fatal(err)
				}
				if got := text(t, res); got != "connected to mail" {
					t.Errorf("connect: %q", got)
				}
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcpmock://inbox"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rr.Contents) != 1 || rr.Contents[0].Text != "no new mail" {
				t.Errorf("inbox: %+v", rr.Contents)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 3 {
				t.Fatalf("asked %d times, want once a call", len(asked))
			}
			p := asked[0]
			if p.Mode != "url" || p.URL != "https://auth.example.com/start?service=mail" || p.Message != "Sign in to mail" {
				t.Errorf("asked %+v", p)
			}
			if tc.version == "" { // 2026-07-28
				for _, a := range asked {
					if a.ElicitationID != "" {
						t.Errorf("a 2026-07-28 client was asked with elicitationId %q", a.ElicitationID)
					}
				}
				// The complete notification comes before the answer, on
				// the same stream, where it would be by now.
				select {
				case id := <-completed:
					t.Errorf("a 2026-07-28 client got notifications/elicitation/complete for %q", id)
				default:
				}
				return
			}
			if p.ElicitationID == "" {
				t.Errorf("asked %+v, without an elicitationId", p)
			}
			if asked[1].ElicitationID != p.ElicitationID {
				t.Errorf("elicitationId %q then %q, want the same for the same call", p.ElicitationID, asked[1].ElicitationID)
			}
			inbox := asked[2]
			if inbox.Mode != "url" || inbox.ElicitationID == "" || inbox.ElicitationID == p.ElicitationID {
				t.Errorf("the resource asked %+v", inbox)
			}
			var got []string
			for range 3 {
				select {
				case id := <-completed:
					got = append(got, id)
				case <-ctx.Done():
					t.Fatal("no notifications/elicitation/complete")
				}
			}
			slices.Sort(got)
			want := []string{p.ElicitationID, p.ElicitationID, inbox.ElicitationID}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("completed %q, want %q", got, want)
			}
		})
		t.Run(tc.name+"/client with forms only", func(t *testing.T) {
			cs := connect(t, tc, path, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					t.Error("a client that takes only forms was sent to a URL")
					return &mcp.ElicitResult{Action: "cancel"}, nil
				},
			})
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "connect", Arguments: map[string]any{"service": "mail"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "not connected" {
				t.Errorf("connect: %q, want the default answer", got)
			}
		})
	}
}
