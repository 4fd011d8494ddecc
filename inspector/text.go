package inspector

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/termsafe"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/store"
)

// The message table as plain text, for where there is no terminal to
// draw on (a CI log, a pipe, a bug report): what tshark is to Wireshark.
// The columns are the table's, with the method and tool last so that the
// fixed-width ones stay aligned whatever a method's length.

// TextOptions says how WriteText prints.
type TextOptions struct {
	// Bodies prints each message's frame under its line, indented.
	Bodies bool
	// HTTP prints each message's HTTP metadata under its line (method,
	// path, status, stream, SSE event), without the headers.
	HTTP bool
	// Lint prints each message's protocol findings (package lint) under
	// its line, and a session's own findings before its first line.
	Lint bool
	// Resend prints, in place of the lines, a shell command that sends
	// each client request and notification again (Resend.Command), under
	// a comment naming the message; the other messages are left out.
	Resend bool
	// Follow keeps polling a live source (a .db recorders write) after
	// the messages already there, and prints new ones as they arrive,
	// until the context ends.
	Follow bool
	// PollInterval is how often Follow looks; default 250 ms.
	PollInterval time.Duration
	// AmendGrace is how long Follow holds back, at most, a client's HTTP
	// message whose answer's status is not recorded yet, and the lines
	// after it; default 2 s. See textFollow.
	AmendGrace time.Duration
}

// cellTexts are a row's cells as the table shows them, in the table's
// column order without the mark: seq, time, Δ, direction, kind, method
// and tool, id, latency, size. The table and WriteText both use them.
func (m *Model) cellTexts(r Row) [9]string {
	seq := fmt.Sprint(r.Seq)
	if len(m.Sessions) > 1 && m.Scope() < 0 {
		seq = r.Session + ":" + seq
	}
	name, id := r.name(), r.ID
	if r.Batch != nil {
		id = batchIDs(r.Batch)
	}
	lat := ""
	if r.Pair >= 0 {
		lat = durText(r.Latency)
	}
	delta := ""
	if r.Delta > 0 {
		delta = "+" + durText(r.Delta)
	}
	kind := kindShort(r.Kind)
	switch {
	case r.PageStatus != 0:
		kind, name = "http", pageName(r.PageStatus)
	case r.Endpoint:
		kind, name = "sse", endpointName(r.EndpointURI)
	}
	// Method, tool and id are the peers' words: a newline or an escape
	// sequence in one is shown, never acted on.
	return [9]string{seq, r.Time.Local().Format("15:04:05.000"), delta, dirArrow(r.Dir), kind, termsafe.Line(name), termsafe.Line(id), lat, sizeShort(r.Size)}
}

// textLine is one row as a line of text: fixed-width columns, then the
// method and tool; qualified names the session in the seq column whatever
// the table would do (textWriter.qualified).
func (m *Model) textLine(r Row, qualified bool) string {
	c := m.cellTexts(r)
	if qualified {
		c[0] = r.Session + ":" + fmt.Sprint(r.Seq)
	}
	var b strings.Builder
	for _, i := range []int{0, 1, 2, 3, 4, 6, 7, 8} {
		w, right := columns[i+1].width, columns[i+1].right
		if i == 6 && w < len(c[i]) { // ids run long (uuids); keep them whole
			w = len(c[i])
		}
		b.WriteString(padText(c[i], w, right))
		b.WriteByte(' ')
	}
	b.WriteString(c[5])
	return strings.TrimRight(b.String(), " ")
}

// padText pads plain text (no tview tags) to w runes.
func padText(s string, w int, right bool) string {
	n := len([]rune(s))
	if n >= w {
		return s
	}
	if right {
		return strings.Repeat(" ", w-n) + s
	}
	return s + strings.Repeat(" ", w-n)
}

// WriteText writes the visible messages as text, one line each, and with
// opts.Follow goes on with what recorders add until ctx ends. It returns
// how many messages it wrote.
func (m *Model) WriteText(ctx context.Context, w io.Writer, src Source, opts TextOptions) (int, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	if opts.AmendGrace <= 0 {
		opts.AmendGrace = 2 * time.Second
	}
	// A line per write would be a system call per message on a million
	// of them; what is printed is flushed before waiting for more.
	out := bufio.NewWriter(w)
	// A session still being recorded prints its findings about the
	// whole session when it ends, as late ones (lintWriter.late).
	m.following = opts.Follow && src.Live()
	tw := &textWriter{m: m, src: src, w: out, opts: opts,
		lw: &lintWriter{m: m, src: src, w: out, started: map[uint32]bool{}, handled: map[lint.Finding]int{}},
		rs: &resender{m: m, src: src}}
	if opts.HTTP && !opts.Resend && m.filter == nil {
		tw.bareTaken = []int{}
	}
	if !m.following {
		tw.takeBare()
		for start := 0; start < m.Visible(); start += bodyBatch {
			rows := make([]Row, 0, bodyBatch)
			for i := start; i < min(start+bodyBatch, m.Visible()); i++ {
				r, _ := m.Row(i)
				rows = append(rows, r)
			}
			if err := tw.print(rows); err != nil {
				return tw.written, err
			}
		}
		tw.printBare(time.Time{})
		return tw.written, out.Flush()
	}
	err := tw.follow(ctx)
	return tw.written, err
}

// textWriter prints rows for WriteText.
type textWriter struct {
	m       *Model
	src     Source
	w       *bufio.Writer // keeps the first write error for its Flush
	opts    TextOptions
	lw      *lintWriter
	rs      *resender
	written int
	// bare are the HTTP exchanges that carried no message, in time order,
	// still to print among the lines (--http, whole sessions shown).
	bare []sessionBare
	// bareTaken counts, per session, its exchanges without a message
	// (SessionInfo.Bare, which grows while it records) taken into bare;
	// nil when they are not printed (not --http, or a filter).
	bareTaken []int
}

// sessionBare is an HTTP exchange that carried no message, and its
// session's id.
type sessionBare struct {
	session string
	store.BareExchange
}

// takeBare adds to bare, in time order, the HTTP exchanges that carried
// no message (a DELETE, a GET or DELETE refused with 405, a GET stream
// that ended with nothing: what the inspector shows in its session pane)
// that the sessions in scope recorded since it last looked.
func (tw *textWriter) takeBare() {
	if tw.bareTaken == nil {
		return
	}
	m, added := tw.m, false
	for i, s := range m.Sessions {
		if len(tw.bareTaken) <= i {
			tw.bareTaken = append(tw.bareTaken, 0)
		}
		if !m.sessionInScope(i) {
			continue
		}
		for _, b := range s.Info.Bare[min(tw.bareTaken[i], len(s.Info.Bare)):] {
			tw.bare = append(tw.bare, sessionBare{s.Info.ID, b})
			added = true
		}
		tw.bareTaken[i] = len(s.Info.Bare)
	}
	if added {
		slices.SortStableFunc(tw.bare, func(a, b sessionBare) int { return a.Time.Compare(b.Time) })
	}
}

// printBare prints, on lines of their own, the bare exchanges made
// before t (all that are left for the zero t).
func (tw *textWriter) printBare(t time.Time) {
	for len(tw.bare) > 0 && (t.IsZero() || tw.bare[0].Time.Before(t)) {
		b := tw.bare[0]
		fmt.Fprintf(tw.w, "http: %s: no message: %s\n", b.session, bareText(b.BareExchange))
		tw.bare = tw.bare[1:]
	}
}

// qualified says whether a line names its message with its session
// ("s2:8"), as the table does when it shows more than one session. A
// printed line stays, so show --follow names them so from its first line
// on, unless --session named the one session shown by its id: another
// session (of the same name, too) may start at any moment, and a line "3"
// printed before it would be "s1:3" after, two names for one message.
func (tw *textWriter) qualified() bool {
	m := tw.m
	return m.Scope() < 0 && (len(m.Sessions) > 1 || m.following) || m.following && m.scopeMayGrow()
}

// scopeMayGrow says whether a session follow mode adds may join the
// scope: one of ScopeNamesGrow's names is no session's id.
func (m *Model) scopeMayGrow() bool {
	for _, n := range m.scopeNames {
		if _, isID := m.sessIdx[n]; !isID {
			return true
		}
	}
	return false
}

// print writes rows (at most bodyBatch), with what opts asks under each.
func (tw *textWriter) print(rows []Row) error {
	m, w, opts := tw.m, tw.w, tw.opts
	if opts.Resend {
		rows = slices.DeleteFunc(rows, func(r Row) bool { return !r.resendable() })
	}
	var msgs map[Ref]*store.Message
	if opts.Bodies || opts.HTTP || opts.Resend {
		var err error
		if msgs, err = messagesOf(tw.src, rows); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if opts.Resend {
			ok, err := writeResend(w, tw.rs, r, msgs[r.Ref], tw.written > 0)
			if err != nil {
				return err
			}
			if ok {
				tw.written++
			}
			continue
		}
		var fs []lint.Finding
		if opts.Lint {
			var err error
			if fs, err = tw.lw.before(r); err != nil {
				return err
			}
		}
		tw.printBare(r.Time)
		if _, err := fmt.Fprintln(w, m.textLine(r, tw.qualified())); err != nil {
			return err
		}
		tw.lw.under(fs)
		msg := msgs[r.Ref]
		if opts.HTTP && msg != nil && msg.HTTP != nil {
			for _, l := range httpSummary(msg.HTTP) {
				fmt.Fprintf(w, "    %s\n", l)
			}
			if msg.Note != "" { // who answered, how a refusal's body began
				fmt.Fprintf(w, "    note: %s\n", termsafe.Line(store.OneLine(msg.Note)))
			}
		}
		if opts.Bodies && msg != nil {
			writeBody(w, msg.Frame)
		}
		tw.written++
	}
	return nil
}

// lintWriter prints findings for WriteText: each message's under its
// line, a session's own before its first line, and in follow mode those
// that turn up later about messages already passed (a request found
// unanswered when its session ends) on lines of their own.
type lintWriter struct {
	m       *Model
	src     Source
	w       io.Writer // WriteText's bufio.Writer, which keeps the first error
	started map[uint32]bool
	// handled counts the findings printed, or judged not to be, so that a
	// session checked again whole at its end prints only what is new.
	handled map[lint.Finding]int
	// upTo is, per session, the last seq follow mode has released: the
	// findings about messages after it are printed under their lines.
	upTo []uint64
}

// before checks r's session if need be, prints the session's own findings
// if r is its first line, and returns r's findings, for under.
func (lw *lintWriter) before(r Row) ([]lint.Finding, error) {
	fs, err := lw.m.MessageFindings(r.Index, lw.src)
	if err != nil {
		return nil, err
	}
	sess := lw.m.rows[r.Index].sess
	if !lw.started[sess] {
		lw.started[sess] = true
		for _, f := range lw.m.findingsAt(sess, 0) {
			lw.standalone(f)
		}
	}
	return fs, nil
}

// under prints a message's findings under its line, indented as bodies.
func (lw *lintWriter) under(fs []lint.Finding) {
	for _, f := range fs {
		lw.handled[f]++
		fmt.Fprintf(lw.w, "    lint: %s\n", findingText(f))
	}
}

// standalone prints a finding that is not under its message's line, with
// where it is: "lint: s1:4: warning: …", "lint: s1: warning: …".
func (lw *lintWriter) standalone(f lint.Finding) {
	lw.handled[f]++
	where := f.Session
	if f.Seq != 0 {
		where += fmt.Sprintf(":%d", f.Seq)
	}
	fmt.Fprintf(lw.w, "lint: %s: %s\n", where, findingText(f))
}

// late prints the findings that appeared since about messages already
// passed: those the filter lets through now, and a started session's own.
func (lw *lintWriter) late() error {
	m := lw.m
	for s, l := range m.lints {
		if l == nil || !lw.started[uint32(s)] {
			continue
		}
		seen := map[lint.Finding]int{}
		for _, f := range l.findings {
			if seen[f]++; seen[f] <= lw.handled[f] || s < len(lw.upTo) && f.Seq > lw.upTo[s] {
				continue
			}
			show := true
			if idx, ok := m.rowOf(uint32(s), f.Seq); f.Seq != 0 && ok {
				var err error
				if show, err = m.matchesNow(idx, lw.src); err != nil {
					return err
				}
			}
			if !show {
				lw.handled[f]++ // judged once, not at every poll
				continue
			}
			lw.standalone(f)
		}
	}
	return nil
}

// writeResend prints r's command, under a comment naming r and after a
// blank line when sep is set. A message that cannot be sent again as a
// client sent it (a batch of responses) is left out; one that can be but
// has no command (a WebSocket message, a session without its server's
// command line) gets the reason in a comment in the command's place.
func writeResend(w io.Writer, rs *resender, r Row, msg *store.Message, sep bool) (bool, error) {
	if msg == nil {
		return false, fmt.Errorf("%s #%d: the cassette no longer holds the message", r.Session, r.Seq)
	}
	res, err := rs.resend(r, msg)
	if err != nil {
		return false, err
	}
	cmd, err := res.Command()
	if errors.Is(err, ErrNotSendable) {
		return false, nil
	}
	line := cmd.String()
	if err != nil {
		line = "# " + err.Error()
	}
	if sep {
		fmt.Fprintln(w)
	}
	// Escaped: this comment is a line of a shell script, and a newline in a
	// recorded tool name would start a command of the recording's choice.
	fmt.Fprintf(w, "# %s:%d %s\n", r.Session, r.Seq, termsafe.Line(r.name()))
	fmt.Fprintln(w, line)
	return true, nil
}

// bodyBatch is how many lines' messages are fetched together.
const bodyBatch = 512

// messagesOf reads the messages of rows, each session's runs of nearby
// seqs in one read: a view of the cassette per message would open the
// file as many times (13 s for 200k messages).
func messagesOf(src Source, rows []Row) (map[Ref]*store.Message, error) {
	bySession := map[string][]uint64{}
	want := make(map[Ref]*store.Message, len(rows))
	for _, r := range rows {
		bySession[r.Session] = append(bySession[r.Session], r.Seq)
		want[r.Ref] = nil
	}
	for session, seqs := range bySession {
		slices.Sort(seqs)
		for i := 0; i < len(seqs); {
			j := i + 1
			for j < len(seqs) && seqs[j]-seqs[j-1] <= maxSeqGap {
				j++
			}
			err := src.Messages(session, seqs[i], seqs[j-1], func(m *store.Message) error {
				ref := Ref{Session: session, Seq: m.Seq}
				if _, ok := want[ref]; ok {
					want[ref] = m // Messages hands out copies: see Source
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			i = j
		}
	}
	return want, nil
}

// maxSeqGap is how far apart two wanted seqs may be and still be read
// together (reading the frames between costs less than another view).
const maxSeqGap = 64

// writeBody prints a message's frame under its line, each line of it
// indented, so a body never looks like a message line. w is WriteText's
// bufio.Writer, which keeps the first write error for its Flush.
func writeBody(w io.Writer, frame []byte) {
	frame = bytes.TrimRight(frame, "\r\n")
	for line := range bytes.SplitSeq(frame, []byte("\n")) {
		fmt.Fprintf(w, "    %s\n", termsafe.Body(string(line))) // a malformed frame may hold anything
	}
}

// WriteToolStats writes the inspector's tools summary (its t key) as a
// text table: tools/call per tool over the sessions in scope, with calls,
// errors, calls still pending, calls cancelled unanswered, and the median
// and 95th percentile latency.
func (m *Model) WriteToolStats(w io.Writer) error {
	stats := m.ToolStats()
	if len(stats) == 0 {
		_, err := fmt.Fprintln(w, "no tools/call in view")
		return err
	}
	width := len("tool")
	for _, s := range stats {
		width = max(width, len([]rune(toolName(s.Tool))))
	}
	if _, err := fmt.Fprintf(w, "%s %7s %7s %7s %9s %8s %8s\n", padText("tool", width, false), "calls", "errors", "pending", "cancelled", "p50", "p95"); err != nil {
		return err
	}
	for _, s := range stats {
		if _, err := fmt.Fprintf(w, "%s %7s %7s %7s %9s %8s %8s\n", padText(toolName(s.Tool), width, false),
			count(s.Calls), count(s.Errors), count(s.Pending), count(s.Cancelled), durText(s.P50), durText(s.P95)); err != nil {
			return err
		}
	}
	return nil
}

func toolName(tool string) string {
	if tool == "" {
		return "(no name)"
	}
	return termsafe.Line(tool)
}
