package main

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// version is stamped into every session this build records.
const version = "mcpspy/0.1"

// recordOptions are the flags of "mcpspy record".
type recordOptions struct {
	cassette string
	session  string
	listen   string
	upstream string
	redact   multiFlag
	origins  multiFlag
	headers  multiFlag
	noRedact bool
	insecure bool
	grace    time.Duration
	fsync    bool
	// unwrapKeepsArgs is recorder.KeepArgsFlag: a note wrap leaves for
	// unwrap, with no effect on recording.
	unwrapKeepsArgs bool
	command         []string
	// redactValue are the --redact-value patterns, values what they
	// compile to (nil when there are none).
	redactValue multiFlag
	values      *recorder.ValuePatterns
}

const recordSynopsis = `record [-o CASSETTE] [--session NAME] -- COMMAND [ARG...]
       mcpspy record [-o CASSETTE] [--session NAME] [--listen ADDR] --upstream URL`

func parseRecord(args []string, s streams) (*recordOptions, error) {
	o := &recordOptions{}
	fs := newFlags("record", recordSynopsis, s)
	fs.StringVar(&o.cassette, "o", "mcpspy.db", "the `CASSETTE` to record into (created if missing)")
	fs.StringVar(&o.session, "session", "", "a `NAME` for the recorded session(s), shown by ls and usable in export --session")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "with --upstream: listen on `ADDR`")
	fs.StringVar(&o.upstream, "upstream", "", "record an HTTP (http://, https://) or WebSocket (ws://, wss://) server at `URL`")
	fs.Var(&o.redact, "redact", redactUsage)
	fs.Var(&o.redactValue, "redact-value", redactValueUsage)
	fs.Var(&o.origins, "allow-origin", "with --upstream: also proxy browser requests from `ORIGIN` (repeatable; * allows any); requests without Origin and loopback origins always pass")
	fs.Var(&o.headers, "header", "with --upstream: set header `'NAME: VALUE'` on every request to the upstream (repeatable), in place of any\n"+
		"the client sent so named; never recorded. For a server that wants a token the client cannot get through the proxy")
	fs.BoolVar(&o.noRedact, "no-redact", false, noRedactUsage)
	fs.BoolVar(&o.insecure, "insecure", false, "do not verify the upstream's TLS certificate")
	fs.BoolVar(&o.fsync, "fsync", false, "fsync every group commit, so the cassette also survives a power cut (slower); either way a killed\n"+
		"mcpspy loses only what was not yet committed (a message waits at most 25 ms plus one commit)")
	fs.BoolVar(&o.unwrapKeepsArgs, strings.TrimPrefix(recorder.KeepArgsFlag, "--"), false, "no effect on recording: wrap writes it for a server whose entry has an empty \"args\" list, so\n"+
		"that wrap --unwrap keeps that list")
	fs.DurationVar(&o.grace, "grace", 5*time.Second, "stdio: how long each shutdown step (close stdin, SIGTERM) waits for the server to exit")

	// The server's command line starts after "--", or at the first
	// argument that is not one of record's flags (as env and timeout
	// take a command): its own flags, and any "--" of its own, pass to
	// it. Some launchers drop a "--" they are given (the MCP Inspector
	// does), so record cannot insist on one.
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	o.command = fs.Args()
	dashed := len(args) > len(o.command) && args[len(args)-len(o.command)-1] == "--"
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	listenSet := set["listen"]
	switch {
	case o.upstream != "" && (dashed || len(o.command) > 0):
		return nil, usageErrorf("record: give either --upstream URL or -- COMMAND, not both")
	case o.upstream == "" && listenSet:
		return nil, usageErrorf("record: --listen needs --upstream URL")
	case o.upstream == "" && !dashed && len(o.command) == 0:
		return nil, usageErrorf("record: nothing to record: give -- COMMAND [ARG...] (stdio) or --upstream URL (HTTP, WebSocket)")
	case o.upstream == "" && len(o.command) == 0:
		return nil, usageErrorf("record: no server command after --")
	}
	// A flag of the other mode would be ignored; say so rather than let
	// the user believe, say, that stdio frames were redacted.
	for _, name := range []string{"no-redact", "allow-origin", "insecure", "header"} {
		if set[name] && o.upstream == "" {
			return nil, usageErrorf("record: --%s is for HTTP and WebSocket recording (--upstream URL), not a stdio server", name)
		}
	}
	if o.cassette == "" {
		return nil, usageErrorf("record: -o wants a CASSETTE path, got an empty one")
	}
	if err := checkCassetteOut("record", "-o", o.cassette); err != nil {
		return nil, err
	}
	if err := checkRedactNames("record", o.redact); err != nil {
		return nil, err
	}
	var err error
	if o.values, err = valuePatterns("record", o.redactValue); err != nil {
		return nil, err
	}
	if _, err := cli.Headers("record", o.headers); err != nil {
		return nil, err
	}
	if set["grace"] && o.upstream != "" {
		return nil, usageErrorf("record: --grace is for a stdio server (-- COMMAND), not --upstream")
	}
	if err := cli.Positive("record", "grace", o.grace); err != nil {
		return nil, err
	}
	return o, nil
}

func runRecord(ctx context.Context, args []string, s streams) error {
	o, err := parseRecord(args, s)
	if err != nil {
		return err
	}
	if o.upstream != "" {
		return recordNet(ctx, s, o)
	}
	return recordStdio(ctx, s, o)
}

// newWriter opens (or creates) the cassette. Both modes call it only once
// what can fail before a session is checked (the listener, the server
// command), so that a run failing there leaves no new file behind.
func newWriter(s streams, o *recordOptions) (*store.Writer, error) {
	wopts := store.WriterOptions{Observe: store.ObserveHandshake, Log: s.Err, NoSync: !o.fsync}
	wopts.Rewrite = recorder.Rewriter(o.redact, o.values) // on the store's goroutine, off the forwarding path
	w, err := store.NewWriter(o.cassette, wopts)
	if err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	return w, nil
}

// stdioRedactor hides in the server's command line what --redact names
// and --redact-value matches, besides the credentials always hidden (a
// stdio recording has no --no-redact).
func stdioRedactor(o *recordOptions) *recorder.HTTPRedactor {
	red := recorder.NewHTTPRedactor(o.redact)
	red.Values = o.values
	return red
}

func recordStdio(ctx context.Context, s streams, o *recordOptions) error {
	// Looked up as the proxy looks it up to start it, but before the
	// cassette is made: a command that is not there fails the run
	// without a new file, or an empty session in an existing one.
	if _, err := exec.LookPath(o.command[0]); err != nil {
		return fmt.Errorf("server command %q: %w", o.command[0], err)
	}
	w, err := newWriter(s, o)
	if err != nil {
		return err
	}
	// NewSession, not StartSession: nothing is forwarded yet (the server
	// is not started), and a cassette that cannot take a session fails
	// the run here, before the client talks to anything.
	sess, err := w.NewSession(store.SessionInfo{
		Name:      o.session,
		Transport: store.TransportStdio,
		Upstream:  stdioRedactor(o).CommandLine(o.command),
		Recorder:  version,
	})
	if err != nil {
		w.Close()
		return fmt.Errorf("cassette: %w", err)
	}
	p := &recorder.StdioProxy{Command: o.command, Stdin: s.In, Stdout: s.Out, Stderr: s.Err, Tap: sess, Grace: o.grace}
	res, runErr := p.Run(ctx)
	if runErr != nil {
		res.End = store.EndInfo{Reason: store.EndError, Error: runErr.Error()}
	}
	// Close's final commit stores the end with what is left, and retries
	// while another process holds the file: a commit of the end's own
	// (Session.End) would fail on its first wait and call the run failed
	// though the retry then stored everything.
	sess.Finish(res.End)
	closeErr := w.Close()
	switch {
	case runErr != nil:
		return runErr
	case closeErr != nil:
		return fmt.Errorf("cassette: %w", closeErr)
	case res.ExitCode != 0:
		return &cli.ExitError{Code: res.ExitCode}
	}
	return nil
}
