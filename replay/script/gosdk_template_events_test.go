package script_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDK_EventChangesResourceTemplates: an event adds and removes
// resource templates as it does resources. The client hears
// resources/list_changed (the spec's one notification for both), lists
// the new templates, and completes a variable of the added one.
func TestGoSDK_EventChangesResourceTemplates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "templates.yaml")
	if err := writeFile(path, `server: {name: templates, version: "1"}
tools:
  - {name: deploy, answers: [{text: deployed}]}
resourceTemplates:
  - {uriTemplate: "logs:///{day}", name: logs}
  - {uriTemplate: "old:///{id}", name: old}
events:
  - after: {tool: deploy, calls: 1}
    removeResourceTemplates: ["old:///{id}"]
    addResourceTemplates:
      - uriTemplate: "builds:///{branch}"
        name: builds
        complete: {branch: {values: [main, maintenance, feature-x]}}
`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			cs, changed := connectHearing(t, tc, path)
			if got := templateNames(t, cs); got != "logs:///{day} old:///{id}" {
				t.Fatalf("templates before the event: %s", got)
			}
			callHearing(t, cs, "deploy", changed)
			if got := templateNames(t, cs); got != "logs:///{day} builds:///{branch}" {
				t.Errorf("templates after the event: %s", got)
			}
			if got := completeVar(t, cs, "builds:///{branch}", "branch", "ma"); got != "main maintenance" {
				t.Errorf("completion of the added template's branch: %q", got)
			}
		})
	}
}

func templateNames(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListResourceTemplates(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return joinKeys(res.ResourceTemplates, func(rt *mcp.ResourceTemplate) string { return rt.URITemplate })
}

// callHearing calls tool name and waits for the resources/list_changed
// that the call's event makes the server send (changed hears it).
func callHearing(t *testing.T, cs *mcp.ClientSession, name string, changed <-chan struct{}) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatalf("no resources/list_changed after %s", name)
	}
}

// completeVar is the values the server completes the template uri's
// variable name at value with, joined by spaces.
func completeVar(t *testing.T, cs *mcp.ClientSession, uri, name, value string) string {
	t.Helper()
	res, err := cs.Complete(ctxT(t), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: uri},
		Argument: mcp.CompleteParamsArgument{Name: name, Value: value},
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(res.Completion.Values, " ")
}

// connectHearing is connect with a client whose changed hears each
// resources/list_changed.
func connectHearing(t *testing.T, tc transportCase, path string) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 10)
	cs := connect(t, tc, path, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
	})
	return cs, changed
}
