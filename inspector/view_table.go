package inspector

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/termsafe"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
	"github.com/rivo/tview"
)

// messageContent is the message table's data: it builds cells for the
// rows on screen only, so a million messages cost what is visible.
type messageContent struct {
	tview.TableContentReadOnly
	a      *App
	cached int // table row of cells
	cells  []*tview.TableCell
}

// Columns and their fixed widths; the method column takes what is left.
// Fixed widths keep columns from jumping while scrolling.
var columns = []struct {
	title string
	width int
	right bool
}{
	{"", 1, false}, // mark
	{"seq", 7, true},
	{"time", 12, false},
	{"Δ", 7, true},
	{"", 1, false}, // direction
	{"kind", 5, false},
	{"method / tool", 0, false},
	{"id", 6, true},
	{"latency", 7, true},
	{"size", 6, true},
}

func (c *messageContent) GetRowCount() int    { return c.a.model.Visible() + 1 }
func (c *messageContent) GetColumnCount() int { return len(columns) }

func (c *messageContent) GetCell(row, col int) *tview.TableCell {
	if col < 0 || col >= len(columns) {
		return nil
	}
	if row == 0 {
		cell := tview.NewTableCell(pad(columns[col].title, c.a.colWidth(col), columns[col].right)).
			SetSelectable(false).SetAttributes(tcell.AttrBold).SetTextColor(tcell.ColorYellow)
		if columns[col].width == 0 {
			cell.SetExpansion(1).SetMaxWidth(c.a.nameWidth())
		}
		return cell
	}
	if c.cells == nil || c.cached != row {
		r, ok := c.a.model.Row(row - 1)
		if !ok {
			return nil
		}
		c.cells = c.a.rowCells(r, c.cells[:0])
		c.cached = row
	}
	return c.cells[col]
}

// rowCells turns a model row into cells (pure but for the marks).
func (a *App) rowCells(r Row, out []*tview.TableCell) []*tview.TableCell {
	color := kindColor(r)
	mark, markColor := " ", color
	if a.marked[r.Index] {
		mark = "●"
	} else if sev, ok := a.model.findingMark(r.Index); ok {
		mark, markColor = lintMark(sev)
	}
	cells := a.model.cellTexts(r)
	texts := append([]string{mark}, cells[:]...)
	texts[idColumn] = cutMiddle(texts[idColumn], columns[idColumn].width)
	if r.PageStatus == 0 && !r.Endpoint {
		texts[nameColumn] = keepMarks(texts[nameColumn], termsafe.Line(r.marks()), a.nameWidth())
	}
	for i, t := range texts {
		w := a.colWidth(i)
		cell := tview.NewTableCell(pad(t, w, columns[i].right)).SetTextColor(color)
		if i == 0 {
			cell.SetTextColor(markColor)
		}
		if w == 0 {
			cell.SetExpansion(1).SetMaxWidth(a.nameWidth())
		} else {
			cell.SetMaxWidth(w)
		}
		out = append(out, cell)
	}
	return out
}

// The columns whose width is not the fixed one, by index in columns.
const (
	seqColumn  = 1
	nameColumn = 6
	idColumn   = 7
)

// keepMarks fits a method column's text, which ends in marks, into w
// runes by cutting the method and tool before the marks: a long tool name
// cut at the column's end took "[cancelled]", "[isError]" or an error's
// code with it, which are what tell such a row apart where there is no
// colour.
func keepMarks(text, marks string, w int) string {
	rs := []rune(text)
	keep := w - utf8.RuneCountInString(marks) - 1 // 1: the ellipsis
	if marks == "" || len(rs) <= w || keep < 1 || !strings.HasSuffix(text, marks) {
		return text
	}
	return string(rs[:keep]) + "…" + marks
}

// colWidth is column i's width on screen: the fixed one but for seq,
// which is as wide as the widest label the table can show, so that
// "s3:20013" is never cut to "s3:200…".
func (a *App) colWidth(i int) int {
	if i != seqColumn {
		return columns[i].width
	}
	return max(columns[i].width, a.model.seqLabelWidth())
}

// seqLabelWidth is the width of the widest seq label of the sessions in
// scope: "s3:20013" when the table interleaves several sessions, "20013"
// otherwise (Model.cellTexts).
func (m *Model) seqLabelWidth() int {
	all := len(m.Sessions) > 1 && m.Scope() < 0
	w := 0
	for i := range m.Sessions {
		if m.scope != nil && (i >= len(m.scope) || !m.scope[i]) {
			continue
		}
		s := &m.Sessions[i]
		n := len(strconv.FormatUint(s.LastSeq, 10))
		if all {
			n += utf8.RuneCountInString(s.Info.ID) + 1
		}
		w = max(w, n)
	}
	return w
}

// cutMiddle shortens s to w runes by putting an ellipsis in its middle,
// keeping more of the end: ids that differ only at the end (uuids,
// counters) stay apart, where cutting the end made them all look alike.
func cutMiddle(s string, w int) string {
	rs := []rune(s)
	if w < 3 || len(rs) <= w {
		return s
	}
	head := (w - 1) / 3
	return string(rs[:head]) + "…" + string(rs[len(rs)-(w-1-head):])
}

// lintMark is the mark of a message lint found something about, once its
// session has been checked: "!" for errors and warnings, "i" for info.
func lintMark(sev lint.Severity) (string, tcell.Color) {
	switch sev {
	case lint.Error:
		return "!", tcell.ColorRed
	case lint.Warning:
		return "!", tcell.ColorYellow
	}
	return "i", tcell.ColorGray
}

// nameWidth is what the method column may take so that every column
// fits the table's width.
func (a *App) nameWidth() int {
	_, _, w, _ := a.table.GetInnerRect()
	fixed := len(columns) // separators
	for i := range columns {
		fixed += a.colWidth(i)
	}
	return max(8, w-fixed)
}

func pad(s string, w int, right bool) string {
	s = tview.Escape(s)
	n := tview.TaggedStringWidth(s)
	if w == 0 || n >= w {
		return s
	}
	if right {
		return strings.Repeat(" ", w-n) + s
	}
	return s + strings.Repeat(" ", w-n)
}

func kindShort(k jsonrpc.Kind) string {
	switch k {
	case jsonrpc.Request:
		return "req"
	case jsonrpc.Response:
		return "resp"
	case jsonrpc.Notification:
		return "notif"
	case jsonrpc.Error:
		return "error"
	case jsonrpc.Batch:
		return "batch"
	}
	return "bad"
}

func kindColor(r Row) tcell.Color {
	switch {
	case r.PageStatus != 0:
		return tcell.ColorRed
	case r.Endpoint: // what a server tells, as a notification is
		return tcell.ColorTeal
	case r.Kind == jsonrpc.Malformed:
		return tcell.ColorFuchsia
	case r.IsError || r.Kind == jsonrpc.Error:
		return tcell.ColorRed
	case r.Kind == jsonrpc.Response:
		return tcell.ColorGreen
	case r.Kind == jsonrpc.Notification:
		return tcell.ColorAqua
	}
	return tcell.ColorWhite
}

func sizeShort(n int) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 10<<10:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}

// refreshSessions rebuilds the sessions pane: a header, "all", then one
// row per session.
func (a *App) refreshSessions() {
	t := a.sessions
	sel, _ := t.GetSelection()
	t.Clear()
	for i, h := range []string{"session", "transport", "server", "start", "msgs", "errors", "state"} {
		t.SetCell(0, i, tview.NewTableCell(h).SetSelectable(false).SetAttributes(tcell.AttrBold).SetTextColor(tcell.ColorYellow))
	}
	total, errs := 0, 0
	for _, s := range a.model.Sessions {
		total += s.Messages
		errs += s.Errors
	}
	t.SetCell(1, 0, tview.NewTableCell("all"))
	t.SetCell(1, 4, tview.NewTableCell(count(total)).SetAlign(tview.AlignRight))
	t.SetCell(1, 5, errCell(errs))
	for i, s := range a.model.Sessions {
		name := s.Info.ID
		if s.Info.Name != "" {
			name += " " + s.Info.Name
		}
		cells := []*tview.TableCell{
			tview.NewTableCell(tview.Escape(name)).SetMaxWidth(16),
			tview.NewTableCell(s.Info.Transport),
			tview.NewTableCell(tview.Escape(serverName(s.Info))).SetMaxWidth(24).SetExpansion(1),
			tview.NewTableCell(startText(s.Info.Start)),
			tview.NewTableCell(count(s.Messages)).SetAlign(tview.AlignRight),
			errCell(s.Errors),
			tview.NewTableCell(s.Info.EndState()),
		}
		for j, c := range cells {
			t.SetCell(i+2, j, c)
		}
	}
	if sel < 1 {
		sel = 1
	}
	t.Select(min(sel, t.GetRowCount()-1), 0)
}

func errCell(n int) *tview.TableCell {
	c := tview.NewTableCell(count(n)).SetAlign(tview.AlignRight)
	if n > 0 {
		c.SetTextColor(tcell.ColorRed)
	}
	return c
}

func serverName(info store.SessionInfo) string {
	if len(info.Handshake.ServerInfo) > 0 {
		var si struct{ Name, Version string }
		if json.Unmarshal(info.Handshake.ServerInfo, &si) == nil && si.Name != "" {
			if si.Version != "" {
				return si.Name + "@" + si.Version
			}
			return si.Name
		}
	}
	return info.Upstream
}

func startText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("01-02 15:04:05")
}

// scopeTo limits the table to one session (-1 all) when the sessions pane
// selection moves.
func (a *App) scopeTo(sess int) {
	if sess == a.model.Scope() || sess < -1 {
		return
	}
	if err := a.model.SetScope(sess, a.src); err != nil {
		a.setNote(err.Error(), true)
	}
	a.afterRefilter()
}

func (a *App) afterRefilter() {
	a.table.SetContent(&messageContent{a: a}) // drops cached cells
	a.searchHit = nil
	a.table.SetOffset(0, 0)
	if a.model.Visible() > 0 {
		a.table.Select(1, 0)
	} else {
		a.showDetail() // a session with no messages may still have info to show
	}
	a.refreshStatus()
}

// selected returns the selected row.
func (a *App) selected() (Row, bool) {
	row, _ := a.table.GetSelection()
	return a.model.Row(row - 1)
}

// showDetail fills the detail pane with the selected message and its
// pair, or with the selected session while the sessions pane leads.
func (a *App) showDetail() {
	if a.sessDetail {
		a.showSession()
		return
	}
	a.shownSess = noSession
	r, ok := a.selected()
	if !ok {
		a.detail.SetText("")
		a.shownIdx = -1
		return
	}
	msg, err := a.src.Message(r.Ref)
	if err != nil {
		a.setNote(err.Error(), true)
	}
	pairs := a.model.paired(r, a.src)
	lintLines, err := a.model.detailLint(r.Index, a.src)
	if err != nil {
		a.setNote(err.Error(), true)
	}
	a.detail.SetText(renderLines(Detail(r, msg, pairs, a.unfold, lintLines)))
	if a.shownIdx != r.Index {
		a.detail.ScrollToBeginning()
	}
	a.shownIdx = r.Index
}

// noSession is shownSess when the detail pane shows no session.
const noSession = -2

func (a *App) showSession() {
	row, _ := a.sessions.GetSelection()
	sess := row - 2 // row 1 is "all"
	more := func(i int) []Line {
		lines, err := a.model.sessionDetailLint(i, a.src)
		if err != nil {
			a.setNote(err.Error(), true)
		}
		return lines
	}
	a.detail.SetText(renderLines(sessionDetail(a.model.Sessions, sess, more)))
	if a.shownIdx != -1 || a.shownSess != sess {
		a.detail.ScrollToBeginning()
	}
	a.shownIdx, a.shownSess = -1, sess
}

var classTags = map[Class]string{
	Plain: "", Key: "[aqua]", String: "[green]", Number: "[fuchsia]", Literal: "[yellow]",
	Punct: "[gray]", Folded: "[black:gray]", Heading: "[::b]", Label: "[gray]", Bad: "[red]", Warn: "[yellow]",
}

// renderLines turns classed lines into tview's colour tags.
func renderLines(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		for _, s := range l {
			tag := classTags[s.Class]
			b.WriteString(tag)
			b.WriteString(tview.Escape(s.Text))
			if tag != "" {
				b.WriteString("[-:-:-]")
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
