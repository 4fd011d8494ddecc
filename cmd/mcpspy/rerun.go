package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/atomicfile"
	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
)

const rerunSynopsis = `rerun [--session ID] [-o CASSETTE [--redact NAME] [--redact-value REGEX]] [--timeout D] [--ignore NAME] [--all] [--all-leaves] [--exit-code] SOURCE... -- COMMAND [ARG...]
       mcpspy rerun [flags] [-o CASSETTE [--no-redact]] [--header 'NAME: VALUE'] SOURCE... --upstream URL`

// runRerun sends the client side of recorded sessions to a server again,
// one session at a time (the connections of one sessionless client
// together: rerun.Clients), and compares what it answers now with what it
// answered then: every session of every SOURCE, or with --session the one
// so named in each.
func runRerun(ctx context.Context, args []string, s streams) error {
	fs := newFlags("rerun", rerunSynopsis, s)
	var sessions multiFlag
	fs.Var(&sessions, "session", "rerun only the session `ID` (an id or a name; repeatable; default: every session of every SOURCE)")
	out := fs.String("o", "", "also record the rerun into `CASSETTE` (created if missing, added to if not)")
	upstream := fs.String("upstream", "", "rerun against the Streamable HTTP server at `URL` instead of a command\n"+
		"(legacy HTTP+SSE: a path ending in /sse, or a server that refuses the POST of initialize and opens\n"+
		"an event stream on GET; ws:// or wss://: WebSocket)")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for each answer (and server request) the recording got")
	var headers multiFlag
	fs.Var(&headers, "header", "add header `'NAME: VALUE'` to every HTTP request (repeatable): the credentials a recording keeps redacted")
	all := fs.Bool("all", false, "print the requests answered the same too")
	allLeaves := allLeavesFlag(fs)
	ignore := ignoreFlag(fs)
	exitCode := fs.Bool("exit-code", false, "exit 1 when the server now answers differently, or not at all, or sends what is no JSON-RPC message")
	// What -o stores is hidden as record hides it.
	var redact, redactValue multiFlag
	fs.Var(&redact, "redact", "with -o: "+redactUsage)
	fs.Var(&redactValue, "redact-value", "with -o: "+redactValueUsage)
	noRedact := fs.Bool("no-redact", false, "with -o and --upstream: "+noRedactUsage)
	cmdAt := slices.Index(args, "--")
	flagArgs, command := args, []string(nil)
	if cmdAt >= 0 {
		flagArgs, command = args[:cmdAt], args[cmdAt+1:]
	}
	// Flags may come after SOURCE too (SOURCE --upstream URL reads best).
	positional, err := cli.ParseInterleaved(fs, flagArgs)
	if err != nil {
		return err
	}
	if err := cli.NonEmpty("rerun", "ignore", "a member name", *ignore); err != nil {
		return err
	}
	switch {
	case len(positional) == 0:
		return usageErrorf("rerun: no SOURCE cassette (before --)")
	case *upstream != "" && cmdAt >= 0:
		return usageErrorf("rerun: give either --upstream URL or -- COMMAND, not both")
	case *upstream == "" && len(command) == 0:
		return usageErrorf("rerun: no server: give -- COMMAND [ARG...] (stdio) or --upstream URL (Streamable HTTP)")
	case *out != "" && slices.ContainsFunc(positional, func(p string) bool { return cli.SamePath(*out, p) }):
		return usageErrorf("rerun: -o %s is a SOURCE; name another cassette", *out)
	}
	if err := cli.Positive("rerun", "timeout", *timeout); err != nil {
		return err
	}
	if err := checkCassetteOut("rerun", "-o", *out); err != nil {
		return err
	}
	header, err := cli.Headers("rerun", headers)
	if err != nil {
		return err
	}
	red, values, err := rerunRedaction(*out != "", *upstream != "", redact, redactValue, *noRedact)
	if err != nil {
		return err
	}
	opts := rerun.Options{Command: command, Timeout: *timeout, Stderr: s.Err, Header: header, Redactor: red, NoRedact: *noRedact}
	// The comparison names the server as the cassette would, whatever
	// --no-redact says: stdout ends up in CI logs.
	shown := red
	if shown == nil {
		shown = recorder.NewHTTPRedactor(nil)
	}
	target := shown.CommandLine(command)
	if *upstream != "" {
		u, err := cli.Upstream("rerun", *upstream)
		if err != nil {
			return err
		}
		opts.URL, target = u, shown.URL(u)
	} else if len(headers) > 0 {
		return usageErrorf("rerun: --header is for --upstream URL, not a stdio server")
	}

	jobs, err := loadSessions("rerun", positional, sessions, s.In)
	if err != nil {
		return err
	}
	// The -o cassette is opened (or made) before any server is driven: a
	// path that cannot be one would lose the whole rerun at the end.
	if *out != "" && !atomicfile.Direct(*out) { // a device is written at the end, afresh
		if err := store.Init(*out); err != nil {
			return err
		}
	}
	var reruns []store.TapeSession
	changed, done := 0, 0
	compared := memberNames{} // for --ignore, in the recordings and their reruns
	// stopped is why a rerun could not go on (the server could not be
	// started, or went away partway). What it did until then is still
	// compared and kept in -o, and the error comes last.
	var stopped error
	for _, group := range clientGroups(jobs) {
		sessions := make([]*store.TapeSession, len(group))
		for i, j := range group {
			sessions[i] = j.session
		}
		var results []*rerun.Result
		var err error
		if len(group) == 1 {
			var res *rerun.Result
			res, err = rerun.Run(ctx, sessions[0], opts)
			if res != nil {
				results = []*rerun.Result{res}
			}
		} else {
			results, err = rerun.RunClient(ctx, sessions, opts)
		}
		if err != nil {
			stopped = fmt.Errorf("rerun %s %s: %w", group[0].source, sessionIDs(group), err)
		}
		for i, res := range results {
			j := group[i]
			res.Session.Info.Name = "rerun of " + j.source + " " + j.session.Info.ID
			if stopped != nil && !answeredAny(&res.Session) {
				// A server that went away (or was never reached) before it
				// answered anything: a comparison would list every request
				// as changed or missing, and bury the one line that says
				// why. The error alone tells it; -o still keeps the try.
				reruns = append(reruns, res.Session)
				continue
			}
			if done > 0 {
				fmt.Fprintln(s.Out)
			}
			done++
			for _, u := range res.Unanswered {
				fmt.Fprintf(s.Err, "mcpspy: rerun: %s %s: %s\n", j.source, j.session.Info.ID, u)
			}
			for _, n := range res.Notes {
				fmt.Fprintf(s.Err, "mcpspy: rerun: %s %s: note: %s\n", j.source, j.session.Info.ID, n)
			}
			label := j.source + " " + j.session.Info.ID
			if len(group) > 1 {
				label += " (with " + sessionIDs(slices.Delete(slices.Clone(group), i, i+1)) + ", one client's connections, rerun together)"
			}
			differ := printComparison(s.Out, label, "rerun against "+target, j.session, &res.Session, diffShown{all: *all, allLeaves: *allLeaves, leavesFlag: "--all-leaves"}, *ignore)
			compared.add(j.session, &res.Session)
			for _, u := range res.Unheard {
				fmt.Fprintf(s.Out, "! server notification not heard again: %s\n", u)
			}
			for _, m := range res.Malformed {
				fmt.Fprintf(s.Out, "! the server sent what is no JSON-RPC message: %s\n", m)
			}
			if differ || len(res.Unanswered) > 0 || len(res.Unheard) > 0 || len(res.Malformed) > 0 {
				changed++
			}
			reruns = append(reruns, res.Session)
		}
		if stopped != nil {
			break
		}
	}
	if len(jobs) > 1 && stopped == nil {
		fmt.Fprintf(s.Out, "\n%s rerun: %d the same, %d changed\n", plural.Count(done, "session"), done-changed, changed)
	}
	if done > 0 {
		compared.warnUnmatched(s.Err, "rerun", *ignore)
	}
	if *out != "" && len(reruns) > 0 {
		if _, err := recordSessions(*out, reruns, recorder.Rewriter(redact, values)); err != nil {
			return errors.Join(stopped, fmt.Errorf("cassette: %w", err))
		}
	}
	if stopped != nil {
		return stopped
	}
	if *exitCode && changed > 0 {
		return &cli.ExitError{Code: 1}
	}
	return nil
}

// rerunRedaction checks rerun's --redact, --redact-value and --no-redact,
// which say what -o stores, as record's do, and returns what hides the
// secrets in HTTP metadata and the upstream (nil: the default, or nothing
// with --no-redact) and the compiled --redact-value patterns. Without -o
// nothing is stored, so they are refused, as --no-redact is for a stdio
// server (whose frames alone are stored): silently ignored, they would
// have the user believe otherwise.
func rerunRedaction(out, upstream bool, names, patterns []string, noRedact bool) (*recorder.HTTPRedactor, *recorder.ValuePatterns, error) {
	for _, f := range []struct {
		name string
		set  bool
	}{{"redact", len(names) > 0}, {"redact-value", len(patterns) > 0}, {"no-redact", noRedact}} {
		if f.set && !out {
			return nil, nil, usageErrorf("rerun: --%s is for what -o CASSETTE stores, and there is no -o", f.name)
		}
	}
	if noRedact && !upstream {
		return nil, nil, usageErrorf("rerun: --no-redact is for an HTTP or WebSocket server (--upstream URL), not a stdio server")
	}
	if err := checkRedactNames("rerun", names); err != nil {
		return nil, nil, err
	}
	values, err := valuePatterns("rerun", patterns)
	if err != nil {
		return nil, nil, err
	}
	red, err := httpRedactor("rerun", names, patterns, values, noRedact)
	return red, values, err
}

// answeredAny says whether the server sent the session anything.
func answeredAny(s *store.TapeSession) bool {
	return slices.ContainsFunc(s.Messages, func(m *store.Message) bool { return m.Dir == store.S2C })
}

// clientGroups splits jobs into those to rerun together (rerun.Clients):
// the connections of one sessionless 2026-07-28 client in a SOURCE; every
// other session alone.
func clientGroups(jobs []sourceSession) [][]sourceSession {
	var out [][]sourceSession
	for from := 0; from < len(jobs); {
		to := from + 1
		for to < len(jobs) && jobs[to].source == jobs[from].source {
			to++
		}
		of := map[*store.TapeSession]sourceSession{}
		sessions := make([]*store.TapeSession, 0, to-from)
		for _, j := range jobs[from:to] {
			of[j.session] = j
			sessions = append(sessions, j.session)
		}
		for _, g := range rerun.Clients(sessions) {
			group := make([]sourceSession, len(g))
			for i, s := range g {
				group[i] = of[s]
			}
			out = append(out, group)
		}
		from = to
	}
	return out
}

// sessionIDs lists the jobs' session ids, comma-separated.
func sessionIDs(jobs []sourceSession) string {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.session.Info.ID
	}
	return strings.Join(ids, ",")
}

// addToCassette writes tape's sessions into the cassette at path, a copy
// of it renamed into place, as import does, and returns the id each was
// stored under (store.Import).
func addToCassette(path string, tape *store.Tape) (ids []string, err error) {
	if atomicfile.Direct(path) {
		return cassetteToDevice(path, func(built string) ([]string, error) { return store.Import(built, tape) })
	}
	err = atomicfile.Write(path, 0o600, func(tmp *os.File) error {
		if err := copyExisting(path, tmp); err != nil {
			return err
		}
		ids, err = store.Import(tmp.Name(), tape)
		return err
	})
	return ids, err
}

// cassetteToDevice writes a new cassette to path, a device or a named
// pipe (import -o /dev/null checks that a file imports): build makes it
// at the name it is given. bbolt needs a file it can seek in, so it is
// built in a temporary directory of its own and copied out; what path
// held before is no cassette to add to.
func cassetteToDevice(path string, build func(built string) ([]string, error)) (ids []string, err error) {
	dir, err := os.MkdirTemp("", "mcpspy-cassette-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	built := filepath.Join(dir, "cassette.db")
	if ids, err = build(built); err != nil {
		return nil, fmt.Errorf("build the cassette for %s: %w", path, err)
	}
	f, err := os.Open(built)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	err = atomicfile.Write(path, 0o600, func(out *os.File) error {
		_, err := io.Copy(out, f)
		return err
	})
	return ids, err
}

// recordSessions adds sessions to the cassette at path as a recorder
// would: through a store.Writer, so each gets the cassette's next id and
// other recorders may write to it meanwhile. rewrite, if not nil, is the
// writer's Rewrite (recorder.Rewriter: what --redact and --redact-value
// hide in frames).
func recordSessions(path string, sessions []store.TapeSession, rewrite func(*store.Message) *store.Message) (ids []string, err error) {
	if atomicfile.Direct(path) {
		return cassetteToDevice(path, func(built string) ([]string, error) { return recordSessions(built, sessions, rewrite) })
	}
	w, err := store.NewWriter(path, store.WriterOptions{Observe: store.ObserveHandshake, Rewrite: rewrite})
	if err != nil {
		return nil, err
	}
	for _, ts := range sessions {
		info := ts.Info
		info.ID, info.End = "", nil
		sess, err := w.NewSession(info)
		if err != nil {
			w.Close()
			return nil, err
		}
		ids = append(ids, sess.ID())
		for _, m := range ts.Messages {
			seq := sess.Append(m.Dir, m.Time, m.Frame, m.HTTP)
			if m.Note != "" { // Append takes none: the recorders amend it on
				// The same meta twice: the store only reads it.
				sess.AmendMeta(seq, m.HTTP, m.Note)
			}
		}
		if ts.Info.End != nil {
			if err := sess.End(*ts.Info.End); err != nil {
				w.Close()
				return nil, err
			}
		}
	}
	return ids, w.Close()
}
