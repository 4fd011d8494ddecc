package script_test

import (
	"context"
	"iter"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDK_PagesWhileListChanges: go-sdk's iterators page through a list
// while a tool call, between two pages, fires an event that changes it.
// The client must see every item that was there all along exactly once,
// none that was removed before it reached it, and those added at the end.
func TestGoSDK_PagesWhileListChanges(t *testing.T) {
	const head = `server: {name: pages, version: "1", pageSize: 2}
tools:
  - {name: change, answers: [{text: changed}]}
  - {name: a, answers: [{text: a}]}
  - {name: b, answers: [{text: b}]}
  - {name: c, answers: [{text: c}]}
  - {name: d, answers: [{text: d}]}
  - {name: e, answers: [{text: e}]}
  - {name: f, answers: [{text: f}]}
resources:
  - {uri: "file:///r1", name: r1, text: "1"}
  - {uri: "file:///r2", name: r2, text: "2"}
  - {uri: "file:///r3", name: r3, text: "3"}
  - {uri: "file:///r4", name: r4, text: "4"}
  - {uri: "file:///r5", name: r5, text: "5"}
prompts:
  - {name: p1, messages: [{role: user, text: "1"}]}
  - {name: p2, messages: [{role: user, text: "2"}]}
  - {name: p3, messages: [{role: user, text: "3"}]}
  - {name: p4, messages: [{role: user, text: "4"}]}
  - {name: p5, messages: [{role: user, text: "5"}]}
events:
  - after: {tool: change, calls: 1}
`
	tools := func(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[string, error] {
		return names(cs.Tools(ctx, nil), func(t *mcp.Tool) string { return t.Name })
	}
	resources := func(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[string, error] {
		return names(cs.Resources(ctx, nil), func(r *mcp.Resource) string { return r.Name })
	}
	prompts := func(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[string, error] {
		return names(cs.Prompts(ctx, nil), func(p *mcp.Prompt) string { return p.Name })
	}
	// A prompt's name is its key, so its title tells a version added again apart.
	promptTitles := func(ctx context.Context, cs *mcp.ClientSession) iter.Seq2[string, error] {
		return names(cs.Prompts(ctx, nil), func(p *mcp.Prompt) string { return strings.TrimSuffix(p.Name+"/"+p.Title, "/") })
	}
	cases := []struct {
		name  string
		event string // the event's changes, indented under it
		list  func(context.Context, *mcp.ClientSession) iter.Seq2[string, error]
		after int // the items seen when change is called: a page boundary
		want  string
	}{
		{"removed before the cursor", "    removeTools: [a]\n", tools, 4, "change,a,b,c,d,e,f"},
		{"the cursor's own item removed", "    removeTools: [a]\n", tools, 2, "change,a,b,c,d,e,f"},
		{"two removed up to the cursor", "    removeTools: [b, c]\n", tools, 4, "change,a,b,c,d,e,f"},
		{"removed after the cursor", "    removeTools: [d]\n", tools, 2, "change,a,b,c,e,f"},
		{"added", "    addTools: [{name: g, answers: [{text: g}]}]\n", tools, 2, "change,a,b,c,d,e,f,g"},
		{"removed and added", "    removeTools: [change]\n    addTools: [{name: g, answers: [{text: g}]}]\n", tools, 4, "change,a,b,c,d,e,f,g"},
		{"replaced before the cursor", "    replaceTools: [{name: a, answers: [{text: a2}]}]\n", tools, 2, "change,a,b,c,d,e,f"},
		{"resource removed before the cursor", "    removeResources: [\"file:///r1\"]\n", resources, 2, "r1,r2,r3,r4,r5"},
		{"prompt removed before the cursor", "    removePrompts: [p1]\n", prompts, 2, "p1,p2,p3,p4,p5"},
		{"prompt added, one removed", "    removePrompts: [p2]\n    addPrompts: [{name: p6, messages: [{role: user, text: \"6\"}]}]\n", prompts, 2, "p1,p2,p3,p4,p5,p6"},
		// A resource or prompt added again under a listed URI or name is
		// replaced, as a tool is: in its place, with its rank, so a cursor
		// before it, at it or after it still continues right.
		{"resource added again before the cursor", "    addResources: [{uri: \"file:///r1\", name: r1b, text: 1b}]\n", resources, 2, "r1,r2,r3,r4,r5"},
		{"the cursor's own resource added again", "    addResources: [{uri: \"file:///r2\", name: r2b, text: 2b}]\n", resources, 2, "r1,r2,r3,r4,r5"},
		{"resource added again after the cursor", "    addResources: [{uri: \"file:///r3\", name: r3b, text: 3b}]\n", resources, 2, "r1,r2,r3b,r4,r5"},
		{"resource added again, one removed before it", "    removeResources: [\"file:///r1\"]\n    addResources: [{uri: \"file:///r4\", name: r4b, text: 4b}]\n", resources, 2, "r1,r2,r3,r4b,r5"},
		{"prompt added again before the cursor", "    addPrompts: [{name: p2, title: v2, messages: [{role: user, text: \"2b\"}]}]\n", promptTitles, 2, "p1,p2,p3,p4,p5"},
		{"prompt added again after the cursor", "    addPrompts: [{name: p5, title: v2, messages: [{role: user, text: \"5b\"}]}]\n", promptTitles, 2, "p1,p2,p3,p4,p5/v2"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "pages.yaml")
		if err := writeFile(path, head+c.event); err != nil {
			t.Fatal(err)
		}
		for _, tc := range transports {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				cs := connect(t, tc, path, nil)
				ctx := ctxT(t)
				var seen []string
				for name, err := range c.list(ctx, cs) {
					if err != nil {
						t.Fatalf("after %v: %v", seen, err)
					}
					seen = append(seen, name)
					if len(seen) == c.after {
						if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "change"}); err != nil {
							t.Fatal(err)
						}
					}
				}
				if got := strings.Join(seen, ","); got != c.want {
					t.Errorf("paged %s, want %s", got, c.want)
				}
			})
		}
	}
}

func names[T any](seq iter.Seq2[*T, error], name func(*T) string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for it, err := range seq {
			n := ""
			if it != nil {
				n = name(it)
			}
			if !yield(n, err) {
				return
			}
		}
	}
}

// TestGoSDK_EventAddsListedResourceAndPrompt: an event that adds a
// resource under a URI already listed, or a prompt under a listed name,
// replaces it as replaceTools replaces a tool: the lists hold it once, in
// its place, and reading it gives the new version.
func TestGoSDK_EventAddsListedResourceAndPrompt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "again.yaml")
	if err := writeFile(path, `server: {name: again, version: "1"}
tools:
  - {name: change, answers: [{text: changed}]}
resources:
  - {uri: "file:///a", name: a, text: a1}
  - {uri: "file:///b", name: b, text: b1}
prompts:
  - {name: x, messages: [{role: user, text: x1}]}
  - {name: y, messages: [{role: user, text: y1}]}
events:
  - after: {tool: change, calls: 1}
    addResources: [{uri: "file:///a", name: a, title: second, text: a2}]
    addPrompts: [{name: x, title: second, messages: [{role: user, text: x2}]}]
`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc, path, nil)
			ctx := ctxT(t)
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "change"}); err != nil {
				t.Fatal(err)
			}
			rl, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, r := range rl.Resources {
				listed = append(listed, r.URI+" "+r.Title)
			}
			if got, want := strings.Join(listed, ", "), "file:///a second, file:///b "; got != want {
				t.Errorf("resources/list gave %q, want %q", got, want)
			}
			pl, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			listed = nil
			for _, p := range pl.Prompts {
				listed = append(listed, p.Name+" "+p.Title)
			}
			if got, want := strings.Join(listed, ", "), "x second, y "; got != want {
				t.Errorf("prompts/list gave %q, want %q", got, want)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///a"})
			if err != nil {
				t.Fatal(err)
			}
			if got := resourceText(t, rr); got != "a2" {
				t.Errorf("resources/read file:///a gave %q, want the new a2", got)
			}
			gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if got := promptText(t, gp); got != "x2" {
				t.Errorf("prompts/get x gave %q, want the new x2", got)
			}
		})
	}
}
