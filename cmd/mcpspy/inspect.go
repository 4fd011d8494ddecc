package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/mcptape/mcptape/inspector"
	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/store"
)

// runInspect opens the inspector on a cassette. A file that cannot be
// read fails here, with the store's one-line reason, before the terminal
// is taken over.
func runInspect(ctx context.Context, args []string, s streams) error {
	fs := newFlags("inspect", "inspect [--follow] CASSETTE|-", s)
	follow := fs.Bool("follow", false, "show messages that recorders in other processes add, as they arrive (.db only)")
	path, err := followedCassette(fs, args, follow)
	if err != nil {
		return err
	}
	if *follow && !awaitCassette(ctx, "inspect", path, s.Err) {
		return nil // interrupted while waiting
	}
	if path == stdinName {
		// The keys come from the terminal, not stdin: like less, it
		// pages what is piped to it.
		var m *inspector.Model
		var src inspector.Source
		if m, src, err = openRecording(path, s); err == nil {
			err = inspector.New(m, src, inspector.Options{Wait: s.Err}).Run(ctx)
		}
	} else {
		err = inspector.Run(ctx, path, inspector.Options{Follow: *follow, Wait: s.Err})
	}
	if errors.Is(err, inspector.ErrNoTerminal) {
		return fmt.Errorf("%w; mcpspy show prints the messages as text", err)
	}
	return err
}

// showAmendGrace is how long show --follow holds a client's HTTP message
// for the status of its answer (inspector.TextOptions.AmendGrace); 0 is
// the inspector's default. Tests lengthen it, so that the status they
// record, not the time it takes, decides what is printed.
var showAmendGrace time.Duration

// runShow prints the inspector's message table as text, one line per
// message: for a CI log, a pipe, or a bug report.
func runShow(ctx context.Context, args []string, s streams) error {
	fs := newFlags("show", showSynopsis, s)
	var sessions multiFlag
	fs.Var(&sessions, "session", "show only the session `ID` (an id or a name); repeatable")
	filter := fs.String("filter", "", "show only the messages the inspector filter `EXPR` selects (docs/INSPECTOR.md)")
	body := fs.Bool("body", false, "print each message's frame under its line, indented")
	httpMeta := fs.Bool("http", false, "print each message's HTTP metadata under its line: method, path, status, stream, SSE event")
	lintFlag := fs.Bool("lint", false, "print each message's protocol findings (mcpspy lint's) under its line, and a session's own before its first line")
	follow := fs.Bool("follow", false, "go on printing the messages recorders in other processes add, until interrupted (.db only); a client's HTTP message waits up to 2 s for the status of its answer")
	tools := fs.Bool("tools", false, "print the per-tool summary instead (calls, errors, pending, p50, p95 latency), as the inspector's t key")
	resend := fs.Bool("resend", false, "print instead, for each client request and notification, a shell command that sends it again (curl for HTTP, printf piped into the server for stdio), as the inspector's C key")
	path, err := followedCassette(fs, args, follow)
	if err != nil {
		return err
	}
	f, err := parseFilterFlag("show", *filter)
	if err != nil {
		return err
	}
	if *follow && !awaitCassette(ctx, "show", path, s.Err) {
		return nil // interrupted while waiting
	}
	if *tools && (*follow || *body || *httpMeta || *lintFlag || !f.Empty()) {
		return usageErrorf("show: --tools summarises every tools/call of the sessions in scope; it takes --session, not --filter, --body, --http, --lint or --follow")
	}
	if *resend && (*tools || *body || *httpMeta || *lintFlag) {
		return usageErrorf("show: --resend prints commands in place of the lines; it takes --session, --filter and --follow, not --tools, --body, --http or --lint")
	}
	m, src, err := openRecording(path, s)
	if err != nil {
		return err
	}
	if path == stdinName {
		path = "stdin" // what the notes below name it
	}
	if !*follow { // a recorder may yet add the session the filter names
		if err := checkFilterSessions("show", f, m, path); err != nil {
			return err
		}
	}
	scopes, err := exportScopes(m, path, sessions)
	if err != nil {
		return err
	}
	if err := m.SetScopes(scopes, src); err != nil {
		return err
	}
	if *follow {
		m.ScopeNamesGrow(sessions) // a new run under a --session name is shown too
	}
	if *tools {
		return m.WriteToolStats(s.Out)
	}
	if err := m.SetFilter(f, src); err != nil {
		return err
	}
	n, err := m.WriteText(ctx, s.Out, src, inspector.TextOptions{Bodies: *body, HTTP: *httpMeta, Lint: *lintFlag, Resend: *resend, Follow: *follow, AmendGrace: showAmendGrace})
	switch {
	case err != nil || n > 0 || *follow:
	case m.Len() == 0:
		fmt.Fprintln(s.Err, emptyNote("show", path, "message"))
	case m.Visible() == 0 && !f.Empty():
		fmt.Fprintln(s.Err, "mcpspy: show: the filter matched no message"+unheard(f, m))
	case *resend:
		fmt.Fprintln(s.Err, "mcpspy: show: no client request or notification shown, so no command to print")
	}
	return err
}

// emptyNote says that the recording at path holds no what ("session",
// "message"), which a command that prints nothing would otherwise leave
// unsaid. A HAR's entries that carry no MCP traffic (the page, its
// scripts) are left out, so a HAR saved from the wrong tab reads as empty.
func emptyNote(cmd, path, what string) string {
	note := fmt.Sprintf("mcpspy: %s: %s holds no %s", cmd, path, what)
	if store.KindOf(path) == store.KindHAR {
		note += " (a HAR's entries that carry no MCP traffic are left out)"
	}
	return note
}

// followedCassette parses the flags of a command that reads one CASSETTE
// and may --follow it, which only a .db that recorders write allows.
func followedCassette(fs *flag.FlagSet, args []string, follow *bool) (string, error) {
	if err := cli.ParseAll(fs, args); err != nil {
		return "", err
	}
	if fs.NArg() != 1 {
		return "", usageErrorf("%s: want exactly one CASSETTE, got %d arguments", fs.Name(), fs.NArg())
	}
	path := fs.Arg(0)
	if *follow && path == stdinName {
		return "", usageErrorf("%s: --follow needs a .db cassette; stdin is read whole, as a JSONL export or a HAR", fs.Name())
	}
	if *follow && store.WholeFile(path) {
		return "", usageErrorf("%s: --follow needs a .db cassette; %s is read whole (a JSONL export or a HAR), which recorders do not write", fs.Name(), path)
	}
	return path, nil
}

// awaitCassette waits, for --follow, until the cassette at path exists,
// as tail -F waits for a file: a viewer is often started before the host
// whose recorders make the cassette. A recorder creates it whole (built
// aside, then linked into place), so once it is there it can be read. It
// says on errw that it waits, and returns false if ctx ended first.
func awaitCassette(ctx context.Context, cmd, path string, errw io.Writer) bool {
	missing := func() bool { _, err := os.Stat(path); return errors.Is(err, fs.ErrNotExist) }
	if !missing() {
		return true
	}
	// A recorder makes the file, not its directory: a mistyped directory
	// would have the viewer wait for ever, saying only that it waits.
	nodir := ""
	if dir := filepath.Dir(path); dirMissing(dir) {
		nodir = fmt.Sprintf(" (nor does its directory %s, which a recorder does not make)", dir)
	}
	fmt.Fprintf(errw, "mcpspy: %s: %s does not exist yet%s; waiting for a recorder to create it\n", cmd, path, nodir)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for missing() {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// dirMissing says whether dir does not exist.
func dirMissing(dir string) bool {
	_, err := os.Stat(dir)
	return errors.Is(err, fs.ErrNotExist)
}

const showSynopsis = "show [--session ID] [--filter EXPR] [--body] [--http] [--lint] [--follow] CASSETTE\n" +
	"       mcpspy show --resend [--session ID] [--filter EXPR] [--follow] CASSETTE\n" +
	"       mcpspy show --tools [--session ID] CASSETTE"
