package inspector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/mcptape/mcptape/store"
)

// wait bounds how long a view test waits for the screen it expects. The
// screen is polled, so a passing test takes what drawing takes; the bound
// is for a loaded CI machine under -race, where typing a filter (a redraw
// per key) took over 5 s.
const wait = 20 * time.Second

// blobSession has a tools/call result with a long base64 image.
var blobSession = []frame{
	{store.C2S, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-tiny-image"}}`},
	{store.S2C, time.Millisecond, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0N", 20) + `"}]}}`},
}

func TestView_80x24(t *testing.T) {
	m, src := openModel(t, writeCassette(t, sampleSession))
	h := startApp(t, m, src, Options{}, 80, 24)
	s := h.waitFor(wait, []string{"session", "method / tool", "initialize", "test.db", "13/13", "? help", `"protocolVersion": "2025-11-25"`})
	lines := strings.Split(s, "\n")
	if len(lines) != 24 || len([]rune(lines[0])) != 80 {
		t.Fatalf("screen is %d lines of %d", len(lines), len([]rune(lines[0])))
	}
	// The error row and the isError row are on screen with their codes.
	h.keys("G")
	h.waitFor(wait, []string{"resources/read", "error", "bad", "s1 #13  ←  malformed", "not valid JSON"})
}

func TestView_Keys(t *testing.T) {
	runKeyTests(t, sampleSession, []keyTest{
		{name: "filter", steps: []keyStep{
			{keys: "f"}, {keys: "tool:echo"}, {key: tcell.KeyEnter, want: []string{"filter: tool:echo", "2/13"}},
			{keys: "f"}, {key: tcell.KeyCtrlU}, {key: tcell.KeyEnter, want: []string{"13/13"}, notWant: []string{"filter:"}},
		}},
		{name: "a filter that leaves nothing names a mistyped tool", steps: []keyStep{
			{keys: "f"}, {keys: "tool:ecoh"}, {key: tcell.KeyEnter, want: []string{`0/13`, `no message has tool "ecoh" (did you mean echo?)`}},
		}},
		{name: "bad filter says why", steps: []keyStep{
			{keys: "f"}, {keys: "kind:reply"}, {key: tcell.KeyEnter, want: []string{`unknown kind "reply"`, "13/13"}},
		}},
		{name: "pair jump", steps: []keyStep{
			{keys: "jjj", want: []string{"s1 #4", "paired response s1 #9 below"}},
			{keys: "p", want: []string{"s1 #9", "paired request s1 #4 below"}},
			{keys: "p", want: []string{"s1 #4  →"}},
		}},
		{name: "search with n and N", steps: []keyStep{
			{keys: "/"}, {keys: "method:tools/call kind:request"}, {key: tcell.KeyEnter, want: []string{"match at row 4"}},
			{keys: "n", want: []string{"match at row 5"}},
			{keys: "n", want: []string{"match at row 4"}},
			{keys: "N", want: []string{"match at row 5"}},
		}},
		{name: "help overlay", steps: []keyStep{
			{keys: "?", want: []string{"help (? or Esc closes)", "g G Home End  move", "q Ctrl-C  quit", "slow:>100ms", "status:4xx|404  stream:get-sse", "(lower case: any case)"}},
			{key: tcell.KeyEscape, notWant: []string{"help (? or Esc closes)"}},
		}},
		{name: "tools summary", steps: []keyStep{
			{keys: "t", want: []string{"tools (t or Esc closes)", "slow-op", "300ms", "5.0ms"}},
			{keys: "t", notWant: []string{"tools (t or Esc closes)"}},
		}},
		{name: "zoom the detail", steps: []keyStep{
			{key: tcell.KeyEnter, notWant: []string{"method / tool"}, want: []string{`"clientInfo": {`}},
			{key: tcell.KeyEscape, want: []string{"method / tool"}},
		}},
		{name: "mark and copy", steps: []keyStep{
			{keys: " ", want: []string{"1 marked", "●"}},
			{keys: "c", want: []string{"copied s1 #1"}},
		}, check: func(t *testing.T, h *harness) {
			var got []byte
			h.onUI(func() { got = h.sim.GetClipboardData() })
			if string(got) != sampleSession[0].json {
				t.Errorf("clipboard %q", got)
			}
		}},
		{name: "copy as a command", steps: []keyStep{
			{keys: "jjj", want: []string{"s1 #4  →"}},
			{keys: "C", want: []string{`copied s1 #4 as a command (362 B): printf '%s\n' '{"jsonrpc":"2`}},
		}, check: func(t *testing.T, h *harness) {
			var got []byte
			h.onUI(func() { got = h.sim.GetClipboardData() })
			want := `printf '%s\n' '` + sampleSession[0].json + `' '` + sampleSession[2].json + `' '` + sampleSession[3].json + `' | server`
			if string(got) != want {
				t.Errorf("clipboard %q\nwant      %q", got, want)
			}
		}},
		{name: "copy as a command refuses a server message", steps: []keyStep{
			{keys: "j", want: []string{"s1 #2  ←"}},
			{keys: "C", want: []string{"s1 #2 came from the server"}},
		}, check: func(t *testing.T, h *harness) {
			var got []byte
			h.onUI(func() { got = h.sim.GetClipboardData() })
			if len(got) != 0 {
				t.Errorf("clipboard %q after a refusal", got)
			}
		}},
		{name: "sessions pane scopes the table", steps: []keyStep{
			{key: tcell.KeyBacktab}, {keys: "j", want: []string{"13/13"}},
			{keys: "k"}, {keys: "j", want: []string{"13/13"}},
		}},
	})
}

func TestView_FoldAndExport(t *testing.T) {
	m, src := openModel(t, writeCassette(t, blobSession, sampleSession))
	out := filepath.Join(t.TempDir(), "sel.jsonl")
	h := startApp(t, m, src, Options{ExportPath: out}, 80, 24)
	h.waitFor(wait, []string{"get-tiny-image"})
	h.keys("j")
	h.key(tcell.KeyEnter) // zoom, to see the whole message
	h.waitFor(wait, []string{"‹base64, 660 B; z unfolds›"})
	h.keys("z")
	h.waitFor(wait, []string{"iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0NiVBOR"}, "‹base64")
	h.key(tcell.KeyEscape)
	// Filter to one session, export what is shown.
	h.keys("f")
	h.keys("session:s2 kind:request")
	h.key(tcell.KeyEnter)
	h.waitFor(wait, []string{"5/15"})
	h.keys("e")
	h.key(tcell.KeyEnter)
	h.waitFor(wait, []string{"exported 5 shown messages"})
	tape, err := store.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 1 || len(tape.Sessions[0].Messages) != 5 || tape.Sessions[0].Info.ID != "s2" {
		t.Fatalf("export holds %+v", tape.Sessions)
	}
	st, _ := os.Stat(out)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("export mode %v", st.Mode())
	}
	// One marked message is one message, not "1 marked messages".
	h.resize(160, 24) // room for the whole status line
	h.play(wait, []keyStep{
		{keys: " ", want: []string{"1 marked"}},
		{keys: "e"}, {key: tcell.KeyEnter, want: []string{"overwrite it? (y/N)"}},
		{keys: "y"}, {key: tcell.KeyEnter, want: []string{"exported 1 marked message to "}},
	})
}

func TestView_MouseAndResize(t *testing.T) {
	m, src := openModel(t, writeCassette(t, sampleSession))
	h := startApp(t, m, src, Options{}, 80, 24)
	s := h.waitFor(wait, []string{"notifications/ini"})
	y := -1
	for i, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "notifications/ini") {
			y = i
		}
	}
	h.sim.InjectMouse(20, y, tcell.Button1, tcell.ModNone)
	h.sim.InjectMouse(20, y, tcell.ButtonNone, tcell.ModNone)
	h.waitFor(wait, []string{"s1 #3  →  notification"})
	for _, sz := range [][2]int{{40, 12}, {20, 5}, {200, 60}, {80, 24}} {
		h.resize(sz[0], sz[1])
		if sz[0] >= 80 {
			h.waitFor(wait, []string{"s1 #3  →  notification", "13/13"})
		}
	}
	if r := h.selected(); r.Seq != 3 {
		t.Errorf("selection moved to %d after resizes", r.Seq)
	}
}
