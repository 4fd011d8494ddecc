package mcpgo_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// describe puts a content block as one line, whatever its kind.
func describe(c mcp.Content) string {
	switch c := c.(type) {
	case mcp.TextContent:
		return "text " + c.Text
	case mcp.ImageContent:
		return "image " + c.MIMEType + " " + c.Data
	case mcp.AudioContent:
		return "audio " + c.MIMEType + " " + c.Data
	case mcp.ResourceLink:
		return "resource_link " + c.URI + " " + c.Name
	case mcp.EmbeddedResource:
		if r, ok := c.Resource.(mcp.TextResourceContents); ok {
			return "resource " + r.URI + " " + r.Text
		}
		return fmt.Sprintf("resource %T", c.Resource)
	}
	return fmt.Sprintf("%T", c)
}

// The mcp-go client against mcpmock serving the shipped script-basic.yaml,
// on stdio and over HTTP: the server's identity, every tool across the
// script's pages of two, with the fields mcp-go reads, and each tool's
// scripted answer in each content kind.
func TestScript_Basic(t *testing.T) {
	t.Parallel()
	script := filepath.Join(peertest.ModuleRoot(), "cassettes", "script-basic.yaml")
	for _, over := range []string{"stdio", "http"} {
		t.Run(over, func(t *testing.T) {
			t.Parallel()
			m := startMock(t, over, script)
			c, ir, _ := connect(t, m.tr)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got := []string{fmt.Sprintf("server %s %q %s, protocol %s: %s", ir.ServerInfo.Name, ir.ServerInfo.Title, ir.ServerInfo.Version, ir.ProtocolVersion, ir.Instructions)}
			tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			for _, tl := range tools.Tools {
				var icons []string
				for _, ic := range tl.Icons {
					icons = append(icons, ic.Src)
				}
				got = append(got, fmt.Sprintf("tool %s %q required=%v output=%v icons=%v meta=%v", tl.Name, tl.Title, tl.InputSchema.Required, tl.OutputSchema.Required, icons, tl.Meta))
			}
			call := func(name string, args map[string]any) {
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = name, args
				res, err := c.CallTool(ctx, req)
				if err != nil {
					t.Fatalf("call %s: %v", name, err)
				}
				var blocks []string
				for _, b := range res.Content {
					blocks = append(blocks, describe(b))
				}
				line := fmt.Sprintf("call %s: %s", name, strings.Join(blocks, "; "))
				if res.StructuredContent != nil {
					line += fmt.Sprintf(" structured=%v", res.StructuredContent)
				}
				got = append(got, line)
			}
			call("greet", map[string]any{"name": "Ada"})
			call("greet", map[string]any{"name": "Bob"})
			call("weather", map[string]any{"city": "Paris"})
			call("picture", map[string]any{})
			call("add", map[string]any{"a": 1, "b": 2})
			call("shout", map[string]any{"text": "hey"})
			want := []string{
				`server demo-tools "Demo tools" 1.2.0, protocol 2026-07-28: A scripted server for testing MCP hosts.`,
				`tool greet "Greeter" required=[name] output=[] icons=[https://example.com/greet.png] meta=&{<nil> map[example.com/owner:docs]}`,
				`tool weather "" required=[city] output=[city celsius] icons=[] meta=<nil>`,
				`tool picture "" required=[] output=[] icons=[] meta=<nil>`,
				`tool add "Adder" required=[a b] output=[] icons=[] meta=<nil>`,
				`tool shout "" required=[] output=[] icons=[] meta=<nil>`,
				`call greet: text Hello, Ada! (call 1)`,
				`call greet: text Hello, Bob! (call 2)`,
				`call weather: text {"celsius":21.5,"city":"Paris"} structured=map[celsius:21.5 city:Paris]`,
				`call picture: text here you are; image image/png iVBORw0KGgo=; audio audio/wav UklGRg==; resource_link file:///notes.txt notes.txt; resource file:///echo.txt you sent {}`,
				`call add: text 1 + 2`,
				`call shout: text HEY`,
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("client saw (-want +got):\n%s", d)
			}
			checkClean(t, m.finish(t, c), 10) // server/discover, three pages of tools/list, six calls
		})
	}
}
