package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/internal/suggest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
)

const diffSynopsis = "diff [--session ID [--session ID]] [--ignore NAME] [--progress last|steps|off] [--all] [--all-leaves] [--order] [--exit-code] A B"

// runDiff compares one recorded session of cassette A with one of B,
// request by request, as replay matching sees them (replay.CompareSessions).
// A cassette that holds the connections of one sessionless 2026-07-28
// HTTP client stands, unless --session picks one, for them all, merged in
// recorded order (replay.CompareClients).
func runDiff(args []string, s streams) error {
	fs := newFlags("diff", diffSynopsis, s)
	var sessions multiFlag
	fs.Var(&sessions, "session", "the session to compare, `ID` or name: once for both cassettes, twice for A's then B's;\n"+
		"needed for a cassette that holds several, but for the connections of one sessionless 2026-07-28 HTTP client,\n"+
		"which are compared merged in recorded order")
	all := fs.Bool("all", false, "print the requests that are the same too")
	allLeaves := allLeavesFlag(fs)
	order := fs.Bool("order", false, "count requests both sessions made, but in another order, as a difference\n"+
		"(by default they are paired, their answers compared, and the move only noted: replay does not match by order)")
	ignore := ignoreFlag(fs)
	progress := fs.String("progress", "last", "how a call's progress notifications are compared, `HOW`: last (whether any came, and the last one's\n"+
		"progress, total and message), steps (how many came, and each one: for a server whose steps are its work's,\n"+
		"not the clock's), or off; when they came never counts")
	exitCode := fs.Bool("exit-code", false, "exit 1 when the sessions differ (as git diff --exit-code)")
	if err := cli.ParseAll(fs, args); err != nil {
		return err
	}
	opts := replay.CompareOptions{Progress: replay.ProgressLast}
	switch *progress {
	case "last":
	case "steps":
		opts.Progress = replay.ProgressSteps
	case "off":
		opts.Progress = replay.ProgressNotCompared
	default:
		return usageErrorf("diff: --progress %q: want last, steps or off", *progress)
	}
	if fs.NArg() == 1 && len(sessions) == 2 {
		// Two sessions of one recording (two runs a recorder kept side
		// by side): diff takes the file for each side.
		a := fs.Arg(0)
		return usageErrorf("diff: want two cassettes, A and B, not 1: to compare two sessions of one, give it twice (mcpspy diff --session %s --session %s %s %s)", sessions[0], sessions[1], a, a)
	}
	if fs.NArg() != 2 {
		return usageErrorf("diff: want two cassettes, A and B, not %d", fs.NArg())
	}
	if err := oneStdin("diff", fs.Args()); err != nil {
		return err
	}
	if err := cli.NonEmpty("diff", "ignore", "a member name", *ignore); err != nil {
		return err
	}
	opts.Ignore = *ignore
	if len(sessions) > 2 {
		return usageErrorf("diff: --session at most twice (A's, then B's), got %d", len(sessions))
	}
	want := [2]string{}
	for i := range want {
		if len(sessions) > 0 {
			want[i] = sessions[min(i, len(sessions)-1)]
		}
	}
	var sides [2][]*store.TapeSession
	var labels [2]string
	for i, path := range fs.Args() {
		tape, err := loadRecording(path, s.In)
		if err != nil {
			return err
		}
		if sides[i], err = diffSide(tape, label(path), want[i]); err != nil {
			return err
		}
		labels[i] = label(path) + " " + sideLabel(sides[i])
	}
	var diffs []replay.Difference
	if len(sides[0]) == 1 && len(sides[1]) == 1 {
		diffs = replay.CompareSessionsWith(sides[0][0], sides[1][0], opts)
	} else {
		diffs = replay.CompareClientsWith(sides[0], sides[1], opts)
	}
	differ := printDiffs(s.Out, labels[0], labels[1], diffs, diffShown{all: *all, allLeaves: *allLeaves, order: *order, leavesFlag: "--all-leaves"})
	if printNotMessages(s.Out, sides) {
		differ = true
	}
	if len(*ignore) > 0 {
		names := memberNames{}
		names.add(sides[0]...)
		names.add(sides[1]...)
		names.warnUnmatched(s.Err, "diff", *ignore)
	}
	if *exitCode && differ {
		return &cli.ExitError{Code: 1}
	}
	return nil
}

// printNotMessages writes, for each direction, how many frames each side
// holds that are no JSON-RPC message (a banner or a log line a server
// printed on stdout, a cut line), when the sides hold different numbers
// of them, with the first of the side with more past as many as the other
// has (replay.NotMessages). It reports whether it wrote any. They are
// counted, not compared: a log line tells the time, and real clients
// choke on any of them alike. The same count is the same, as rerun takes
// the lines a recording has already.
func printNotMessages(w io.Writer, sides [2][]*store.TapeSession) (differ bool) {
	for _, dir := range []struct {
		dir  store.Dir
		from string
	}{{store.C2S, "the client"}, {store.S2C, "the server"}} {
		var lines [2][]string
		for i, side := range sides {
			for _, sess := range side {
				for _, l := range replay.NotMessages(sess, dir.dir) {
					if len(side) > 1 {
						l = "session " + sess.Info.ID + ", " + l
					}
					lines[i] = append(lines[i], l)
				}
			}
		}
		na, nb := len(lines[0]), len(lines[1])
		if na == nb {
			continue
		}
		// The side with more, and the first of its frames past as many
		// as the other side has.
		more, fewer, extra := "a", nb, lines[0]
		if nb > na {
			more, fewer, extra = "b", na, lines[1]
		}
		first := more + "'s first"
		if fewer > 0 {
			first += fmt.Sprintf(" past %s", plural.Count(fewer, "frame"))
		}
		fmt.Fprintf(w, "! frames from %s that are no JSON-RPC message: %d in a, %d in b; %s: %s\n", dir.from, na, nb, first, extra[fewer])
		differ = true
	}
	return differ
}

// diffSide picks what diff compares of tape: the session named id; else
// its only session, or all its sessions when they are the connections of
// one sessionless client (sessionlessClients), which split a run's
// requests as the client happened to open connections, differently each
// run.
func diffSide(tape *store.Tape, path, id string) ([]*store.TapeSession, error) {
	if id == "" && len(tape.Sessions) > 1 {
		all := make([]*store.TapeSession, len(tape.Sessions))
		for i := range tape.Sessions {
			all[i] = &tape.Sessions[i]
		}
		switch clients := sessionlessClients(all); {
		case len(clients) == 1:
			return all, nil
		case len(clients) > 1:
			named := make([]string, len(clients))
			for i, c := range clients {
				named[i] = joinIDs(c)
			}
			return nil, usageErrorf("diff: %s holds %d sessions, the connections of %d sessionless 2026-07-28 HTTP clients (%s); "+
				"name one session of each side's with --session (A's, then B's), or export each client's sessions to a cassette of its own",
				path, len(all), len(clients), strings.Join(named, "; "))
		}
	}
	s, err := pickSession("diff", tape, path, id)
	if err != nil {
		return nil, err
	}
	return []*store.TapeSession{s}, nil
}

// sessionlessClients splits sessions, when every one is a connection of a
// sessionless 2026-07-28 HTTP client (rerun.Sessionless), into the
// clients they belong to, in order of first session; nil when one is not.
// Connections are one client's unless they name different clientInfo
// (2026-07-28 requests carry it in _meta); a connection that names none
// is anyone's, so goes with the one client there is, or else apart.
// rerun.Clients' grouping by overlapping connections, which rerun needs
// to run them together, is not asked for: a client without keep-alive
// opens a connection per request, one after another.
func sessionlessClients(sessions []*store.TapeSession) [][]*store.TapeSession {
	var clients [][]*store.TapeSession
	at := map[string]int{} // canonical clientInfo → its client in clients
	var anyone []*store.TapeSession
	for _, s := range sessions {
		if !rerun.Sessionless(s) {
			return nil
		}
		info := canonicalJSON(s.Info.Handshake.ClientInfo)
		if info == "" {
			anyone = append(anyone, s)
			continue
		}
		i, seen := at[info]
		if !seen {
			i, at[info] = len(clients), len(clients)
			clients = append(clients, nil)
		}
		clients[i] = append(clients[i], s)
	}
	if len(clients) <= 1 {
		return [][]*store.TapeSession{sessions}
	}
	if len(anyone) > 0 {
		clients = append(clients, anyone)
	}
	return clients
}

// canonicalJSON is raw re-encoded with its object keys sorted, so that
// the same value compares equal however it was written; "" for none.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// sideLabel names what diff compares of a cassette: its session's id, or
// its merged sessions'.
func sideLabel(side []*store.TapeSession) string {
	if len(side) == 1 {
		return side[0].Info.ID
	}
	return joinIDs(side) + " (one client's connections, merged)"
}

// joinIDs lists the sessions' ids, comma-separated.
func joinIDs(sessions []*store.TapeSession) string {
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.Info.ID
	}
	return strings.Join(ids, ",")
}

// ignoreFlag defines diff's and rerun's --ignore.
func ignoreFlag(fs *flag.FlagSet) *multiFlag {
	var ignore multiFlag
	fs.Var(&ignore, "ignore", "leave members named `NAME` (at any depth, in requests, answers and the progress diff compares) out of the comparison:\n"+
		"values made afresh each run, like timestamps or ids (repeatable); a name, not a path (text, not result.content[0].text)")
	return &ignore
}

// memberNames collects the names of the members inside the params,
// results and errors of sessions' frames, which --ignore leaves out of a
// comparison, so that a NAME it was given that names none can be told:
// it would leave nothing out, unseen.
type memberNames map[string]bool

// add collects the member names of sessions' frames.
func (n memberNames) add(sessions ...*store.TapeSession) {
	for _, s := range sessions {
		for _, m := range s.Messages {
			jsonrpc.ReplaceMembers(m.Frame, func(path []string, name string) bool {
				if len(path) > 0 && (path[0] == "params" || path[0] == "result" || path[0] == "error") {
					n[name] = true
				}
				return false
			}, nil)
		}
	}
}

// warnUnmatched names on w each of ignore that no member collected has.
// The comparison prints leaves by their path (result.content[0].text),
// and --ignore takes a member's name, the path's last part: a path given
// instead is answered with the name to give.
func (n memberNames) warnUnmatched(w io.Writer, cmd string, ignore []string) {
	known := slices.Sorted(maps.Keys(n))
	for _, name := range ignore {
		if n[name] {
			continue
		}
		hint := ""
		last := name[strings.LastIndexAny(name, ".")+1:]
		if i := strings.IndexByte(last, '['); i >= 0 {
			last = last[:i]
		}
		switch {
		case last != name && n[last]:
			hint = fmt.Sprintf(" (--ignore takes a member's name, not its path: --ignore %s)", last)
		default:
			hint = suggest.DidYouMean(name, known, "--ignore %s")
			if hint != "" {
				hint = " (" + strings.TrimPrefix(hint, "; ") + ")"
			}
		}
		fmt.Fprintf(w, "mcpspy: %s: --ignore %s names no member of the params, results or errors compared: it left nothing out%s\n", cmd, name, hint)
	}
}

// printComparison writes what replay.CompareSessions finds between a and
// b (members named in ignore left out), as printDiffs does.
func printComparison(w io.Writer, labelA, labelB string, a, b *store.TapeSession, show diffShown, ignore []string) (differ bool) {
	return printDiffs(w, labelA, labelB, replay.CompareSessions(a, b, ignore...), show)
}

// allLeavesFlag defines --all-leaves, which diff and rerun share.
// (--order is diff's alone: a rerun sends the recorded requests in their
// recorded order, so its comparisons find no move to count.)
func allLeavesFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("all-leaves", false, "print every differing leaf of an answer, not the first six")
}

// diffShown says what printDiffs shows and counts.
type diffShown struct {
	all       bool // the requests that are the same too
	allLeaves bool // every differing leaf, not the first six
	order     bool // a request made in another order is a difference
	// leavesFlag is the flag that shows every leaf, named where leaves
	// are cut ("" when the command has none).
	leavesFlag string
}

// printDiffs writes a comparison, labelled as given: a header, the
// differences (every request with all), a count, and the requests made in
// another order. It reports whether the sides differ: a move counts only
// with order, since replay pairs requests by method and params, not by
// their place.
func printDiffs(w io.Writer, labelA, labelB string, diffs []replay.Difference, show diffShown) (differ bool) {
	var n [4]int // same, answered differently, only in A, only in B
	var moved []replay.Difference
	for _, d := range diffs {
		if d.Moved {
			moved = append(moved, d)
		}
		switch d.Op {
		case replay.Same:
			n[0]++
		case replay.AnswerDiffs:
			n[1]++
		case replay.OnlyInA:
			n[2]++
		case replay.OnlyInB:
			n[3]++
		}
	}
	fmt.Fprintf(w, "--- a: %s (%s)\n+++ b: %s (%s)\n", labelA, plural.Count(n[0]+n[1]+n[2], "request"), labelB, plural.Count(n[0]+n[1]+n[3], "request"))
	for _, d := range diffs {
		if d.Op == replay.Same && !show.all {
			continue
		}
		switch {
		case d.Cut > 0 && show.allLeaves:
			d.Detail = d.AllLeaves
		case d.Cut > 0 && show.leavesFlag != "":
			d.Detail += " (" + show.leavesFlag + " shows them)"
		}
		fmt.Fprintln(w, d)
	}
	fmt.Fprintf(w, "%d the same, %d answered differently, %d only in a, %d only in b", n[0], n[1], n[2], n[3])
	if len(moved) > 0 {
		fmt.Fprintf(w, "; %d in another order", len(moved))
	}
	fmt.Fprintln(w)
	if len(moved) > 0 {
		why := "--order counts it as a difference"
		if show.order {
			why = "a difference, with --order"
		}
		fmt.Fprintf(w, "order (replay pairs requests by method and params, not by order; %s):\n", why)
		for _, d := range moved {
			fmt.Fprintf(w, "  %s: %s in a, %s in b\n", d.Request, ordinal(d.IndexA), ordinal(d.IndexB))
		}
	}
	return n[1]+n[2]+n[3] > 0 || show.order && len(moved) > 0
}

// ordinal writes n as English does: 1st, 2nd, 3rd, 4th, 11th, 21st.
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// pickSession finds the session named id (or name) in tape, or its only
// session when id is "". cmd names the command in a usage error.
func pickSession(cmd string, tape *store.Tape, path, id string) (*store.TapeSession, error) {
	if id == "" {
		if len(tape.Sessions) == 1 {
			return &tape.Sessions[0], nil
		}
		if len(tape.Sessions) == 0 {
			return nil, fmt.Errorf("%s: the cassette holds no session", path)
		}
		// Their names too: a session is picked by a name as well, and
		// the name says which is which, where an id does not.
		infos := make([]store.SessionInfo, len(tape.Sessions))
		for i, s := range tape.Sessions {
			infos[i] = s.Info
		}
		return nil, usageErrorf("%s: %s: %s; name one with --session", cmd, path, store.Held(infos))
	}
	// An id names one session; a name may name several (every recording
	// of a wrapped server is named after it), and taking the first of
	// them would compare a session the user did not pick.
	var named []*store.TapeSession
	for i, s := range tape.Sessions {
		switch {
		case s.Info.ID == id:
			return &tape.Sessions[i], nil
		case s.Info.Named(id):
			named = append(named, &tape.Sessions[i])
		}
	}
	switch len(named) {
	case 1:
		return named[0], nil
	case 0:
	default:
		return nil, usageErrorf("%s: --session %s names %d sessions of %s (%s); name one by its id", cmd, id, len(named), path, joinIDs(named))
	}
	infos := make([]store.SessionInfo, len(tape.Sessions))
	for i, s := range tape.Sessions {
		infos[i] = s.Info
	}
	return nil, store.NoSession(path, id, infos)
}

// sourceSession is one session of a cassette named on the command line.
type sourceSession struct {
	source  string
	session *store.TapeSession
}

// loadSessions reads each cassette and returns the sessions named in ids
// in each (none: every session of every cassette), in order. A cassette
// without sessions, or without one named, is an error.
func loadSessions(cmd string, sources, ids []string, in io.Reader) ([]sourceSession, error) {
	if err := oneStdin(cmd, sources); err != nil {
		return nil, err
	}
	var out []sourceSession
	for _, source := range sources {
		t, err := loadTape(cmd, source, ids, in)
		if err != nil {
			return nil, err
		}
		for _, s := range t.sessions() {
			out = append(out, sourceSession{t.source, s})
		}
	}
	return out, nil
}

// sourceTape is one cassette named on the command line, read whole, with
// the sessions --session picked in it.
type sourceTape struct {
	source string
	tape   *store.Tape
	picked []*store.TapeSession // nil: every session
}

// sessions returns the picked sessions, or every session.
func (t sourceTape) sessions() []*store.TapeSession {
	if t.picked != nil {
		return t.picked
	}
	out := make([]*store.TapeSession, len(t.tape.Sessions))
	for i := range t.tape.Sessions {
		out[i] = &t.tape.Sessions[i]
	}
	return out
}

// shows says whether the session with id is picked (or every one is).
func (t sourceTape) shows(id string) bool {
	return t.picked == nil || slices.ContainsFunc(t.picked, func(s *store.TapeSession) bool { return s.Info.ID == id })
}

// loadTape reads a cassette whole, for a command that needs all of it
// even when --session picks some sessions (lint's cross-session checks),
// and picks those named in ids as export does (store.Tape.Pick). A
// cassette without sessions, or without one named, is an error. A
// source "-" is the recording on in (an export or a HAR), named stdin.
func loadTape(cmd, source string, ids []string, in io.Reader) (sourceTape, error) {
	tape, err := loadRecording(source, in)
	if err != nil {
		return sourceTape{}, err
	}
	source = label(source)
	t := sourceTape{source: source, tape: tape}
	if len(ids) == 0 {
		if len(tape.Sessions) == 0 {
			return sourceTape{}, fmt.Errorf("%s: the cassette holds no session", source)
		}
		return t, nil
	}
	picked := store.Tape{Sessions: tape.Sessions} // Pick replaces the slice, not what it holds
	if err := picked.Pick(source, ids); err != nil {
		return sourceTape{}, err
	}
	for i := range picked.Sessions {
		t.picked = append(t.picked, &picked.Sessions[i])
	}
	return t, nil
}
