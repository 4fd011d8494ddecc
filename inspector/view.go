package inspector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/mcptape/mcptape/store"
	"github.com/rivo/tview"
)

// Options configure Run.
type Options struct {
	// Follow polls the cassette for messages other processes record.
	Follow bool
	// PollInterval is how often follow mode looks; default 250 ms, so new
	// messages show within a second.
	PollInterval time.Duration
	// Screen replaces the terminal (tests use a simulation screen).
	Screen tcell.Screen
	// ExportPath is the default file name offered by export.
	ExportPath string
	// Wait is where Run says what it waits for when opening the
	// cassette takes a while (a recorder holding its lock), before the
	// terminal is taken over; nil: nowhere.
	Wait io.Writer
}

// Run opens the cassette at path and shows it until the user quits or ctx
// ends. Opening errors (a foreign, newer or damaged file) come back before
// the terminal is touched.
func Run(ctx context.Context, path string, opts Options) error {
	m, src, err := openSaying(path, opts.Wait, openNotice)
	if err != nil {
		return err
	}
	return New(m, src, opts).Run(ctx)
}

// openNotice is how long Run lets Open take before it says why it waits.
const openNotice = 500 * time.Millisecond

// openSaying is Open, which waits up to store.LockTimeout for a lock
// another process holds; when it has not returned after notice, it says
// so on w, once, so that the wait does not look like a hang.
func openSaying(path string, w io.Writer, notice time.Duration) (*Model, Source, error) {
	if w == nil {
		return Open(path)
	}
	type opened struct {
		m   *Model
		src Source
		err error
	}
	done := make(chan opened, 1)
	go func() {
		m, src, err := Open(path)
		done <- opened{m, src, err}
	}()
	t := time.NewTimer(notice)
	defer t.Stop()
	select {
	case o := <-done:
		return o.m, o.src, o.err
	case <-t.C:
	}
	fmt.Fprintf(w, "mcpspy: inspect: still opening %s: waiting for the lock another process holds (up to %s), or reading a big cassette\n", path, store.LockTimeout)
	o := <-done
	return o.m, o.src, o.err
}

// App is the inspector's window: panes over one model. Everything in it
// runs on tview's event goroutine; other goroutines reach it only through
// post.
type App struct {
	app    *tview.Application
	screen tcell.Screen
	model  *Model
	src    Source
	opts   Options

	pages    *tview.Pages
	main     *tview.Flex
	sessions *tview.Table
	table    *tview.Table
	detail   *tview.TextView
	status   *tview.TextView
	bottom   *tview.Pages
	input    *tview.InputField
	tools    *tview.Table

	unfold    bool
	zoomed    bool
	marked    map[int]bool
	search    *Filter
	searchHit []bool
	note      string // last message in the status line
	noteErr   bool
	shownIdx  int // stable index shown in the detail pane, -1 none
	// pairTurn is where p goes next from a message with several pairs (a
	// batch and its answers): [its stable index, the pair's turn].
	pairTurn [2]int
	// sessDetail: the detail pane shows the sessions pane's selection, as
	// it does from when that pane gets focus until the table does.
	sessDetail bool
	shownSess  int // session shown in the detail pane, -1 all, noSession none
	// followNote is the follow error on the status line, if that is
	// what it shows: the next poll that succeeds clears it.
	followNote string
	// screenW and screenH are the screen's size at the last draw.
	screenW, screenH int
	promptFn         func(text string)
}

// New builds the window over a loaded model.
func New(m *Model, src Source, opts Options) *App {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	if opts.ExportPath == "" {
		opts.ExportPath = "mcpspy-export.jsonl"
	}
	a := &App{app: tview.NewApplication(), model: m, src: src, opts: opts, marked: map[int]bool{}, shownIdx: -1, shownSess: noSession, pairTurn: [2]int{-1, 0}}
	m.following = opts.Follow && src.Live()
	a.build()
	return a
}

func (a *App) build() {
	a.sessions = tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)
	a.sessions.SetSelectionChangedFunc(func(row, _ int) { a.scopeTo(row - 2) })
	// Focus, not selection, switches the detail pane: scoping by the
	// sessions pane must not hide the message detail, and the detail pane
	// itself gets focus to scroll whichever it shows.
	a.sessions.SetFocusFunc(func() { a.sessDetail = true; a.showDetail() })

	a.table = tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)
	a.table.SetContent(&messageContent{a: a})
	a.table.SetSelectionChangedFunc(func(int, int) { a.showDetail() })
	a.table.SetSelectedFunc(func(int, int) { a.toggleZoom() })
	// With no message shown (an empty cassette, a filter that matches
	// nothing) tview parks the selection below the header, on a row that
	// does not exist, and its j, k, PgUp and PgDn then search forever for
	// a row to select: the inspector froze. There is nothing to move to.
	a.table.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if a.model.Visible() == 0 {
			return nil
		}
		return ev
	})
	a.table.SetFocusFunc(func() {
		if a.sessDetail {
			a.sessDetail = false
			a.showDetail()
		}
	})

	a.detail = tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetScrollable(true)

	a.status = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	a.input = tview.NewInputField().SetFieldBackgroundColor(tcell.ColorDefault)
	a.input.SetDoneFunc(a.promptDone)
	a.bottom = tview.NewPages().
		AddPage("status", a.status, true, true).
		AddPage("input", a.input, true, false)

	a.tools = tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)

	a.main = tview.NewFlex().SetDirection(tview.FlexRow)
	a.layout()
	a.pages = tview.NewPages().
		AddPage("main", a.main, true, true).
		AddPage("tools", framed(a.tools, " tools (t or Esc closes) "), true, false).
		AddPage("help", centered(helpView(), 64, 24), true, false)

	a.app.SetRoot(a.pages, true).SetFocus(a.table).EnableMouse(true)
	a.app.SetInputCapture(a.keys)
	a.app.SetBeforeDrawFunc(a.beforeDraw)
	a.refreshSessions()
	a.refreshStatus()
	if a.model.Visible() > 0 {
		a.table.Select(1, 0)
	}
}

// beforeDraw keeps the selections on screen when the terminal is resized:
// tview scrolls a table to its selection only when the selection moves,
// so after a shrink the selected row stayed below the table's end until
// the next key. Select again has the table scroll to it as it draws.
func (a *App) beforeDraw(screen tcell.Screen) bool {
	w, h := screen.Size()
	if w == a.screenW && h == a.screenH {
		return false
	}
	a.screenW, a.screenH = w, h
	for _, t := range []*tview.Table{a.table, a.sessions} {
		if row, col := t.GetSelection(); row > 0 {
			t.Select(row, col)
		}
	}
	return false
}

// layout arranges the main page: sessions, messages, detail, status line.
// Enter zooms the detail pane over the messages.
func (a *App) layout() {
	a.main.Clear()
	h := min(len(a.model.Sessions)+2, 6)
	if !a.zoomed {
		a.main.AddItem(a.sessions, h, 0, false)
		a.main.AddItem(a.table, 0, 1, true)
	}
	a.main.AddItem(a.detail, 0, 1, false)
	a.main.AddItem(a.bottom, 1, 0, false)
}

func framed(p tview.Primitive, title string) tview.Primitive {
	f := tview.NewFrame(p).SetBorders(0, 0, 0, 0, 1, 1)
	f.SetBorder(true).SetTitle(title)
	return f
}

func centered(p tview.Primitive, w, h int) tview.Primitive {
	return tview.NewFlex().
		AddItem(nil, 0, 1, false).
		AddItem(tview.NewFlex().SetDirection(tview.FlexRow).
			AddItem(nil, 0, 1, false).
			AddItem(p, h, 1, true).
			AddItem(nil, 0, 1, false), w, 1, true).
		AddItem(nil, 0, 1, false)
}

// Run shows the window until quit or ctx ends. In follow mode a poller
// goroutine reads new messages and hands them over through post.
func (a *App) Run(ctx context.Context) error {
	a.screen = a.opts.Screen
	if a.screen == nil {
		s, err := tcell.NewScreen()
		if err == nil {
			err = s.Init()
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNoTerminal, err)
		}
		a.screen = initializedScreen{s}
	}
	a.app.SetScreen(a.screen)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		a.app.Stop()
	}()
	if a.opts.Follow && a.src.Live() {
		// Read here, before the follower runs: from then on the model
		// belongs to the UI goroutine.
		path, src, after := a.model.Path, a.src, a.model.FollowMark()
		wg.Add(1)
		go func() { defer wg.Done(); a.follow(ctx, path, src, after) }()
	}
	return a.app.Run()
}

// ErrNoTerminal is returned by Run when there is no terminal to draw on
// (a pipe, a CI job, no controlling tty).
var ErrNoTerminal = errors.New("inspect needs a terminal")

// initializedScreen is a screen whose Init has run. tview's SetScreen
// calls Init itself and drops its error, then draws on a screen that
// failed to start (a nil-pointer panic without a tty); so Run starts the
// screen first, where the error can be returned, and this keeps tview from
// starting it twice.
type initializedScreen struct{ tcell.Screen }

func (initializedScreen) Init() error { return nil }

// post is the one way other goroutines change the window: it runs fn on
// the UI goroutine and waits until it has run, or until ctx ends. tview's
// QueueUpdateDraw waits forever once the application has stopped, so a
// follower that called it just as the user quit kept Run from returning;
// the goroutine left waiting in that case is one tview strands, and it
// ends with the process.
func (a *App) post(ctx context.Context, fn func()) {
	done := make(chan struct{})
	go a.app.QueueUpdateDraw(func() { fn(); close(done) })
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// follow polls src, the cassette at path, and posts what it finds. It
// keeps its own copy of how far it has read (after) and of the source,
// so it never touches the model. When another file takes the cassette's
// place it reads that one whole, as Open does, and posts the new model.
func (a *App) follow(ctx context.Context, path string, src Source, after Mark) {
	t := time.NewTicker(a.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			b, err := src.Poll(after)
			if errors.Is(err, ErrReplaced) {
				m, nsrc, err := Open(path)
				if err != nil { // the next tick tries again
					a.post(ctx, func() { a.setFollowNote(fmt.Sprintf("follow: %v; reading the new one: %v", ErrReplaced, err)) })
					break
				}
				src, after = nsrc, m.FollowMark()
				a.post(ctx, func() { a.reload(m, nsrc) })
				break
			}
			if err != nil {
				a.post(ctx, func() { a.setFollowNote(fmt.Sprintf("follow: %v", err)) })
				break
			}
			for _, bm := range b.Msgs {
				after.Seqs[bm.Session] = max(after.Seqs[bm.Session], bm.Sum.Seq)
			}
			for _, info := range b.Sessions {
				if !info.Start.IsZero() {
					after.Starts[info.ID] = info.Start
				}
			}
			after.Amends = b.Amends
			a.post(ctx, func() { a.applyBatch(b) })
			if !b.More || ctx.Err() != nil {
				break
			}
		}
	}
}

// applyBatch adds new messages without moving the selection or scroll,
// and shows amended ones as they stand. The detail pane reads its message
// again (Select below), so it shows an amended one's new status.
func (a *App) applyBatch(b *Batch) {
	if a.followNote != "" {
		// The poll succeeded: the cassette is readable again.
		if a.note == a.followNote {
			a.note = ""
		}
		a.followNote = ""
	}
	row, col := a.table.GetSelection()
	off, coff := a.table.GetOffset()
	sel, hadSel := a.selected()
	nSess := len(a.model.Sessions)
	if err := a.model.Apply(b, a.src); err != nil {
		a.setNote(err.Error(), true)
	}
	if len(b.Amended) > 0 {
		// The table row of the cells cached may hold another message now,
		// and lint's marks may have changed.
		a.table.SetContent(&messageContent{a: a})
	}
	if len(b.Amended) > 0 && hadSel {
		// An amended row the filter shows now, or hides, above the
		// selection moves it: keep the same message selected, on the
		// same line of the screen.
		if p := a.model.VisibleIndex(sel.Index); p >= 0 && p+1 != row {
			off = max(0, off+p+1-row)
			row = p + 1
		}
	}
	if len(a.model.Sessions) != nSess {
		a.layout()
	}
	a.refreshSessions()
	if a.model.Visible() > 0 && row < 1 {
		a.table.Select(1, 0)
	} else {
		a.table.SetOffset(off, coff)
		a.table.Select(row, col)
	}
	a.table.SetOffset(off, coff)
	if n := a.model.TakeLateFindings(); n > 0 {
		a.setNote(fmt.Sprintf("lint: %s new on messages the filter had passed over (a session ended); f Enter filters again to show them", countsNoun(n, "finding")), false)
		return
	}
	a.refreshStatus()
}

// reload shows m, read from src, in place of the model shown: the
// cassette was replaced by another file. The filter stays; the scope,
// the marks and the search hits belonged to the old file's messages.
func (a *App) reload(m *Model, src Source) {
	m.following = a.model.following
	text := filterText(a.model.Filter())
	a.model, a.src = m, src
	a.marked = map[int]bool{}
	a.searchHit = nil
	a.shownIdx, a.shownSess = -1, noSession
	a.pairTurn = [2]int{-1, 0}
	note, isErr := "the cassette was replaced by another file; read it again", false
	if f, err := ParseFilter(text); err == nil && !f.Empty() {
		if err := m.SetFilter(f, src); err != nil {
			note, isErr = note+"; filter: "+err.Error(), true
		}
	}
	a.layout()
	a.refreshSessions()
	a.sessions.Select(1, 0) // all: the old file's session may not be in this one
	a.afterRefilter()
	a.setNote(note, isErr)
}

// setFollowNote shows a follow error, until a poll succeeds or another
// note takes its place.
func (a *App) setFollowNote(s string) {
	a.setNote(s, true)
	a.followNote = s
}

func (a *App) setNote(s string, isErr bool) {
	a.note, a.noteErr = s, isErr
	a.refreshStatus()
}

func (a *App) refreshStatus() {
	m := a.model
	s := fmt.Sprintf("[::b]%s[::-] %s/%s", tview.Escape(baseName(m.Path)), count(m.Visible()), count(m.Len()))
	if f := m.Filter(); f != nil {
		s += " [yellow]filter:[-] " + tview.Escape(f.Text)
	}
	if len(a.marked) > 0 {
		s += fmt.Sprintf(" [aqua]%d marked[-]", len(a.marked))
	}
	if a.opts.Follow && a.src.Live() {
		s += " [green]● follow[-]"
	}
	if a.note != "" {
		c := "aqua"
		if a.noteErr {
			c = "red"
		}
		s += " [" + c + "]" + tview.Escape(a.note) + "[-]"
	} else {
		s += " [gray]? help[-]"
	}
	a.status.SetText(s)
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// count prints 1234567 as 1,234,567.
func count(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// countsNoun says "1 finding" or "3 findings".
func countsNoun(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return count(n) + " " + noun
}
