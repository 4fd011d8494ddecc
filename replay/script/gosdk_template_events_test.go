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
			changed := make(chan struct{}, 10)
			cs := connect(t, tc, path, &mcp.ClientOptions{
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
			})
			ctx := ctxT(t)
			if got := templateNames(t, cs); got != "logs:///{day} old:///{id}" {
				t.Fatalf("templates before the event: %s", got)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy"}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("the resource list-changed handler did not fire")
			}
			if got := templateNames(t, cs); got != "logs:///{day} builds:///{branch}" {
				t.Errorf("templates after the event: %s", got)
			}
			res, err := cs.Complete(ctx, &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "builds:///{branch}"},
				Argument: mcp.CompleteParamsArgument{Name: "branch", Value: "ma"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(res.Completion.Values, " "); got != "main maintenance" {
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
	var names []string
	for _, rt := range res.ResourceTemplates {
		names = append(names, rt.URITemplate)
	}
	return strings.Join(names, " ")
}
