package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcptape/mcptape/inspector"
	"github.com/mcptape/mcptape/internal/atomicfile"
	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/internal/termsafe"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

func runLs(args []string, s streams) error {
	fs := newFlags("ls", "ls [--json] CASSETTE...|-", s)
	asJSON := fs.Bool("json", false, "print one JSON object per session instead: {\"session\":ID,\"messages\":N,\"state\":S,\"info\":{…}},\n"+
		"the state as the line says how it ended (recording, no end recorded, eof, exit(0), …), the info as\n"+
		"the session's header line in mcpspy export has it; with several CASSETTEs, \"file\" first names each one's")
	if err := cli.ParseAll(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErrorf("ls: no CASSETTE given")
	}
	if err := oneStdin("ls", fs.Args()); err != nil {
		return err
	}
	// Several cassettes (ls *.db) list as one: each line starts with its
	// file, as grep's do, and one that cannot be read does not keep the
	// others from being listed; its error comes at the end, as lint's do.
	several := fs.NArg() > 1
	var unread []error
	w := bufio.NewWriter(s.Out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // as the export writes it
	for _, path := range fs.Args() {
		infos, counts, err := listSessions(path, s.In)
		if err != nil && !several {
			return err
		}
		if err != nil {
			unread = append(unread, err)
			continue
		}
		if len(infos) == 0 {
			fmt.Fprintln(s.Err, emptyNote("ls", label(path), "session"))
		}
		for i, info := range infos {
			if !*asJSON {
				if several {
					fmt.Fprint(w, label(path), "\t")
				}
				fmt.Fprintln(w, sessionLine(info, counts[i]))
				continue
			}
			line := struct {
				File     string            `json:"file,omitempty"`
				Session  string            `json:"session"`
				Messages int               `json:"messages"`
				State    string            `json:"state"`
				Info     store.SessionInfo `json:"info"`
			}{Session: info.ID, Messages: counts[i], State: info.EndState(), Info: info}
			if several {
				line.File = label(path)
			}
			if err := enc.Encode(line); err != nil {
				return fmt.Errorf("ls: session %s: %w", info.ID, err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, err := range unread {
		fmt.Fprintf(s.Err, "mcpspy: %v\n", salvageHint(err))
	}
	if len(unread) > 0 {
		return &cli.ExitError{Code: 1}
	}
	return nil
}

// isScriptPath says whether mcpmock reads path as a script, by its name.
func isScriptPath(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// stdoutName is the -o FILE that means standard output, as it does for
// curl, tar and tshark: who writes it wants the text in a pipe, not in a
// file named "-".
const stdoutName = "-"

// outFlag is an -o FILE for text: "" (stdout) for stdoutName.
func outFlag(out string) string {
	if out == stdoutName {
		return ""
	}
	return out
}

// checkCassetteOut refuses to write a cassette under a .jsonl name: every
// command reads such a file as a JSONL export, so none could read it back.
// Nor to "-", which elsewhere means stdout: a bbolt file needs a real file.
func checkCassetteOut(cmd, flag, path string) error {
	if path == stdoutName {
		return usageErrorf("%s: %s -: a cassette is a bbolt file and cannot go to stdout: name a .db (mcpspy export writes JSONL to stdout)", cmd, flag)
	}
	if strings.EqualFold(filepath.Ext(path), ".jsonl") {
		return usageErrorf("%s: %s %s: a .jsonl is read as a JSONL export, and a cassette is a bbolt file: name it .db (mcpspy export makes a .jsonl of it)", cmd, flag, path)
	}
	if store.IsHARPath(path) {
		return usageErrorf("%s: %s %s: a %s is read as a HAR, and a cassette is a bbolt file: name it .db", cmd, flag, path, strings.ToLower(filepath.Ext(path)))
	}
	return nil
}

// listSessions reads each session's info and message count. From a .db it
// reads no message at all; a .jsonl, a HAR, or "-" (in), has to be read
// whole.
func listSessions(path string, in io.Reader) ([]store.SessionInfo, []int, error) {
	var infos []store.SessionInfo
	var counts []int
	if path == stdinName || store.WholeFile(path) {
		tape, err := loadRecording(path, in)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range tape.Sessions {
			infos = append(infos, s.Info)
			counts = append(counts, len(s.Messages))
		}
		return infos, counts, nil
	}
	err := store.View(path, func(r *store.Reader) error {
		var err error
		if infos, err = r.Sessions(); err != nil {
			return err
		}
		for _, info := range infos {
			// seqs are dense from 1, so the last one is the count, found
			// without walking the session.
			counts = append(counts, int(r.LastSeq(info.ID)))
		}
		return nil
	})
	return infos, counts, err
}

// sessionLine is one line of "mcpspy ls": id, name, transport, start,
// message count, server, protocol version, how it ended, upstream.
func sessionLine(info store.SessionInfo, messages int) string {
	name := info.Name
	if name == "" {
		name = "-"
	}
	server := "-"
	if len(info.Handshake.ServerInfo) > 0 {
		server = compactServerInfo(info.Handshake.ServerInfo)
	}
	version := info.Handshake.ProtocolVersion
	if version == "" {
		version = "-"
	}
	// A session nobody recorded, with no start in its info and no
	// message to take one from, has none to show (not the year 1).
	start := "-"
	if !info.Start.IsZero() {
		start = info.Start.Local().Format(time.DateTime)
	}
	// The names and the version are the peers' words, the upstream a
	// command line: escaped, so that each session is one line.
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s",
		info.ID, termsafe.Line(name), info.Transport, start,
		plural.Count(messages, "msg"), termsafe.Line(server), termsafe.Line(version), info.EndState(), termsafe.Line(info.Upstream))
}

func compactServerInfo(raw []byte) string {
	var si struct{ Name, Version string }
	if err := json.Unmarshal(raw, &si); err != nil || si.Name == "" {
		return strings.TrimSpace(string(raw))
	}
	if si.Version == "" {
		return si.Name
	}
	return si.Name + "@" + si.Version
}

const exportSynopsis = "export [--session ID] [--filter EXPR | --salvage | --script [--timing recorded] | --har] [--redact NAME] [--redact-value REGEX] [-o FILE] CASSETTE|-"

func runExport(args []string, s streams) error {
	fs := newFlags("export", exportSynopsis, s)
	var sessions, redact, redactValue multiFlag
	fs.Var(&sessions, "session", "export only the session `ID` (an id or a name); repeatable")
	fs.Var(&redact, "redact", "write \"[redacted]\" for the value of every member named `NAME` inside params, results and\n"+
		"errors, and for headers, query parameters and server command-line flags so named, in the messages\n"+
		"and in each session's info (upstream, handshake); repeatable. Replay matches a redacted request\n"+
		"value with any value")
	fs.Var(&redactValue, "redact-value", "write \"[redacted]\" for every member of params, results and errors whose string value\n"+
		"(or an array element of it) the Go regular expression `REGEX` matches, and for such HTTP header\n"+
		"values, query values, path segments, server arguments and notes, in the messages and in each\n"+
		"session's info (upstream, handshake, end): secrets found by what they look like\n"+
		"(sk-[A-Za-z0-9]{20,}); repeatable")
	filter := fs.String("filter", "", "export only the messages the inspector filter `EXPR` selects (docs/INSPECTOR.md), renumbered\n"+
		"as the inspector's e key writes them")
	out := fs.String("o", "", "write to `FILE` atomically instead of stdout (- is stdout)")
	salvage := fs.Bool("salvage", false, "export what a damaged cassette (.db, or .jsonl or -) still holds: go on past damage, renumber,\n"+
		"list what was lost on stderr, and exit 1 if anything was")
	asScript := fs.Bool("script", false, "write a mcpmock script (YAML) that answers as the recorded server did, instead of JSONL:\n"+
		"a start for a hand-written fake (docs/SCRIPTS.md#from-a-recording)")
	asHAR := fs.Bool("har", false, "write the HTTP sessions as an HTTP Archive (HAR 1.2), one entry per HTTP request, for browser\n"+
		"devtools and HAR viewers, instead of JSONL; other sessions are left out (docs/HAR.md)")
	timing := fs.String("timing", "none", "with --script: `recorded` makes each answer and progress step wait as long as the recorded\n"+
		"server took; none answers at once")
	if err := cli.ParseAll(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("export: want exactly one CASSETTE, got %d arguments", fs.NArg())
	}
	*out = outFlag(*out)
	if *out != "" && cli.SamePath(*out, fs.Arg(0)) {
		return usageErrorf("export: -o %s is the CASSETTE being exported; writing it would destroy it", *out)
	}
	// What is read by its name must be written under a name it is read by.
	switch ext := strings.ToLower(filepath.Ext(*out)); {
	case *asHAR && (ext == ".db" || ext == ".jsonl" || ext == ".zip"):
		return usageErrorf("export: -o %s: --har writes a HAR, and mcpspy reads a %s as a recording: name it .har", *out, ext)
	case *asScript && (ext == ".db" || ext == ".jsonl" || ext == ".har" || ext == ".zip" || ext == ".json"):
		// Not .json either: a .json script must be JSON, and this one is YAML.
		return usageErrorf("export: -o %s: --script writes a YAML script, which mcpmock reads by its .yaml or .yml name", *out)
	case !*asScript && (ext == ".yaml" || ext == ".yml" || ext == ".json"):
		what, name := "JSONL", ".jsonl"
		if *asHAR {
			what, name = "a HAR", ".har"
		}
		return usageErrorf("export: -o %s: export writes %s, and mcpmock reads a %s as a script: name it %s, or export --script", *out, what, ext, name)
	case !*asHAR && (ext == ".har" || ext == ".zip"):
		return usageErrorf("export: -o %s: export writes JSONL, and a %s is read as a HAR: name it .jsonl, or export --har", *out, ext)
	case !*asScript && ext == ".db":
		return usageErrorf("export: -o %s: export writes JSONL, and a .db is read as a cassette: name it .jsonl (mcpspy import makes a .db of it)", *out)
	}
	var opts []store.ExportOption
	var red *exportRedactor
	if len(redact) > 0 || len(redactValue) > 0 {
		var err error
		if red, err = newExportRedactor(redact, redactValue); err != nil {
			return err
		}
		opts = append(opts, red.options()...)
	} else {
		red = newCredentialCheck() // changes nothing, says what it saw
		opts = append(opts, red.options()...)
	}
	filtered := false
	fs.Visit(func(f *flag.Flag) { filtered = filtered || f.Name == "filter" })
	var scriptOpts []script.FromTapeOption
	switch {
	case *timing == "recorded" && *asScript:
		scriptOpts = append(scriptOpts, script.WithTiming())
	case *timing != "none" && *timing != "recorded":
		return usageErrorf("export: --timing %q: want recorded or none", *timing)
	case *timing == "recorded":
		return usageErrorf("export: --timing is for --script: a JSONL export keeps every message's time")
	}
	if *asHAR {
		switch {
		case *asScript:
			return usageErrorf("export: --har and --script do not go together: each writes a different file")
		case *salvage:
			return usageErrorf("export: --har does not salvage: export --salvage to a .jsonl, then export that with --har")
		case filtered:
			return usageErrorf("export: --har writes whole HTTP exchanges: pick sessions with --session, not messages with --filter")
		}
		err := exportHAR(fs.Arg(0), sessions, *out, s, red)
		if err == nil && red != nil {
			red.summary(s.Err)
		}
		return err
	}
	if *asScript {
		if filtered || *salvage {
			return usageErrorf("export: --script makes a script of whole sessions: pick them with --session, not --filter or --salvage")
		}
		if red.checkOnly {
			red = nil // a script keeps neither headers nor the upstream
		}
		err := exportScript(fs.Arg(0), sessions, *out, s, red, scriptOpts)
		if err == nil && red != nil {
			red.summary(s.Err)
		}
		return err
	}
	if *salvage {
		if filtered {
			return usageErrorf("export: --salvage and --filter do not go together: salvage, then export the salvaged file with --filter")
		}
		err := exportSalvaged(fs.Arg(0), sessions, *out, s, opts)
		if red != nil {
			red.summary(s.Err)
		}
		return err
	}
	var err error
	switch {
	case filtered:
		err = exportFiltered(fs.Arg(0), *filter, sessions, *out, s, opts)
	case fs.Arg(0) == stdinName:
		err = exportStdin(sessions, *out, s, opts)
	default:
		err = writeExport(*out, s.Out, func(w io.Writer) error { return store.Export(fs.Arg(0), w, sessions, opts...) })
	}
	if err == nil && red != nil {
		red.summary(s.Err)
	}
	if (errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrJSONL)) && !errors.Is(err, store.ErrUnsalvageable) {
		return fmt.Errorf("%w; --salvage exports what can still be read", err)
	}
	return err
}

// exportStdin writes the named sessions (all when none are named) of the
// recording on stdin (an export or a HAR) as export of the file would:
// with options (a redaction) a changed copy.
func exportStdin(sessions []string, out string, s streams, opts []store.ExportOption) error {
	tape, err := readStdin(s.In)
	if err != nil {
		return err
	}
	if err := tape.Pick(stdinLabel, sessions); err != nil {
		return err
	}
	return writeExport(out, s.Out, func(w io.Writer) error { return store.WriteJSONL(w, tape, opts...) })
}

// exportScript writes the script script.FromTape makes of the sessions
// (all when none is named), after red's blanking if any, with opts.
func exportScript(path string, sessions []string, out string, s streams, red *exportRedactor, opts []script.FromTapeOption) error {
	tape, err := loadForExport(path, sessions, red, s.In)
	if err != nil {
		return err
	}
	text, err := script.FromTape(tape, opts...)
	if err != nil {
		return err
	}
	return writeExport(out, s.Out, func(w io.Writer) error {
		_, err := w.Write(text)
		return err
	})
}

// loadForExport loads the sessions (all when none is named) of the
// cassette at path (or "-", on in) whole, after red's blanking if any.
func loadForExport(path string, sessions []string, red *exportRedactor, in io.Reader) (*store.Tape, error) {
	tape, err := loadRecording(path, in)
	if err != nil {
		return nil, err
	}
	if err := tape.Pick(label(path), sessions); err != nil {
		return nil, err
	}
	if red != nil {
		for i := range tape.Sessions {
			tape.Sessions[i].Info = *red.info(&tape.Sessions[i].Info)
			for j, m := range tape.Sessions[i].Messages {
				tape.Sessions[i].Messages[j] = red.message(m)
			}
		}
	}
	return tape, nil
}

// exportHAR writes the HTTP sessions (of those named, or all) as a HAR
// and names each session it leaves out on stderr. No HTTP session at all
// is an error, and then nothing is written.
func exportHAR(path string, sessions []string, out string, s streams, red *exportRedactor) error {
	tape, err := loadForExport(path, sessions, red, s.In)
	if err != nil {
		return err
	}
	har, skipped := store.BuildHAR(tape, strings.TrimPrefix(version, "mcpspy/"))
	var which []string
	for _, info := range skipped {
		which = append(which, info.ID+" ("+info.Transport+")")
	}
	switch {
	case len(tape.Sessions) == 0:
		return fmt.Errorf("export --har: %s holds no session", label(path))
	case len(skipped) == len(tape.Sessions):
		return fmt.Errorf("export --har: %s: no HTTP or WebSocket session to write, only %s", label(path), strings.Join(which, ", "))
	case len(skipped) > 0:
		fmt.Fprintf(s.Err, "mcpspy: export: left out of the HAR, not HTTP or WebSocket: %s\n", strings.Join(which, ", "))
	}
	if har.Unplaced > 0 {
		fmt.Fprintf(s.Err, "mcpspy: export: left out of the HAR: %s without HTTP metadata\n", plural.Count(har.Unplaced, "message"))
	}
	return writeExport(out, s.Out, har.Write)
}

// exportSalvaged writes what store.Salvage can read (for "-", what
// store.SalvageStream can read on stdin, as of a named pipe), then lists
// each loss on stderr. Anything lost is an error (exit 1), after the
// output is written whole: a script must not take a salvaged file for a
// full one.
func exportSalvaged(path string, sessions []string, out string, s streams, opts []store.ExportOption) error {
	var rep *store.SalvageReport
	err := writeExport(out, s.Out, func(w io.Writer) (err error) {
		if cassette, ok := stdinCassette(s.In); ok && path == stdinName {
			rep, err = salvageStdinCassette(cassette, w, sessions, opts)
		} else if path == stdinName {
			rep, err = store.SalvageStream(s.In, stdinLabel, w, sessions, opts...)
		} else {
			rep, err = store.Salvage(path, w, sessions, opts...)
		}
		return err
	})
	if err != nil {
		return err
	}
	path = label(path)
	if rep.Fallback != nil {
		fmt.Fprintf(s.Err, "mcpspy: export: %s: %v\n", path, rep.Fallback)
	}
	for _, d := range rep.Detours {
		fmt.Fprintf(s.Err, "mcpspy: export: %s: %v\n", path, d)
	}
	for _, l := range rep.Lost {
		fmt.Fprintf(s.Err, "mcpspy: export: %v\n", l) // its error names the file
	}
	salvaged := fmt.Sprintf("salvaged %s in %s", plural.Count(rep.Messages, "message"), plural.Count(rep.Sessions, "session"))
	if len(rep.Lost) == 0 && rep.Fallback == nil {
		fmt.Fprintf(s.Err, "mcpspy: export: %s: %s; nothing was lost\n", path, salvaged)
		return nil
	}
	ids, infos, lines, toEnd := 0, 0, 0, false
	for _, l := range rep.Lost {
		toEnd = toEnd || l.ToEnd
		switch {
		case l.Line > 0:
			lines++
		case l.Renamed:
			ids++
		case l.InfoLost():
			infos++
		}
	}
	var lost []string
	if rep.Fallback != nil {
		// What the last commit wrote is not counted: it was in pages the
		// cut took.
		lost = append(lost, fmt.Sprintf("what the last commit (txid %d) wrote", rep.Fallback.Lost))
	}
	if n := rep.LostMessages(); n > 0 {
		// A session whose end cannot be read counts only its first lost
		// seq; "lost 1 message" would hide that the rest went with it.
		if toEnd {
			lost = append(lost, "at least "+plural.Count(n, "message"))
		} else {
			lost = append(lost, plural.Count(n, "message"))
		}
	}
	if ids > 0 {
		lost = append(lost, plural.Count(ids, "session id")+" (renamed damaged-N)")
	}
	if infos > 0 {
		lost = append(lost, plural.Count(infos, "session info")+" (made anew from the messages)")
	}
	if lines > 0 {
		lost = append(lost, plural.Count(lines, "unreadable line"))
	}
	return fmt.Errorf("export: %s: %s; lost %s, listed above", path, salvaged, strings.Join(lost, " and "))
}

// salvageStdinCassette is store.Salvage of the cassette whose file is on
// stdin, named cassette, read through a link named stdin, so that the
// notes (salvaged from stdin s1 #5) and the losses name it as the user
// did.
func salvageStdinCassette(cassette string, w io.Writer, sessions []string, opts []store.ExportOption) (*store.SalvageReport, error) {
	dir, err := os.MkdirTemp("", "mcpspy-stdin-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	link := filepath.Join(dir, stdinLabel)
	if err := os.Symlink(cassette, link); err != nil {
		return nil, err
	}
	rep, err := store.Salvage(link, w, sessions, opts...)
	if rep != nil {
		for i := range rep.Lost {
			rep.Lost[i].Err = stdinNamed(rep.Lost[i].Err, link)
		}
	}
	return rep, stdinNamed(err, link)
}

// exportFiltered writes what the inspector's e key writes with nothing
// marked: the messages the filter lets through in the sessions asked for
// (all when none), through the same model and Model.Export, so the two
// never differ. Several sessions give the union of each one's view.
func exportFiltered(path, expr string, sessions []string, out string, s streams, opts []store.ExportOption) error {
	f, err := parseFilterFlag("export", expr)
	if err != nil {
		return err
	}
	m, src, err := openRecording(path, s)
	if err != nil {
		return err
	}
	if err := checkFilterSessions("export", f, m, label(path)); err != nil {
		return err
	}
	scopes, err := exportScopes(m, label(path), sessions)
	if err != nil {
		return err
	}
	var idxs []int
	for i, scope := range scopes {
		if err := m.SetScope(scope, src); err != nil {
			return err
		}
		if i == 0 { // after the scope, so a body filter reads only its session
			if err := m.SetFilter(f, src); err != nil {
				return err
			}
		}
		idxs = append(idxs, m.VisibleIndexes()...)
	}
	if len(idxs) == 0 {
		// Nothing to export is a failure, as grep's no match is: an older
		// export at -o is kept, not emptied (it may be all the user has),
		// and the exit status tells a script that it is not this one.
		return noMatch(out, unheard(f, m))
	}
	warnNoHandshake(m, idxs, s.Err)
	return writeExport(out, s.Out, func(w io.Writer) error { return m.Export(w, src, idxs, opts...) })
}

// noMatch is the error of a filtered export that selected nothing, and so
// wrote nothing: it says what became of out, after why (unheard).
func noMatch(out, why string) error {
	none := "export: the filter matched no message" + why
	if out == "" {
		return fmt.Errorf("%s; nothing written", none)
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s; %s left as it was", none, out)
	}
	return fmt.Errorf("%s; %s not written", none, out)
}

// unheard is what a filter that matched nothing asks for that the
// recording does not hold, a method or tool name mistyped, say, as the end
// of the message that says so (`: no message has tool "ecoh" (did you mean
// echo?)`); "" when there is nothing to say.
func unheard(f *inspector.Filter, m *inspector.Model) string {
	if why := f.Unheard(m); why != "" {
		return ": " + why
	}
	return ""
}

// writeExport runs write on stdout, or, given -o FILE, on a temp file
// that replaces FILE only once write has succeeded.
func writeExport(out string, stdout io.Writer, write func(io.Writer) error) error {
	if out == "" {
		return write(stdout)
	}
	return atomicfile.Write(out, 0o600, func(f *os.File) error { return write(f) })
}

// exportScopes turns --session values (id or name, as for the plain
// export) into the model's session indexes, each once, in cassette order;
// none means all (-1).
func exportScopes(m *inspector.Model, path string, sessions []string) ([]int, error) {
	if len(sessions) == 0 {
		return []int{-1}, nil
	}
	want := make([]bool, len(m.Sessions))
	for _, n := range sessions {
		found := false
		for i, ss := range m.Sessions {
			if ss.Info.Named(n) {
				want[i], found = true, true
			}
		}
		if !found {
			return nil, store.NoSession(path, n, sessionInfos(m))
		}
	}
	var scopes []int
	for i, ok := range want {
		if ok {
			scopes = append(scopes, i)
		}
	}
	return scopes, nil
}

func runImport(args []string, s streams) error {
	fs := newFlags("import", "import -o CASSETTE [--redact NAME] [--redact-value REGEX] [--no-redact] FILE.jsonl|FILE.har|-", s)
	out := fs.String("o", "", "the `CASSETTE` to write (required); created if missing")
	var redact, redactValue multiFlag
	fs.Var(&redact, "redact", "a HAR only: also store as \"[redacted]\" the value of every header, query parameter and message\n"+
		"member (inside params, results and errors) with this `NAME`; repeatable")
	fs.Var(&redactValue, "redact-value", "a HAR only: also store as \"[redacted]\" every message member, header value, query parameter\n"+
		"value and path segment whose string value the Go regular expression `REGEX` matches; repeatable")
	noRedact := fs.Bool("no-redact", false, "a HAR only: store its credentials as they are (they are redacted by default, as mcpspy record does)")
	if err := cli.ParseAll(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("import: -o CASSETTE is required")
	}
	if fs.NArg() != 1 {
		return usageErrorf("import: want exactly one FILE.jsonl or FILE.har, got %d arguments", fs.NArg())
	}
	if cli.SamePath(*out, fs.Arg(0)) {
		return usageErrorf("import: -o %s is the file being imported; name another cassette", *out)
	}
	if err := checkCassetteOut("import", "-o", *out); err != nil {
		return err
	}
	if _, ok := stdinCassette(s.In); ok && fs.Arg(0) == stdinName {
		return fmt.Errorf("import: %s is a cassette already; import reads a JSONL export or a HAR (mcpspy export makes one)", stdinLabel)
	}
	if fs.Arg(0) == stdinName {
		return importPiped(stdinLabel, s.In, *out, redact, redactValue, *noRedact, s)
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return fmt.Errorf("import: %s is a directory, not a JSONL export or a HAR", fs.Arg(0))
	}
	if store.KindOf(fs.Arg(0)) == store.KindStream {
		// import <(mcpspy export …): read once, as stdin is; the sniffing
		// below would eat the start of it.
		return importPiped(fs.Arg(0), f, *out, redact, redactValue, *noRedact, s)
	}
	if isHAR(f, fs.Arg(0)) {
		return importHAR(fs.Arg(0), *out, redact, redactValue, *noRedact, s)
	}
	for _, set := range []struct {
		name string
		set  bool
	}{{"redact", len(redact) > 0}, {"redact-value", len(redactValue) > 0}, {"no-redact", *noRedact}} {
		if set.set {
			return usageErrorf("import: --%s is for a HAR file; a JSONL export was redacted when it was recorded (mcpspy export --redact blanks more)", set.name)
		}
	}
	tape, err := store.ReadJSONL(f, fs.Arg(0))
	if err != nil && store.Check(fs.Arg(0)) == nil {
		return fmt.Errorf("import: %s is a cassette already; import reads a JSONL export (mcpspy export makes one)", fs.Arg(0))
	}
	if err != nil && isScriptPath(fs.Arg(0)) {
		// Not the JSONL error and its salvage hint: nothing is damaged.
		return fmt.Errorf("import: %s is not a JSONL export: a %s file is an mcpmock script (mcpmock serve %s serves it); import reads a JSONL export or a HAR", fs.Arg(0), filepath.Ext(fs.Arg(0)), fs.Arg(0))
	}
	if err != nil {
		return err
	}
	return importTape(tape, fs.Arg(0), *out, s)
}

// importPiped imports the recording in the pipe in, named name (stdin,
// /dev/fd/63): a JSONL export, or a HAR redacted as a .har is, read as
// every command reads a pipe (store.ImportStream).
func importPiped(name string, in io.Reader, out string, redact, redactValue []string, noRedact bool, s streams) error {
	opts, err := harImportOptions(redact, redactValue, noRedact)
	if err != nil {
		return err
	}
	got, err := store.ImportStream(in, name, opts)
	if err != nil {
		return err
	}
	if got.HAR != nil {
		return recordHAR(got.HAR, name, out, s)
	}
	if len(redact) > 0 || len(redactValue) > 0 || noRedact {
		return usageErrorf("import: --redact, --redact-value and --no-redact are for a HAR; a JSONL export was redacted when it was recorded (mcpspy export --redact blanks more)")
	}
	return importTape(got.Tape, name, out, s)
}

// importTape adds tape, read from name, to the cassette out, and says
// what it took and under which ids.
func importTape(tape *store.Tape, name, out string, s streams) error {
	// Build the cassette beside the target and rename it into place, so a
	// failed import leaves nothing half-written. Importing into an existing
	// cassette adds to a copy of it.
	ids, err := addToCassette(out, tape)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.Err, importSummary(tape.Sessions, name))
	for i, id := range ids {
		// Every recording starts at s1, so ids clash; say where each went.
		if was := tape.Sessions[i].Info.ID; id != was {
			fmt.Fprintf(s.Err, "mcpspy: import: session %s of %s is %s in %s (%s was taken)\n", was, name, id, out, was)
		}
	}
	return nil
}

func copyExisting(path string, dst *os.File) error {
	src, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	// An empty file is a new cassette, as record -o and mcpmock
	// --record-new take it: mktemp makes one to be written.
	if st, err := src.Stat(); err == nil && st.Size() == 0 {
		return nil
	}
	if err := store.Check(path); err != nil {
		return err
	}
	_, err = dst.ReadFrom(src)
	return err
}

// sessionInfos is the info of every session the model holds.
func sessionInfos(m *inspector.Model) []store.SessionInfo {
	infos := make([]store.SessionInfo, len(m.Sessions))
	for i, ss := range m.Sessions {
		infos[i] = ss.Info
	}
	return infos
}

// checkFilterSessions refuses a --filter whose session term names a
// session the recording at path does not hold, as --session refuses one:
// a typo there would select nothing, and say only that nothing matched.
func checkFilterSessions(cmd string, f *inspector.Filter, m *inspector.Model, path string) error {
	for _, n := range f.Sessions() {
		if !slices.ContainsFunc(m.Sessions, func(ss inspector.Session) bool { return ss.Info.Named(n) }) {
			return fmt.Errorf("%s: --filter session:%s: %w", cmd, n, store.NoSession(path, n, sessionInfos(m)))
		}
	}
	return nil
}

// parseFilterFlag parses a --filter value for cmd; a bad one is a usage
// error naming the term ("export: --filter \"colour:red\": unknown key").
func parseFilterFlag(cmd, expr string) (*inspector.Filter, error) {
	f, err := inspector.ParseFilter(expr)
	if err != nil {
		// ParseFilter's errors start "filter: " and then name the term.
		return nil, usageErrorf("%s: --filter %s", cmd, strings.TrimPrefix(err.Error(), "filter: "))
	}
	return f, nil
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// warnNoHandshake names each exported session that keeps its initialize
// request but not the answer: mcpmock replays that as recorded, an
// initialize left unanswered, and a client would wait for it. (An export
// without the request at all is fine: mcpmock then answers initialize from
// the session info.)
func warnNoHandshake(m *inspector.Model, idxs []int, w io.Writer) {
	in := make(map[int]bool, len(idxs))
	exported := map[string]bool{}
	for _, idx := range idxs {
		in[idx] = true
		if r, ok := m.ByIndex(idx); ok {
			exported[r.Session] = true
		}
	}
	lost := map[string]bool{}
	var order []string
	for idx := range m.Len() {
		r, _ := m.ByIndex(idx)
		if !exported[r.Session] || r.Kind != jsonrpc.Request || r.Method != "initialize" || r.Dir != store.C2S {
			continue
		}
		if !in[idx] || r.Pair < 0 || in[r.Pair] {
			continue
		}
		if !lost[r.Session] {
			lost[r.Session] = true
			order = append(order, r.Session)
		}
	}
	for _, id := range order {
		fmt.Fprintf(w, "mcpspy: export: session %s keeps the initialize request but not its answer; mcpmock would leave a client's initialize unanswered (keep both, or neither)\n", id)
	}
}
