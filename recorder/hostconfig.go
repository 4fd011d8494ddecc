package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/shellword"
)

// A host's MCP configuration names each server as a command to start or a
// URL: "mcpServers" in Claude Desktop's claude_desktop_config.json and in
// Cursor's and Claude Code's mcp.json, "servers" in VS Code's mcp.json,
// "mcp": {"servers"} in VS Code's user settings.json, and, besides the
// top-level "mcpServers", "projects": {DIR: {"mcpServers"}} in Claude
// Code's ~/.claude.json, which keeps the servers "claude mcp add" adds
// for one project directory there. To record a host's servers, mcpspy
// record goes in front of each command; doing that by hand for ten
// servers is tedious and easy to get wrong, and undoing it more so.
// WrapHostConfig does both.

// WrapOptions says how to wrap a host configuration.
type WrapOptions struct {
	// Mcpspy is the program the host is to start in place of each server:
	// an absolute path, since a host started from a desktop has its own
	// PATH.
	Mcpspy string
	// Cassette is where the servers record, an absolute path for the same
	// reason. Each server records as a session named after its key; one
	// of a Claude Code project as KEY@PROJECT (see projectLabels).
	Cassette string
	// Unwrap undoes an earlier wrap instead: each server mcpspy records
	// gets its own command back.
	Unwrap bool
	// ServerAt finds where the server's command starts in the arguments
	// of mcpspy record (those after "record"), ok=false when they are not
	// a stdio recording's, and whether they set KeepArgsFlag. mcpspy
	// record takes the command with or without "--", so only its own
	// flag parsing knows; nil reads the form wrap writes: the flag right
	// after "record", the command after "--".
	ServerAt func(recordArgs []string) (at int, keepArgs, ok bool)
}

// KeepArgsFlag is the flag of mcpspy record that wrap writes for a server
// whose entry has an empty "args" list of its own, so that unwrap keeps
// that list and drops only one that wrap added: the wrapped entries look
// the same otherwise. It goes where the host passes it to mcpspy, since
// a host may reject a key of the entry it does not know; record ignores
// it. A configuration an older mcpspy wrapped lacks it, and unwrap drops
// an args list it empties there, as it always did.
const KeepArgsFlag = "--unwrap-keeps-args"

// WrapNote says what became of one server.
type WrapNote struct {
	Server string
	// Project is the directory of the Claude Code project whose
	// "mcpServers" list the server, "" for a server of the whole file.
	Project string
	Note    string
	// RecordsInto is the cassette the server records into once the
	// configuration is written: WrapOptions.Cassette for a server wrap
	// wrapped, the -o of one mcpspy recorded already (it is left as it
	// is), "" otherwise.
	RecordsInto string
}

// ErrNotHostConfig: the file has no server list a host would read. It
// names every list wrap knows, for whoever has a file of another shape.
var ErrNotHostConfig = errors.New(`not an MCP host configuration: no server list of a shape wrap knows: ` +
	`"mcpServers" (Claude Desktop, Cursor, Claude Code), "servers" (VS Code's mcp.json), ` +
	`"mcp": {"servers"} (VS Code's settings.json), "projects": {DIR: {"mcpServers"}} (Claude Code's ~/.claude.json)`)

// marshal is json.Marshal without its HTML escaping: wrap keeps the file
// as written, and "--q=<a&b>" is not "--q=\u003ca\u0026b\u003e" to whoever
// reads it next. Only strings come here, which encode.
func marshal(v string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// WrapHostConfig puts mcpspy record in front of every server of config
// that the host starts as a command (or, with Unwrap, takes it away), and
// returns the configuration and a note for each server. config may be
// JSONC (comments, trailing commas): every byte of it that is not a
// server's command or args stays as it was. A server the host reaches by
// URL cannot be wrapped in place: its note gives the mcpspy record
// command to run in front of it instead.
func WrapHostConfig(config []byte, o WrapOptions) ([]byte, []WrapNote, error) {
	plain, err := stripJSONC(config)
	if err != nil {
		return nil, nil, fmt.Errorf("not JSON: %w", err)
	}
	if !json.Valid(plain) {
		var v any
		err := json.Unmarshal(plain, &v)
		return nil, nil, fmt.Errorf("not JSON: %w", err)
	}
	lists, err := serverLists(plain)
	if err != nil {
		return nil, nil, err
	}
	var notes []WrapNote
	var edits []edit
	for _, l := range lists {
		servers, _ := objectFields(plain, l.value) // serverLists found an object
		for _, s := range servers {
			note := WrapNote{Server: s.name, Project: l.project}
			entry, ok := objectFields(plain, s.value)
			if !ok {
				note.Note = "left as it is: not an object"
				notes = append(notes, note)
				continue
			}
			c := hostEntry{config, plain, entry}
			var change *commandChange
			if o.Unwrap {
				change, note.Note = unwrapServer(c, o)
			} else {
				session := s.name
				if l.project != "" {
					session += "@" + l.label
				}
				change, note.Note, note.RecordsInto = wrapServer(session, c, o)
			}
			if change != nil {
				edits = append(edits, c.edits(*change)...)
			}
			notes = append(notes, note)
		}
	}
	return splice(config, edits), notes, nil
}

// serverList is one object of servers in a host configuration, found in
// plain; project is the Claude Code project it belongs to ("" for the
// whole file's) and label how that project's sessions are told apart.
type serverList struct {
	value          span
	project, label string
}

// serverLists finds every server list of a shape wrap knows in plain, in
// the file's order, so that edits come in order of offset. A list named
// as a host names it that is not an object is an error, where it is: the
// host cannot read it either. Members named otherwise ("mcp" of another
// tool, a project without servers) are not wrap's business.
func serverLists(plain []byte) ([]serverList, error) {
	start := skipSpace(plain, 0)
	root, ok := objectFields(plain, span{start, endOfValue(plain, start)})
	if !ok {
		return nil, ErrNotHostConfig
	}
	var lists []serverList
	list := func(f field, where, project, label string) error {
		if plain[f.value.start] != '{' {
			return fmt.Errorf("%s is not an object", where)
		}
		lists = append(lists, serverList{f.value, project, label})
		return nil
	}
	for _, f := range root {
		switch f.name {
		case "mcpServers", "servers":
			if err := list(f, marshal(f.name), "", ""); err != nil {
				return nil, err
			}
		case "mcp":
			mcp, _ := objectFields(plain, f.value)
			if i := slices.IndexFunc(mcp, func(f field) bool { return f.name == "servers" }); i >= 0 {
				if err := list(mcp[i], `"mcp"."servers"`, "", ""); err != nil {
					return nil, err
				}
			}
		case "projects":
			projects, _ := objectFields(plain, f.value)
			dirs := make([]string, len(projects))
			for i, p := range projects {
				dirs[i] = p.name
			}
			labels := projectLabels(dirs)
			for i, p := range projects {
				members, _ := objectFields(plain, p.value)
				if j := slices.IndexFunc(members, func(f field) bool { return f.name == "mcpServers" }); j >= 0 {
					if err := list(members[j], `"projects".`+marshal(p.name)+`."mcpServers"`, p.name, labels[i]); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if len(lists) == 0 {
		return nil, ErrNotHostConfig
	}
	return lists, nil
}

// projectLabels names each Claude Code project directory for the
// sessions of its servers, KEY@LABEL: the same server added to two
// projects records as two sessions a reader can tell apart. The label is
// the directory's base name ("app" for /home/me/app); where another
// project of the file has the same base name, it is as many of the last
// elements of the path as tell the two apart ("me/app", "you/app"), and
// the path as written when none do (/app beside /srv/app). Paths are
// read with / and \ both, for a file Claude Code wrote on Windows.
func projectLabels(dirs []string) []string {
	elems := make([][]string, len(dirs))
	for i, d := range dirs {
		elems[i] = strings.FieldsFunc(d, func(r rune) bool { return r == '/' || r == '\\' })
	}
	last := func(es []string, n int) string { return strings.Join(es[max(0, len(es)-n):], "/") }
	labels := make([]string, len(dirs))
	for i, es := range elems {
		labels[i] = dirs[i]
		for n := 1; n <= len(es); n++ {
			clash := false
			for j, other := range elems {
				clash = clash || j != i && last(other, n) == last(es, n)
			}
			if !clash {
				labels[i] = last(es, n)
				break
			}
		}
	}
	return labels
}

// hostEntry is one server's object in a host configuration: its fields,
// found in plain (the configuration made JSON by stripJSONC), and the
// configuration as written, which edits go into.
type hostEntry struct {
	config, plain []byte
	fields        []field
}

func (e hostEntry) lookup(name string) (field, bool) {
	i := slices.IndexFunc(e.fields, func(f field) bool { return f.name == name })
	if i < 0 {
		return field{}, false
	}
	return e.fields[i], true
}

// raw is a field's value as JSON (its comments blanked).
func (e hostEntry) raw(f field) []byte { return e.plain[f.value.start:f.value.end] }

// written is the JSON text at s as the configuration has it. For a
// string it is what the host decodes, escapes and all: comments are
// outside strings, so the configuration and its plain copy agree there.
func (e hostEntry) written(s span) string { return string(e.config[s.start:s.end]) }

// commandChange is what wrap or unwrap does to a server's command line:
// the command is replaced, and arguments are put in front of the args or
// taken from their front. command and prepend are JSON text: the server's
// command moves between command and args as the user wrote it, escapes
// and all, so that unwrap gives back the bytes wrap took.
type commandChange struct {
	command  string
	prepend  []string
	dropArgs int
	// keepArgs: when taking dropArgs leaves no args, the list stays,
	// empty, as the user wrote it; otherwise wrap added it, and it goes.
	keepArgs bool
}

// edits turns a change into edits of the configuration as written, in
// order of offset, laid out as the entry is: arguments put in front of a
// list of one per line go one per line, at the same indentation.
func (e hostEntry) edits(c commandChange) []edit {
	command, _ := e.lookup("command") // serverCommand found it
	edits := []edit{{command.value, c.command}}
	args, found := e.lookup("args")
	var elems []span
	if found {
		elems, _ = arrayElements(e.plain, args.value) // serverCommand found an array
	}
	switch {
	case len(c.prepend) > 0 && !found:
		edits = append(edits, e.addArgs(`"args": [`+strings.Join(c.prepend, ", ")+"]")...)
	case len(c.prepend) > 0 && len(elems) == 0:
		inside := args.value.start + 1
		edits = append(edits, edit{span{inside, inside}, strings.Join(c.prepend, ", ")})
	case len(c.prepend) > 0:
		sep := ", "
		if brk, ok := newLine(e.config, elems[0].start); ok {
			sep = "," + brk
		}
		edits = append(edits, edit{span{elems[0].start, elems[0].start}, strings.Join(c.prepend, sep) + sep})
	case c.dropArgs < len(elems):
		edits = append(edits, edit{span{elems[0].start, elems[c.dropArgs].start}, ""})
	case c.dropArgs > 0:
		// The server has no arguments of its own: the args wrap added
		// go, unless the user's entry had an empty list (keepArgs) or a
		// comment is in the way; then the list is emptied.
		var drop []edit
		if !c.keepArgs {
			drop = e.removeArgs(args)
		}
		if drop == nil {
			drop = []edit{{span{elems[0].start, elems[len(elems)-1].end}, ""}}
		}
		edits = append(edits, drop...)
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return a.where.start - b.where.start })
	return edits
}

// addArgs adds the member after the entry's last one. When that member
// has a line of its own, so does the new one, after it and the comment
// that ends its line (the comment is about it); a trailing comma is kept
// trailing.
func (e hostEntry) addArgs(member string) []edit {
	last := e.fields[len(e.fields)-1]
	end := span{last.value.end, last.value.end}
	brk, ownLine := newLine(e.config, last.key.start)
	if !ownLine {
		return []edit{{end, ", " + member}}
	}
	comma, eol := lineRest(e.config, last.value.end)
	switch {
	case eol < 0: // a block comment or more JSON follows on the line
		return []edit{{end, "," + brk + member}}
	case comma >= 0:
		return []edit{{span{eol, eol}, brk + member + ","}}
	}
	return []edit{{end, ","}, {span{eol, eol}, brk + member}}
}

// removeArgs takes out the args member as addArgs put it in, with the
// comma that came with it, or returns nil when a comment is in the way.
func (e hostEntry) removeArgs(args field) []edit {
	i := slices.IndexFunc(e.fields, func(f field) bool { return f.key == args.key })
	if i == 0 {
		return nil
	}
	prev := e.fields[i-1]
	if gap := e.config[prev.value.end:args.key.start]; len(bytes.Trim(gap, ", \t\r\n")) == 0 && bytes.Count(gap, []byte(",")) == 1 {
		return []edit{{span{prev.value.end, args.value.end}, ""}}
	}
	brk, ownLine := newLine(e.config, args.key.start)
	if !ownLine {
		return nil
	}
	comma, eol := lineRest(e.config, args.value.end)
	if eol < 0 || len(bytes.Trim(e.config[args.value.end:eol], ", \t")) > 0 {
		return nil
	}
	line := args.key.start - len(brk)
	if comma >= 0 {
		return []edit{{span{line, comma + 1}, ""}}
	}
	// The last member goes: the comma before it goes too. Comments
	// are blank in plain, so the comma is the first thing after prev.
	before := skipSpace(e.plain, prev.value.end)
	return []edit{{span{before, before + 1}, ""}, {span{line, args.value.end}, ""}}
}

// lineRest reads the rest of the line after offset i of config: where a
// comma is (-1: none), and where the line break is, past blanks and a //
// comment; eol is -1 when anything else comes first.
func lineRest(config []byte, i int) (comma, eol int) {
	blanks := func(j int) int {
		for j < len(config) && (config[j] == ' ' || config[j] == '\t') {
			j++
		}
		return j
	}
	comma, j := -1, blanks(i)
	if j < len(config) && config[j] == ',' {
		comma, j = j, blanks(j+1)
	}
	if bytes.HasPrefix(config[j:], []byte("//")) {
		if nl := bytes.IndexByte(config[j:], '\n'); nl >= 0 {
			j += nl
		} else {
			j = len(config)
		}
	}
	switch {
	case j < len(config) && config[j] == '\n' && j > i && config[j-1] == '\r':
		return comma, j - 1
	case j < len(config) && (config[j] == '\n' || config[j] == '\r'):
		return comma, j
	}
	return comma, -1
}

func quoteAll(ss []string) []string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = marshal(s)
	}
	return q
}

// serverCommand reads a server's command and args; without one it
// returns why not (a remote server has none; a hand edit may have left
// one that is not a string).
func serverCommand(entry hostEntry) (command string, args []string, why string) {
	f, found := entry.lookup("command")
	switch {
	case !found:
		return "", nil, "no command to start"
	case json.Unmarshal(entry.raw(f), &command) != nil:
		return "", nil, "its command is not a string"
	case command == "":
		return "", nil, "its command is empty"
	}
	if f, found := entry.lookup("args"); found && (json.Unmarshal(entry.raw(f), &args) != nil || args == nil) {
		return "", nil, "its args are not an array of strings"
	}
	return command, args, ""
}

// recordedBy says whether a server's command line is mcpspy record's,
// where the server's own command starts in args, and whether record has
// KeepArgsFlag. A build named otherwise (mcpspy.exe, mcpspy-1.2) still
// counts.
func recordedBy(command string, args []string, o WrapOptions) (serverAt int, keepArgs, ok bool) {
	if !strings.HasPrefix(filepath.Base(command), "mcpspy") || len(args) == 0 || args[0] != "record" {
		return 0, false, false
	}
	if o.ServerAt != nil {
		at, keepArgs, ok := o.ServerAt(args[1:])
		if !ok || 1+at >= len(args) {
			return 0, false, false
		}
		return 1 + at, keepArgs, true
	}
	dash := slices.Index(args, "--")
	if dash < 0 || dash+1 >= len(args) {
		return 0, false, false
	}
	return dash + 1, args[1] == KeepArgsFlag, true
}

// wrapServer returns the change that wraps a server's entry to record as
// session, the note that says what became of it, and the cassette it
// records into.
func wrapServer(session string, entry hostEntry, o WrapOptions) (_ *commandChange, note, into string) {
	command, args, why := serverCommand(entry)
	if why != "" {
		if _, hasCommand := entry.lookup("command"); !hasCommand {
			if f, found := entry.lookup("url"); found {
				return nil, urlServerNote(session, entry, f, o), ""
			}
		}
		return nil, "left as it is: " + why, ""
	}
	if at, _, wrapped := recordedBy(command, args, o); wrapped {
		// Not into --cassette: where it recorded before.
		if into := recordOutput(args[1:at]); into != "" {
			return nil, "left as it is: mcpspy records it already, into " + into, into
		}
		return nil, "left as it is: mcpspy records it already", ""
	}
	record := []string{"record"}
	if args != nil && len(args) == 0 {
		record = append(record, KeepArgsFlag)
	}
	record = append(record, "-o", o.Cassette, "--session", session, "--")
	f, _ := entry.lookup("command") // serverCommand found it
	change := &commandChange{command: marshal(o.Mcpspy), prepend: append(quoteAll(record), entry.written(f.value))}
	return change, fmt.Sprintf("records into %s as session %q", o.Cassette, session), o.Cassette
}

// urlServerNote is the note for a server the host reaches at the URL in
// field url of entry: the mcpspy record command to run in front of it.
// The entry's "headers" go with it as --header flags: they are most often
// the server's credentials (Authorization), and without them the server
// answers the recording 401. The note is the one place they are written
// to, and it says so: the user needs them to run the command.
func urlServerNote(session string, entry hostEntry, url field, o WrapOptions) string {
	var u string
	_ = json.Unmarshal(entry.raw(url), &u)
	command := []string{shellword.Word(o.Mcpspy), "record", "-o", shellword.Word(o.Cassette), "--session", shellword.Word(session)}
	headers, why := entryHeaders(entry)
	placeholder := false
	for _, h := range headers {
		command = append(command, "--header", shellword.Word(h))
		placeholder = placeholder || strings.Contains(h, "${")
	}
	command = append(command, "--upstream", shellword.Word(u))
	note := "left as it is: the host reaches it at a URL; record it with\n    " + strings.Join(command, " ") +
		"\n  and give the host the address that prints instead"
	switch {
	case why != "":
		note += "\n  (" + why + ": add what the server needs as --header 'NAME: VALUE')"
	case len(headers) > 0:
		note += "\n  (this command holds the entry's headers, credentials included, for mcpspy to send to the server;\n" +
			"  they are written nowhere else, and never recorded"
		if placeholder {
			note += "; a ${…} in them is the host's to fill in: put its value in its place"
		}
		note += ")"
	}
	return note
}

// entryHeaders returns the "headers" of a server's entry, each as
// "NAME: VALUE", in the entry's order; why says what is wrong with
// headers that are not an object of strings.
func entryHeaders(entry hostEntry) (headers []string, why string) {
	f, found := entry.lookup("headers")
	if !found {
		return nil, ""
	}
	fields, ok := objectFields(entry.plain, f.value)
	if !ok {
		return nil, "its headers are not an object"
	}
	for _, h := range fields {
		var value string
		if json.Unmarshal(entry.raw(h), &value) != nil {
			return nil, fmt.Sprintf("its header %q is not a string", h.name)
		}
		headers = append(headers, h.name+": "+value)
	}
	return headers, ""
}

// recordOutput returns the cassette mcpspy record's flags (those before
// the server's command) name with -o, as Go's flag package reads it
// (-o X, -o=X, --o X, --o=X); "" when they name none.
func recordOutput(flags []string) string {
	out := ""
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		if f == "--" {
			break
		}
		switch {
		case f == "-o" || f == "--o":
			if i+1 < len(flags) {
				out = flags[i+1]
				i++
			}
		case strings.HasPrefix(f, "-o="):
			out = f[len("-o="):]
		case strings.HasPrefix(f, "--o="):
			out = f[len("--o="):]
		}
	}
	return out
}

func unwrapServer(entry hostEntry, o WrapOptions) (*commandChange, string) {
	command, args, why := serverCommand(entry)
	if why != "" {
		return nil, "left as it is: mcpspy does not record it"
	}
	at, keepArgs, wrapped := recordedBy(command, args, o)
	if !wrapped {
		return nil, "left as it is: mcpspy does not record it"
	}
	f, _ := entry.lookup("args") // recordedBy found the server's command there
	elems, _ := arrayElements(entry.plain, f.value)
	return &commandChange{command: entry.written(elems[at]), dropArgs: at + 1, keepArgs: keepArgs}, "starts without mcpspy again"
}
