package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// A host's MCP configuration names each server as a command to start or a
// URL: "mcpServers" in Claude Desktop's claude_desktop_config.json and in
// Cursor's and Claude Code's mcp.json, "servers" in VS Code's. To record a
// host's servers, mcpspy record goes in front of each command; doing that
// by hand for ten servers is tedious and easy to get wrong, and undoing
// it more so. WrapHostConfig does both.

// WrapOptions says how to wrap a host configuration.
type WrapOptions struct {
	// Mcpspy is the program the host is to start in place of each server:
	// an absolute path, since a host started from a desktop has its own
	// PATH.
	Mcpspy string
	// Cassette is where the servers record, an absolute path for the same
	// reason. Each server records as a session named after its key.
	Cassette string
	// Unwrap undoes an earlier wrap instead: each server mcpspy records
	// gets its own command back.
	Unwrap bool
	// ServerAt finds where the server's command starts in the arguments
	// of mcpspy record (those after "record"), ok=false when they are not
	// a stdio recording's. mcpspy record takes the command with or
	// without "--", so only its own flag parsing knows; nil looks for the
	// "--" that wrap writes.
	ServerAt func(recordArgs []string) (at int, ok bool)
}

// WrapNote says what became of one server.
type WrapNote struct {
	Server string
	Note   string
}

// ErrNotHostConfig: the file has no server list a host would read.
var ErrNotHostConfig = errors.New(`no "mcpServers" or "servers" object: not an MCP host configuration`)

// member is one member of a JSON object, kept as written.
type member struct {
	name  string
	value json.RawMessage
}

// objectMembers returns the members of the JSON object b in order; ok is
// false when b is no object.
func objectMembers(b []byte) (out []member, ok bool) {
	ok = jsonrpc.Members(b, func(name, value []byte) {
		out = append(out, member{string(name), value})
	})
	return out, ok
}

func encodeObject(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshal(m.name))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func lookup(ms []member, name string) (json.RawMessage, bool) {
	i := slices.IndexFunc(ms, func(m member) bool { return m.name == name })
	if i < 0 {
		return nil, false
	}
	return ms[i].value, true
}

// marshal is json.Marshal without its HTML escaping: wrap keeps the file
// as written, and "--q=<a&b>" is not "--q=\u003ca\u0026b\u003e" to whoever
// reads it next. Only strings and string slices come here, which encode.
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// set replaces the member name, or adds it at the end.
func set(ms []member, name string, value any) []member {
	raw := marshal(value)
	if i := slices.IndexFunc(ms, func(m member) bool { return m.name == name }); i >= 0 {
		ms[i].value = raw
		return ms
	}
	return append(ms, member{name, raw})
}

// WrapHostConfig puts mcpspy record in front of every server of config
// that the host starts as a command (or, with Unwrap, takes it away), and
// returns the configuration with everything else as it was, indented with
// two spaces, and a note for each server. A server the host reaches by URL
// cannot be wrapped in place: its note gives the mcpspy record command to
// run in front of it instead.
func WrapHostConfig(config []byte, o WrapOptions) ([]byte, []WrapNote, error) {
	if !json.Valid(config) {
		var v any
		err := json.Unmarshal(config, &v)
		return nil, nil, fmt.Errorf("not JSON (comments and trailing commas are not JSON either): %w", err)
	}
	root, ok := objectMembers(config)
	if !ok {
		return nil, nil, ErrNotHostConfig
	}
	at := slices.IndexFunc(root, func(m member) bool { return m.name == "mcpServers" || m.name == "servers" })
	if at < 0 {
		return nil, nil, ErrNotHostConfig
	}
	servers, ok := objectMembers(root[at].value)
	if !ok {
		return nil, nil, fmt.Errorf("%q is not an object", root[at].name)
	}
	var notes []WrapNote
	for i, s := range servers {
		entry, ok := objectMembers(s.value)
		if !ok {
			notes = append(notes, WrapNote{s.name, "left as it is: not an object"})
			continue
		}
		var note string
		if o.Unwrap {
			entry, note = unwrapServer(entry, o)
		} else {
			entry, note = wrapServer(s.name, entry, o)
		}
		servers[i].value = encodeObject(entry)
		notes = append(notes, WrapNote{s.name, note})
	}
	root[at].value = encodeObject(servers)
	var out bytes.Buffer
	if err := json.Indent(&out, encodeObject(root), "", "  "); err != nil {
		return nil, nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), notes, nil
}

// serverCommand reads a server's command and args; without one it
// returns why not (a remote server has none; a hand edit may have left
// one that is not a string).
func serverCommand(entry []member) (command string, args []string, why string) {
	raw, found := lookup(entry, "command")
	switch {
	case !found:
		return "", nil, "no command to start"
	case json.Unmarshal(raw, &command) != nil:
		return "", nil, "its command is not a string"
	case command == "":
		return "", nil, "its command is empty"
	}
	if raw, found := lookup(entry, "args"); found && json.Unmarshal(raw, &args) != nil {
		return "", nil, "its args are not an array of strings"
	}
	return command, args, ""
}

// recordedBy says whether a server's command line is mcpspy record's,
// and where the server's own command starts in args. A build named
// otherwise (mcpspy.exe, mcpspy-1.2) still counts.
func recordedBy(command string, args []string, o WrapOptions) (serverAt int, ok bool) {
	if !strings.HasPrefix(filepath.Base(command), "mcpspy") || len(args) == 0 || args[0] != "record" {
		return 0, false
	}
	if o.ServerAt != nil {
		at, ok := o.ServerAt(args[1:])
		if !ok || 1+at >= len(args) {
			return 0, false
		}
		return 1 + at, true
	}
	dash := slices.Index(args, "--")
	if dash < 0 || dash+1 >= len(args) {
		return 0, false
	}
	return dash + 1, true
}

func wrapServer(name string, entry []member, o WrapOptions) ([]member, string) {
	command, args, why := serverCommand(entry)
	if why != "" {
		if _, hasCommand := lookup(entry, "command"); !hasCommand {
			if raw, found := lookup(entry, "url"); found {
				var url string
				_ = json.Unmarshal(raw, &url)
				return entry, fmt.Sprintf("left as it is: the host reaches it at a URL; record it with\n    %s record -o %s --session %s --upstream %s\n  and give the host the address that prints instead", o.Mcpspy, o.Cassette, name, url)
			}
		}
		return entry, "left as it is: " + why
	}
	if _, wrapped := recordedBy(command, args, o); wrapped {
		return entry, "left as it is: mcpspy records it already"
	}
	wrapped := append([]string{"record", "-o", o.Cassette, "--session", name, "--", command}, args...)
	entry = set(entry, "command", o.Mcpspy)
	entry = set(entry, "args", wrapped)
	return entry, fmt.Sprintf("records into %s as session %q", o.Cassette, name)
}

func unwrapServer(entry []member, o WrapOptions) ([]member, string) {
	command, args, why := serverCommand(entry)
	if why != "" {
		return entry, "left as it is: mcpspy does not record it"
	}
	at, wrapped := recordedBy(command, args, o)
	if !wrapped {
		return entry, "left as it is: mcpspy does not record it"
	}
	entry = set(entry, "command", args[at])
	entry = set(entry, "args", append([]string{}, args[at+1:]...))
	return entry, "starts without mcpspy again"
}
