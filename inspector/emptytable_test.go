package inspector

import (
	"testing"

	"github.com/gdamore/tcell/v2"
)

// TestView_NoRowsKeys: moving in a table that shows no message (an empty
// cassette, a filter that matches nothing) once froze the inspector.
// Each key must leave it answering: a filter applied after it takes
// effect.
func TestView_NoRowsKeys(t *testing.T) {
	moves := []keyStep{{keys: "j"}, {keys: "k"}, {key: tcell.KeyDown}, {key: tcell.KeyUp}, {key: tcell.KeyPgDn}, {key: tcell.KeyPgUp}, {keys: "G"}, {keys: "g"}}
	tests := []struct {
		name     string
		sessions [][]frame
		filter   string // applied first, to show no message
		empty    string // the status line then
	}{
		{name: "empty cassette", empty: "0/0"},
		{name: "session without messages", sessions: [][]frame{{}}, empty: "0/0"},
		{name: "filter matches nothing", sessions: [][]frame{sampleSession}, filter: "zzz-nothing", empty: "0/13"},
	}
	for _, tt := range tests {
		for _, mv := range moves {
			name := mv.keys
			if name == "" {
				name = tcell.KeyNames[mv.key]
			}
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				m, src := openModel(t, writeCassette(t, tt.sessions...))
				h := startApp(t, m, src, Options{}, 80, 24)
				if tt.filter != "" {
					h.waitFor(wait, []string{"13/13"})
					h.play(wait, []keyStep{{keys: "f"}, {keys: tt.filter}, {key: tcell.KeyEnter}})
				}
				h.waitFor(wait, []string{tt.empty})
				h.play(wait, []keyStep{mv, {keys: "f"}, {keys: "x"}, {key: tcell.KeyEnter, want: []string{"filter: " + tt.filter + "x"}}})
			})
		}
	}
}
