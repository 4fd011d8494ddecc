package script_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestGoSDK_Complete: go-sdk's client (ClientSession.Complete) against
// the mcpmock binary serving script-complete.yaml, over stdio and
// Streamable HTTP, in both eras: it sees the completions capability,
// gets values by prefix and by context, an explicit answer's total and
// hasMore, and -32602 for a prompt the script does not have.
func TestGoSDK_Complete(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	script := filepath.Join(peertest.ModuleRoot(), "cassettes", "script-complete.yaml")
	prompt := func(arg, value string, context map[string]string) *mcp.CompleteParams {
		p := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "translate"}, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
		if context != nil {
			p.Context = &mcp.CompleteContext{Arguments: context}
		}
		return p
	}
	// Built afresh for each client: in 2026-07-28, go-sdk's Complete
	// writes its _meta into the params it is given.
	asks := func() []struct {
		name   string
		params *mcp.CompleteParams
		want   string
	} {
		return []struct {
			name   string
			params *mcp.CompleteParams
			want   string
		}{
			{"prefix", prompt("language", "G", nil), "[German Greek Gujarati] total 3 hasMore false"},
			{"explicit", prompt("language", "?", nil), "[English French] total 7000 hasMore true"},
			{"context", prompt("dialect", "", map[string]string{"language": "English"}), "[American British Australian] total 3 hasMore false"},
			{"template", &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "file:///logs/{service}/{date}.log"}, Argument: mcp.CompleteParamsArgument{Name: "service", Value: "b"}},
				"[billing] total 1 hasMore false"},
			{"unknown prompt", &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "summarize"}, Argument: mcp.CompleteParamsArgument{Name: "text", Value: ""}},
				`error -32602: completion/complete: unknown prompt "summarize"`},
		}
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var tr mcp.Transport
			if tc.http {
				tr = &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, mock, script)}
			} else {
				tr = &mcp.CommandTransport{Command: exec.Command(mock, "serve", script)}
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "complete-test", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if want := map[bool]string{true: "2026-07-28", false: tc.version}[tc.version == ""]; cs.InitializeResult().ProtocolVersion != want {
				t.Errorf("negotiated %s, want %s", cs.InitializeResult().ProtocolVersion, want)
			}
			if cs.InitializeResult().Capabilities.Completions == nil {
				t.Errorf("no completions capability in %+v", cs.InitializeResult().Capabilities)
			}
			for _, a := range asks() {
				res, err := cs.Complete(ctx, a.params)
				var got string
				var rpcErr *jsonrpc.Error
				switch {
				case errors.As(err, &rpcErr):
					got = fmt.Sprintf("error %d: %s", rpcErr.Code, rpcErr.Message)
				case err != nil:
					t.Fatalf("%s: %v", a.name, err)
				default:
					got = fmt.Sprintf("%v total %d hasMore %v", res.Completion.Values, res.Completion.Total, res.Completion.HasMore)
				}
				if d := cmp.Diff(a.want, got); d != "" {
					t.Errorf("%s (-want +got):\n%s", a.name, d)
				}
			}
		})
	}
}
