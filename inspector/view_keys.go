package inspector

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// helpText lists the keys; docs/INSPECTOR.md says the same at length.
const helpText = `[::b]keys[::-]
 j k ↑ ↓ PgUp PgDn g G Home End  move in the focused pane
 Tab / Shift-Tab          sessions → messages → detail
                          on sessions: the session's details
 Enter                    zoom the detail pane (Esc back)
 p                        jump to the pair or cancel (in turn)
 f                        filter (empty clears)
 F                        follow the row's HTTP stream
 / n N                    search, next, previous match
 z                        unfold long strings and base64
 Space                    mark a message for export
 e                        JSONL export: marked, else filtered
 c / C                    copy the message JSON / as a command
 L                        lint: check, go to the next finding
 t tools summary          ? this help    q Ctrl-C  quit

[::b]filter[::-]  terms joined by spaces must all hold; !term negates
 method:tools/call  tool:echo  dir:c2s|s2c  kind:error
 id:1  id:"1"  session:s2  error  slow:>100ms  time:>10:00:05
 status:4xx|404  stream:get-sse|6  (HTTP metadata)
 lint  lint:warning|unanswered  (severity or above, or rule)
 /regexp/  text  "two words"  (lower case: any case)`

func helpView() tview.Primitive {
	t := tview.NewTextView().SetDynamicColors(true).SetText(helpText)
	t.SetBorder(true).SetTitle(" help (? or Esc closes) ")
	return t
}

// keys handles the inspector's keys before the focused pane does. While a
// prompt is open, keys go to it.
func (a *App) keys(ev *tcell.EventKey) *tcell.EventKey {
	if a.input.HasFocus() {
		return ev
	}
	front, _ := a.pages.GetFrontPage()
	if front == "help" {
		if ev.Key() == tcell.KeyEscape || ev.Rune() == '?' || ev.Rune() == 'q' {
			a.pages.HidePage("help")
			return nil
		}
		return nil
	}
	if front == "tools" {
		if ev.Key() == tcell.KeyEscape || ev.Rune() == 't' || ev.Rune() == 'q' {
			a.pages.HidePage("tools")
			a.app.SetFocus(a.table)
			return nil
		}
		return ev
	}
	switch ev.Key() {
	case tcell.KeyTab:
		a.cycleFocus(1)
		return nil
	case tcell.KeyBacktab:
		a.cycleFocus(-1)
		return nil
	case tcell.KeyEscape:
		if a.zoomed {
			a.toggleZoom()
		}
		a.setNote("", false)
		return nil
	case tcell.KeyCtrlC:
		a.app.Stop()
		return nil
	case tcell.KeyEnter:
		if a.detail.HasFocus() {
			a.toggleZoom()
			return nil
		}
		return ev
	case tcell.KeyRune:
	default:
		return ev
	}
	switch ev.Rune() {
	case 'q':
		a.app.Stop()
	case '?':
		a.pages.ShowPage("help")
	case 't':
		a.showTools()
	case 'f':
		a.prompt("filter: ", filterText(a.model.Filter()), a.applyFilter)
	case 'F':
		a.followStream()
	case '/':
		a.prompt("/", filterText(a.search), a.applySearch)
	case 'n':
		a.nextMatch(1)
	case 'N':
		a.nextMatch(-1)
	case 'p':
		a.jumpToPair()
	case 'z':
		a.unfold = !a.unfold
		a.shownIdx = -1
		a.showDetail()
	case ' ':
		if r, ok := a.selected(); ok {
			if a.marked[r.Index] {
				delete(a.marked, r.Index)
			} else {
				a.marked[r.Index] = true
			}
			a.table.SetContent(&messageContent{a: a})
			a.refreshStatus()
		}
	case 'e':
		a.prompt("export to: ", a.opts.ExportPath, a.export)
	case 'c':
		a.copyMessage()
	case 'C':
		a.copyCommand()
	case 'L':
		a.nextFinding()
	default:
		return ev
	}
	return nil
}

// followStream filters the table to the HTTP exchange or stream of the
// selected message (Model.StreamFilter), which stays selected; f edits
// or clears the filter it sets.
func (a *App) followStream() {
	r, ok := a.selected()
	if !ok {
		a.setNote("no message selected: F follows the selected message's stream", true)
		return
	}
	text, err := a.model.StreamFilter(r.Index, a.src)
	if err != nil {
		a.setNote(err.Error(), true)
		return
	}
	a.applyFilter(text)
	if i := a.model.VisibleIndex(r.Index); i >= 0 && a.model.Filter() != nil && a.model.Filter().Text == text {
		a.table.Select(i+1, 0)
	}
}

func filterText(f *Filter) string {
	if f == nil {
		return ""
	}
	return f.Text
}

func (a *App) cycleFocus(dir int) {
	panes := []tview.Primitive{a.sessions, a.table, a.detail}
	if a.zoomed {
		panes = []tview.Primitive{a.detail}
	}
	cur := 0
	for i, p := range panes {
		if p.HasFocus() {
			cur = i
		}
	}
	a.app.SetFocus(panes[(cur+dir+len(panes))%len(panes)])
}

func (a *App) toggleZoom() {
	a.zoomed = !a.zoomed
	a.layout()
	if a.zoomed {
		a.app.SetFocus(a.detail)
	} else {
		a.app.SetFocus(a.table)
	}
}

// prompt opens the input line; done gets the text on Enter.
func (a *App) prompt(label, text string, done func(string)) {
	a.input.SetLabel(label).SetText(text)
	a.promptFn = done
	a.bottom.SwitchToPage("input")
	a.app.SetFocus(a.input)
}

func (a *App) promptDone(key tcell.Key) {
	fn := a.promptFn
	a.promptFn = nil
	a.bottom.SwitchToPage("status")
	a.app.SetFocus(a.table)
	if key == tcell.KeyEnter && fn != nil {
		fn(a.input.GetText())
	}
}

func (a *App) applyFilter(text string) {
	f, err := ParseFilter(text)
	if err != nil {
		a.setNote(err.Error(), true)
		return
	}
	if err := a.model.SetFilter(f, a.src); err != nil {
		a.setNote(err.Error(), true)
		return
	}
	a.note = ""
	a.afterRefilter()
	if a.model.Visible() == 0 {
		// A typo in a name is the usual reason nothing is left.
		if why := f.Unheard(a.model); why != "" {
			a.setNote(why, false)
		}
	}
}

func (a *App) applySearch(text string) {
	f, err := ParseFilter(text)
	if err != nil {
		a.setNote(err.Error(), true)
		return
	}
	if f.Empty() {
		a.search, a.searchHit = nil, nil
		a.setNote("", false)
		return
	}
	hits, err := a.model.Matches(f, a.src)
	if err != nil {
		a.setNote(err.Error(), true)
		return
	}
	a.search, a.searchHit = f, hits
	a.nextMatch(1)
}

func (a *App) nextMatch(dir int) {
	if a.searchHit == nil {
		if a.search == nil {
			a.setNote("no search: press / first", true)
			return
		}
		hits, err := a.model.Matches(a.search, a.src)
		if err != nil {
			a.setNote(err.Error(), true)
			return
		}
		a.searchHit = hits
	}
	row, _ := a.table.GetSelection()
	i := a.model.NextMatch(a.searchHit, row-1, dir)
	if i < 0 {
		a.setNote("no match for "+a.search.Text, true)
		return
	}
	a.table.Select(i+1, 0)
	a.setNote(fmt.Sprintf("match at row %s", count(i+1)), false)
}

// nextFinding checks the sessions in view with package lint (once; what
// follow adds is checked as it comes) and selects the next message it
// found something about.
func (a *App) nextFinding() {
	row, _ := a.table.GetSelection()
	i, counts, err := a.model.NextFinding(row-1, 1, a.src)
	if err != nil {
		a.setNote(err.Error(), true)
		return
	}
	a.table.SetContent(&messageContent{a: a}) // the rows now have marks
	note := "lint: " + countsText(counts) + " in view"
	if i < 0 {
		a.setNote(note+"; no message shown has a finding", false)
		a.showDetail()
		return
	}
	a.table.Select(i+1, 0)
	a.showDetail() // also when the selection did not move
	a.setNote(note+" · L next", false)
}

// jumpToPair selects the message paired with the selected one. From a
// batch with several, each p goes to the next in turn: p on that answer
// comes back to the batch, and p there goes on to the one after.
func (a *App) jumpToPair() {
	r, ok := a.selected()
	pairs := r.Pairs()
	if !ok || len(pairs) == 0 {
		a.setNote("this message has no pair", true)
		return
	}
	turn := 0
	if len(pairs) > 1 {
		if a.pairTurn[0] == r.Index {
			turn = a.pairTurn[1] % len(pairs)
		}
		a.pairTurn = [2]int{r.Index, turn + 1}
	}
	i := a.model.VisibleIndex(pairs[turn])
	if i < 0 {
		a.setNote(a.model.whyHidden(pairs[turn], "its pair", a.src), true)
		return
	}
	a.table.Select(i+1, 0)
	if len(pairs) > 1 {
		a.setNote(fmt.Sprintf("pair %d of %d · p goes back, p there to the next", turn+1, len(pairs)), false)
	}
}

// export writes to path what e exports, after asking when path exists:
// the rename would replace whatever file is there. What CheckExportPath
// refuses (the cassette itself, a .db name, a directory) is refused
// without asking.
func (a *App) export(path string) {
	path = strings.TrimSpace(path)
	if path == "" {
		return
	}
	if err := a.model.CheckExportPath(path); err != nil {
		note := err.Error()
		if !errors.Is(err, ErrExportName) { // which says what to name it
			note += "; choose another file"
		}
		a.setNote(note, true)
		return
	}
	if _, err := os.Stat(path); err == nil {
		a.prompt(fmt.Sprintf("%s exists; overwrite it? (y/N) ", path), "", func(answer string) {
			switch strings.ToLower(strings.TrimSpace(answer)) {
			case "y", "yes":
				a.exportTo(path)
			default:
				a.setNote("export: not written; "+path+" left as it was", false)
			}
		})
		return
	}
	a.exportTo(path)
}

func (a *App) exportTo(path string) {
	idxs := make([]int, 0, len(a.marked))
	what := "marked"
	for i := range a.marked {
		idxs = append(idxs, i)
	}
	if len(idxs) == 0 {
		idxs, what = a.model.VisibleIndexes(), "shown"
	}
	sort.Ints(idxs)
	if err := a.model.ExportFile(path, a.src, idxs); err != nil {
		a.setNote(err.Error(), true)
		return
	}
	a.opts.ExportPath = path
	a.setNote(fmt.Sprintf("exported %s to %s", countsNoun(len(idxs), what+" message"), path), false)
}

// copyMessage puts the selected frame on the clipboard; tcell sends it as
// an OSC 52 sequence, which terminals honour over ssh too.
func (a *App) copyMessage() {
	r, ok := a.selected()
	if !ok {
		return
	}
	msg, err := a.src.Message(r.Ref)
	if err != nil {
		a.setNote(err.Error(), true)
		return
	}
	a.screen.SetClipboard(msg.Frame)
	a.setNote(fmt.Sprintf("copied %s #%d (%s) to the clipboard", r.Session, r.Seq, sizeText(len(msg.Frame))), false)
}

// copyCommand puts on the clipboard, as copyMessage does, a shell command
// that sends the selected client message again (Resend.Command).
func (a *App) copyCommand() {
	r, ok := a.selected()
	if !ok {
		return
	}
	cmd, err := a.model.ResendCommand(r.Index, a.src)
	if err != nil {
		a.setNote(err.Error(), true)
		return
	}
	text := cmd.String()
	a.screen.SetClipboard([]byte(text))
	// What to fill in matters more than the command's start, which a
	// narrow status line cuts off first.
	note := fmt.Sprintf("copied %s #%d as a command (%s)", r.Session, r.Seq, sizeText(len(text)))
	for _, n := range cmd.Notes {
		note += " · " + n
	}
	gist, _, cut := strings.Cut(cmd.Line, "\n")
	if rs := []rune(gist); len(rs) > 30 {
		gist, cut = string(rs[:30]), true
	}
	if cut {
		gist += "…"
	}
	a.setNote(note+": "+gist, false)
}

func (a *App) showTools() {
	t := a.tools
	t.Clear()
	for i, h := range []string{"tool", "calls", "errors", "pending", "cancelled", "p50", "p95"} {
		c := tview.NewTableCell(h).SetSelectable(false).SetAttributes(tcell.AttrBold).SetTextColor(tcell.ColorYellow)
		if i > 0 {
			c.SetAlign(tview.AlignRight)
		}
		t.SetCell(0, i, c)
	}
	for i, s := range a.model.ToolStats() {
		t.SetCell(i+1, 0, tview.NewTableCell(tview.Escape(toolName(s.Tool))).SetExpansion(1))
		t.SetCell(i+1, 1, tview.NewTableCell(count(s.Calls)).SetAlign(tview.AlignRight))
		t.SetCell(i+1, 2, errCell(s.Errors))
		t.SetCell(i+1, 3, tview.NewTableCell(count(s.Pending)).SetAlign(tview.AlignRight))
		t.SetCell(i+1, 4, tview.NewTableCell(count(s.Cancelled)).SetAlign(tview.AlignRight))
		t.SetCell(i+1, 5, tview.NewTableCell(durText(s.P50)).SetAlign(tview.AlignRight))
		t.SetCell(i+1, 6, tview.NewTableCell(durText(s.P95)).SetAlign(tview.AlignRight))
	}
	if t.GetRowCount() == 1 {
		t.SetCell(1, 0, tview.NewTableCell("no tools/call in view").SetSelectable(false))
	}
	a.pages.ShowPage("tools")
	a.app.SetFocus(t)
}
