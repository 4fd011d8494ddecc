package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/atomicfile"
	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

const serveSynopsis = `serve [--http ADDR | --ws ADDR] [--watch] [--exit-with-parent] [--match MODE] [--report FILE] [--journal FILE] [--strict] [--timing recorded|none] [--session NAME]... [--ignore NAME]... [--call-timeout D] [--session-idle D] [--http-sessions auto|on|off] SOURCE...
       mcpmock serve [flags] [--record-new CASSETTE] [--redact NAME] [--redact-value REGEX] [SOURCE...] -- COMMAND [ARG...]
       mcpmock serve [flags] [--record-new CASSETTE] [--redact NAME] [--redact-value REGEX] [--header 'NAME: VALUE'] --upstream URL [SOURCE...]`

type serveOptions struct {
	http, ws    string
	match       string
	report      string
	journal     string
	strict      bool
	timing      string
	sessions    multiFlag
	ignore      multiFlag
	callTimeout time.Duration
	sessionIdle time.Duration
	// httpSessions is replay.Options.HTTPSessions.
	httpSessions string
	watch        bool
	// exitWithParent: stop (as on SIGTERM) once the process that started
	// mcpmock has ended (parent.go).
	exitWithParent bool
	sources        []string
	fallback       fallbackOptions
}

func parseServe(args []string, s streams) (*serveOptions, error) {
	o := &serveOptions{}
	fs := newFlags("serve", serveSynopsis, s)
	fs.StringVar(&o.http, "http", "", "serve Streamable HTTP on `ADDR` at /mcp (and legacy HTTP+SSE at /sse, /message); a bare port binds 127.0.0.1")
	fs.StringVar(&o.ws, "ws", "", "serve WebSocket (subprotocol mcp) on `ADDR`; a bare port binds 127.0.0.1")
	fs.StringVar(&o.match, "match", "default", "how requests match recordings, `MODE`: default, strict, ignore-params, ignore-params=METHOD,... (see docs/REPLAY.md)")
	fs.StringVar(&o.report, "report", "", "write a JSON report to `FILE` at exit: matched, unmatched, unused, skipped, interrupted\n"+
		"(- is stdout, with --http or --ws)")
	fs.StringVar(&o.journal, "journal", "", "write every request and notification clients send to `FILE` as it arrives, one JSON object per line\n"+
		"(- is stdout, with --http or --ws)")
	fs.BoolVar(&o.strict, "strict", false, "exit 1 if any request was unmatched, any recorded request unused, or any call interrupted (given up unanswered when mcpmock stopped or stdin closed)")
	fs.StringVar(&o.timing, "timing", "none", "`recorded` keeps the recorded delays; none answers at once")
	fs.Var(&o.sessions, "session", "replay only the recorded session `NAME` (an id or a name; repeatable; cassettes only)")
	fs.Var(&o.ignore, "ignore", "leave request members named `NAME` (at any depth in params) out of matching: values that change\n"+
		"from run to run, like timestamps or request ids (repeatable; cassettes only)")
	fs.DurationVar(&o.callTimeout, "call-timeout", 10*time.Second, "how long to wait for the client's reply to a server→client request")
	fs.DurationVar(&o.sessionIdle, "session-idle", 30*time.Minute, "end an HTTP session unused for this long (its id then gets 404); 0 or negative: never")
	fs.StringVar(&o.httpSessions, "http-sessions", "auto", "with --http: `auto` issues an Mcp-Session-Id on initialize unless the recorded server gave none or a script\n"+
		"says server.sessions: false; on: always; off: never, as a server without sessions (GET and DELETE get 405)")
	fs.BoolVar(&o.watch, "watch", false, "with --http or --ws: load the script SOURCEs again when their files change; sessions that start\n"+
		"after a change get the new version, and one that does not load is reported while the last good one serves")
	fs.BoolVar(&o.exitWithParent, "exit-with-parent", false, "stop, as on SIGTERM (the report written), once the process that started mcpmock has ended:\n"+
		"a test runner that died without stopping it leaves no server holding its port")
	o.fallback.flags(fs)
	args, o.fallback.command = splitCommand(args)
	var pos []string
	var err error
	if o.fallback.command == nil {
		pos, o.fallback.command, err = parseUndashed(fs, args)
	} else {
		pos, err = cli.ParseInterleaved(fs, args)
	}
	if err != nil {
		return nil, err
	}
	o.sources = pos
	switch {
	case len(o.sources) == 0 && o.fallback.recordNew == "":
		return nil, usageErrorf("serve: no SOURCE given (a cassette .db/.jsonl/.har or a script .yaml/.yml/.json; or, to record a server from scratch, --record-new CASSETTE with -- COMMAND or --upstream URL)")
	case o.http != "" && o.ws != "":
		return nil, usageErrorf("serve: give --http or --ws, not both")
	}
	for i, src := range o.sources {
		if _, err := sourceKind(src); err != nil {
			return nil, err
		}
		// The second copy would never answer, and count all it holds unused.
		if slices.ContainsFunc(o.sources[:i], func(p string) bool { return cli.SamePath(p, src) }) {
			return nil, usageErrorf("serve: SOURCE %s is given twice; the second would never answer", src)
		}
		// --report and --journal replace what is at their path: never a
		// cassette or script the user is replaying.
		for _, out := range []struct{ flag, path string }{{"--report", o.report}, {"--journal", o.journal}} {
			if out.path != "" && cli.SamePath(out.path, src) {
				return nil, usageErrorf("serve: %s %s is also a SOURCE; writing it would destroy it", out.flag, out.path)
			}
		}
	}
	if err := o.fallback.check(o); err != nil {
		return nil, err
	}
	if err := cli.Positive("serve", "call-timeout", o.callTimeout); err != nil {
		return nil, err
	}
	if err := cli.NonEmpty("serve", "ignore", "a member name", o.ignore); err != nil {
		return nil, err
	}
	// Without a cassette these would do nothing (a script says in its own
	// when: what matches). Kind, not existence: a cassette the fallback is
	// to create counts.
	if !anySource(o.sources, "cassette") {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--session", len(o.sessions) > 0}, {"--ignore", len(o.ignore) > 0}} {
			if f.set {
				return nil, usageErrorf("serve: %s is for cassettes, and no SOURCE is one (.db, .jsonl, .har)", f.name)
			}
		}
	}
	switch o.httpSessions {
	case "auto", "on", "off":
	default:
		return nil, usageErrorf("serve: --http-sessions %q: want auto, on or off", o.httpSessions)
	}
	if o.httpSessions != "auto" && o.http == "" {
		return nil, usageErrorf("serve: --http-sessions is for --http: no other transport has sessions to issue")
	}
	// "-" is stdout, as for curl and tar, where stdout is free: on stdio
	// it carries the MCP messages, which a line of JSON more would break.
	for _, out := range []struct{ flag, path string }{{"--report", o.report}, {"--journal", o.journal}} {
		if out.path == stdoutName && o.http == "" && o.ws == "" {
			return nil, usageErrorf("serve: %s -: on stdio, stdout carries the MCP messages; name a FILE, or serve --http or --ws", out.flag)
		}
	}
	if o.watch {
		if o.http == "" && o.ws == "" {
			return nil, usageErrorf("serve: --watch is for --http or --ws, where each new session gets the newest script; a stdio server has one session: restart it instead")
		}
		if !anySource(o.sources, "script") {
			return nil, usageErrorf("serve: --watch reloads scripts, and no SOURCE is a script (.yaml, .yml, .json)")
		}
	}
	return o, nil
}

// parseUndashed parses serve's flags and SOURCEs when no "--" came, and
// takes the first argument that is no SOURCE (by its extension) but names
// a program on PATH for the start of the fallback server's command line:
// launchers may drop a "--" they pass on (the MCP Inspector's CLI drops
// every one), and mcpspy record reads such a command line too.
func parseUndashed(fs *flag.FlagSet, args []string) (pos, command []string, err error) {
	for {
		if err := cli.Parse(fs, args); err != nil {
			return nil, nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil, nil
		}
		if _, kindErr := sourceKind(rest[0]); kindErr != nil {
			if _, err := exec.LookPath(rest[0]); err == nil {
				return pos, rest, nil
			}
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// sourceKind tells cassettes from scripts by extension. A name that says
// neither is a cassette when it holds one, or is a pipe (serve
// <(mcpspy export …)), as mcpspy reads it (store.KindOf).
func sourceKind(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".db", ".jsonl", ".har", ".zip": // a .zip: a HAR in a zip archive, as Playwright's recordHar writes
		return "cassette", nil
	case ".yaml", ".yml", ".json":
		return "script", nil
	}
	if store.Recognized(path) {
		return "cassette", nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		// Not "unknown kind": the kind is plain, and no name would help.
		return "", usageErrorf("source %q: a directory, not a file (want a cassette .db, .jsonl, .har or a .zip of a HAR, or a script .yaml, .yml or .json)", path)
	}
	return "", usageErrorf("source %q: unknown kind (want a cassette .db, .jsonl, .har or a .zip of a HAR, or a script .yaml, .yml or .json)", path)
}

// anySource says whether a SOURCE is of kind ("cassette", "script").
func anySource(sources []string, kind string) bool {
	return slices.ContainsFunc(sources, func(p string) bool { k, _ := sourceKind(p); return k == kind })
}

// loadSources loads the SOURCEs in order; watched are the scripts to
// reload, with --watch.
func loadSources(o *serveOptions) (out []replay.Source, watched []*script.Reloadable, err error) {
	for _, path := range o.sources {
		kind, _ := sourceKind(path)
		if kind == "script" {
			// A script's errors name its file (file:line:col, or the read
			// error's path): nothing to add.
			var src replay.Source
			if o.watch {
				r, err := script.LoadReloadable(path)
				if err != nil {
					return nil, nil, err
				}
				src, watched = r, append(watched, r)
			} else if src, err = script.Load(path); err != nil {
				return nil, nil, err
			}
			out = append(out, src)
			continue
		}
		var opts []replay.CassetteOption
		if len(o.sessions) > 0 {
			opts = append(opts, replay.Sessions(o.sessions...))
		}
		if len(o.ignore) > 0 {
			opts = append(opts, replay.Ignore(o.ignore...))
		}
		if o.fallback.startsEmpty(path) {
			continue // nothing recorded yet: the fallback server answers all
		}
		c, err := replay.LoadCassette(path, opts...)
		if err != nil {
			return nil, nil, err
		}
		if c.Len() == 0 && !o.fallback.enabled() {
			// Served, it would answer initialize from nothing and then
			// refuse every call: the wrong file, or one never recorded.
			return nil, nil, fmt.Errorf("%s holds no recorded request: nothing to replay (to record some, give the real server after it: mcpmock serve %s -- COMMAND)", path, path)
		}
		out = append(out, c)
	}
	return out, watched, nil
}

func runServe(ctx context.Context, args []string, s streams) error {
	o, err := parseServe(args, s)
	if err != nil {
		return err
	}
	if o.exitWithParent {
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		var watching sync.WaitGroup
		watching.Go(func() { watchParent(ctx, stop, s.Err) })
		defer func() { stop(); watching.Wait() }()
	}
	sources, watched, err := loadSources(o)
	if err != nil {
		return err
	}
	if err := reportWritable(o.report); err != nil {
		return err
	}
	var journal func(replay.Received)
	var j *journalFile
	if o.journal != "" {
		if j, err = openJournal(o.journal, s.Out); err != nil {
			return err
		}
		journal = j.write
	}
	fb, err := o.fallback.source(s)
	if err != nil {
		_ = j.close()
		return err
	}
	if fb != nil {
		sources = append(sources, fb) // last: it sees only what nothing else answered
	}
	srv, err := replay.NewServer(sources, replay.Options{
		Match: o.match, Timing: o.timing, Log: s.Err, CallTimeout: o.callTimeout,
		SessionIdle: sessionIdle(o.sessionIdle), HTTPSessions: o.httpSessions, Journal: journal,
	})
	if err != nil {
		_ = j.close()
		return usageErrorf("serve: %v", err)
	}
	if err := overridesAlone(sources); err != nil {
		_ = j.close()
		return err
	}
	if len(watched) > 0 {
		defer watchScripts(s, srv, watched)()
	}
	switch {
	case o.http != "":
		err = serveNet(ctx, s, srv, o.http, "http", srv.Handler())
	case o.ws != "":
		err = serveNet(ctx, s, srv, o.ws, "ws", srv.WebSocketHandler())
	default:
		err = srv.ServeStdio(ctx, s.In, s.Out)
		if errors.Is(err, context.Canceled) {
			err = nil // interrupted: a normal way to stop
		}
	}
	if jerr := j.close(); err == nil {
		err = jerr
	}
	var fbStats fallback.Stats
	if fb != nil {
		if ferr := fb.Close(); err == nil {
			err = ferr
		}
		fbStats = fb.Stats()
		o.fallback.summarize(s, fbStats)
	}
	if err != nil {
		return err
	}
	return finish(srv.Report(), fbStats, o, s.Out)
}

// overridesAlone refuses SOURCEs that are all override scripts (no
// server section): such a script answers only calls of what it names and
// leaves initialize to the sources after it, so with none (and no
// fallback server, which comes last in sources) every client would fail
// its handshake with a bare "Method not found: initialize".
func overridesAlone(sources []replay.Source) error {
	var names []string
	for _, src := range sources {
		w, ok := src.(interface{ Whole() bool })
		if !ok || w.Whole() {
			return nil // a recording, a whole script or the fallback introduces the server
		}
		names = append(names, src.Name())
	}
	if len(names) == 0 {
		return nil
	}
	return usageErrorf("serve: no SOURCE answers initialize: %s %s no server section, and an override answers only "+
		"the calls of the tools, prompts and resources it names, leaving the rest to the SOURCEs after it. "+
		"Add server: {name: NAME, version: VERSION} to make a script a whole server, or give a cassette after it",
		strings.Join(names, ", "), plural.Agree(len(names), "has", "have"))
}

// journalFile is --journal: one JSON line per received message, each
// written as it arrives (not buffered), so that a test reading the file
// while mcpmock runs, or after it was killed, sees every line.
type journalFile struct {
	mu   sync.Mutex
	w    io.Writer
	f    *os.File // nil for stdout, which is not closed
	name string
	err  error // the first write error, reported at exit
}

// stdoutName is the FILE of --report and --journal that means stdout.
const stdoutName = "-"

// reportWritable refuses at the start a --report that could not be
// written at the end, after the whole session had been served: one in a
// directory that is not there, or in place of a directory. The report
// is renamed into place, so it may replace a file but nothing else (a
// device, a pipe), which is refused too.
func reportWritable(path string) error {
	if path == "" || path == stdoutName {
		return nil
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err == nil && !st.IsDir() {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	if err == nil {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			err = fmt.Errorf("%s is a directory", path)
		} else if serr == nil && !st.Mode().IsRegular() {
			err = fmt.Errorf("%s is not a regular file", path)
		}
	}
	if err != nil {
		return fmt.Errorf("report: cannot write %s at exit: %w", path, err)
	}
	return nil
}

// openJournal opens the journal at path, or takes stdout for "-".
func openJournal(path string, stdout io.Writer) (*journalFile, error) {
	if path == stdoutName {
		return &journalFile{w: stdout, name: "(stdout)"}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &journalFile{w: f, f: f, name: path}, nil
}

func (j *journalFile) write(r replay.Received) {
	line, _ := json.Marshal(r) // a Received always encodes
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		_, j.err = j.w.Write(append(line, '\n'))
	}
}

// close ends the journal (nil: none) and returns the first error it met:
// a journal with lines missing must not pass for a whole one.
func (j *journalFile) close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		if err := j.f.Close(); j.err == nil {
			j.err = err
		}
	}
	if j.err != nil {
		return fmt.Errorf("journal %s: %w", j.name, j.err)
	}
	return nil
}

// sessionIdle maps the flag to replay.Options.SessionIdle, where 0 means
// the default: on the command line 0 means never.
func sessionIdle(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// serveReport is what --report writes: the replay's report, with the
// requests the fallback answered counted apart from those the sources
// matched.
type serveReport struct {
	replay.Report
	// RecordedAnew counts the requests a real server answered through the
	// fallback, now in the cassette for new sessions.
	RecordedAnew int `json:"recorded_anew"`
	// FallbackFailed lists the requests the fallback could not get
	// answered (the server did not start, could not be reached).
	FallbackFailed []string `json:"fallback_failed,omitempty"`
}

// finish writes the report and applies --strict. Requests recorded anew
// do not fail --strict (growing the cassette is the point); requests the
// fallback could not answer do, as unmatched ones.
func finish(rep replay.Report, fb fallback.Stats, o *serveOptions, stdout io.Writer) error {
	r := serveReport{Report: rep, RecordedAnew: fb.Answered, FallbackFailed: fb.Failed}
	r.Matched -= fb.Answered + len(fb.Failed) // the engine counts every answer a source gave
	if o.report != "" {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := writeReport(o.report, append(b, '\n'), stdout); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if o.strict && (len(r.FallbackFailed) > 0 || !r.Clean()) {
		msg := fmt.Sprintf("--strict: %s unmatched, %s unused", plural.Count(len(r.Unmatched), "request"), plural.Count(len(r.Unused), "recorded request"))
		if n := len(r.Interrupted); n > 0 {
			msg += fmt.Sprintf(", %s interrupted before its answer", plural.Count(n, "call"))
		}
		if n := len(r.FallbackFailed); n > 0 {
			msg += fmt.Sprintf(", %d the fallback server could not answer", n)
		}
		return errors.New(msg)
	}
	// Without --strict too: the command could not be run at all, so
	// nothing the run was to record was, and a script that checks only
	// the exit code must not take the run for a recording.
	if fb.NeverStarted != nil {
		return fmt.Errorf("fallback server %w; the %s that needed it got an error", fb.NeverStarted, plural.Count(len(fb.Failed), "request"))
	}
	return nil
}

// listenAddr binds loopback unless a host is given. Only digits are a
// bare port: a host without one (127.0.0.1, localhost) is left for
// cli.Listen to say that its port is missing, not made "127.0.0.1:localhost".
func listenAddr(addr string) string {
	if addr != "" && strings.Trim(addr, "0123456789") == "" {
		return "127.0.0.1:" + addr
	}
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}

func serveNet(ctx context.Context, s streams, srv *replay.Server, addr, scheme string, h http.Handler) error {
	ln, err := cli.Listen(listenAddr(addr))
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ConnState: srv.ConnState}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	url, everywhere := cli.ReachableAddr(listenAddr(addr), ln.Addr())
	fmt.Fprintf(s.Err, "mcpmock: listening on %s://%s/mcp\n", scheme, url)
	if everywhere {
		// The URL above is this machine's; say that others reach it too.
		fmt.Fprintf(s.Err, "mcpmock: (bound to %s: every interface of this machine)\n", ln.Addr())
	}
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	srv.Close() // ends event streams and WebSockets, so Shutdown does not wait on them
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil {
		hs.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// checkSynopsis says what check does too: it has no flags whose help
// would, and "Usage: mcpmock check SOURCE..." alone left that unsaid.
const checkSynopsis = `check SOURCE...

Loads each SOURCE as serve would, without serving, and prints "SOURCE: ok"
(for a recording, with its count of recorded requests) or what is wrong
with it, a script's errors as FILE:LINE:COL: field: message. Exit 1 if any
SOURCE does not load.`

func runCheck(args []string, s streams) error {
	fs := newFlags("check", checkSynopsis, s)
	pos, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("check: no SOURCE given")
	}
	// Every SOURCE's kind first, as serve does: a usage error found
	// half-way would drop the problems of the files checked before it,
	// after their ok lines.
	kinds := make([]string, len(pos))
	for i, path := range pos {
		if kinds[i], err = sourceKind(path); err != nil {
			return err
		}
	}
	var errs []error
	for i, path := range pos {
		if kinds[i] == "script" {
			if err := script.Check(path); err != nil {
				errs = append(errs, err)
				continue
			}
			fmt.Fprintf(s.Out, "%s: ok\n", path)
			continue
		}
		c, err := replay.LoadCassette(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c.Len() == 0 {
			fmt.Fprintf(s.Out, "%s: ok, but it holds no recorded request: nothing to replay\n", path)
			continue
		}
		fmt.Fprintf(s.Out, "%s: ok, %s\n", path, plural.Count(c.Len(), "recorded request"))
		for _, l := range c.HTTPHabits() {
			fmt.Fprintf(s.Out, "  over HTTP: %s\n", l)
		}
	}
	return errors.Join(errs...)
}

func writeReport(path string, data []byte, stdout io.Writer) error {
	if path == stdoutName {
		_, err := stdout.Write(data)
		return err
	}
	return atomicfile.Write(path, 0o600, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}
