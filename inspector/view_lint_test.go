package inspector

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

func TestView_Lint(t *testing.T) {
	runKeyTests(t, brokenSession, []keyTest{
		{name: "L goes from finding to finding, wrapping", steps: []keyStep{
			{keys: "L", want: []string{"lint: 2 errors · 2 warnings · 0 info in view · L next", "s1 #4  →  request",
				"lint: warning: tools/call 1 (client) was never answered [unanswered]"}},
			{keys: "L", want: []string{"s1 #6  ←  notification", "increasing] · see s1 #4"}}, // the pane wraps
			{keys: "L", want: []string{"s1 #7  ←  response", "lint: error: answers id 9, which the client never sent"}},
			{keys: "L", want: []string{"s1 #8  ←  notification", "[undeclared-capability]"}},
			{keys: "L", want: []string{"s1 #4  →  request"}},
		}},
		{name: "rows with findings are marked", steps: []keyStep{
			{keys: "L", want: []string{"L next"}},
		}, check: func(t *testing.T, h *harness) {
			marked := map[string]bool{}
			for _, l := range strings.Split(h.screen(), "\n") {
				for _, name := range []string{"initialize", "tools/call x", "notifications/initialized"} {
					if strings.HasSuffix(strings.TrimSpace(l), "  "+name) || strings.Contains(l, " "+name+" ") {
						marked[name] = strings.HasPrefix(l, "!")
					}
				}
			}
			if !marked["tools/call x"] || marked["initialize"] || marked["notifications/initialized"] {
				t.Errorf("marks %v: want only the tools/call marked\n%s", marked, h.screen())
			}
		}},
		{name: "the lint filter", steps: []keyStep{
			{keys: "f"}, {keys: "lint:error"}, {key: tcell.KeyEnter, want: []string{"filter: lint:error", "2/8"}},
			{keys: "f"}, {key: tcell.KeyCtrlU}, {keys: "lint:nope"}, {key: tcell.KeyEnter, want: []string{`filter: "lint:nope": unknown lint rule`}},
		}},
		{name: "the session detail counts", steps: []keyStep{
			{key: tcell.KeyBacktab, want: []string{"session s1", "lint: 2 errors · 2 warnings · 0 info"}},
		}},
		{name: "help names L and the lint term", steps: []keyStep{
			{keys: "?", want: []string{"lint: check, go to the next finding", "lint:warning|unanswered"}},
		}},
	})
}

// A session too big to check on the way is not checked at open: its
// detail says so, its rows carry no mark, until L checks it.
func TestView_LintWaitsForL(t *testing.T) {
	frames := append([]frame(nil), brokenSession...)
	for len(frames) <= autoLintMax {
		frames = append(frames, frames[2]) // more notifications/initialized: no new finding
	}
	m, src := openModel(t, writeCassette(t, frames))
	h := startApp(t, m, src, Options{}, 80, 24)
	h.waitFor(wait, []string{"initialize", "lint: not checked yet (10,001 messages); L checks the sessions in view"})
	if m := h.onUIMark(3); m {
		t.Error("s1 #4 marked before anything asked for lint")
	}
	h.keys("L")
	h.waitFor(wait, []string{"s1 #4  →  request", "[unanswered]"}, "not checked yet")
}

// onUIMark reads on the UI goroutine whether message idx has a mark.
func (h *harness) onUIMark(idx int) bool {
	var ok bool
	h.onUI(func() { _, ok = h.app.model.findingMark(idx) })
	return ok
}
