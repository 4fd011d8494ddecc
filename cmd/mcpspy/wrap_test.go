package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// mcpspy wrap, as a host would use it: the go-sdk server in a host
// configuration is started as the wrapped entry says (the mcpspy binary
// in front of it), answers go-sdk's client through it, and is recorded as
// a session named after its key; wrap --unwrap, in place, gives the entry
// back. Both forms of configuration: Claude Desktop's and Cursor's
// "mcpServers", and VS Code's "servers" (with its "type" and "inputs").
func TestMcpspy_Wrap(t *testing.T) {
	t.Parallel()
	spy := peertest.Binary(t, "mcpspy")
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	for _, form := range []struct{ key, entry, rest string }{
		{"mcpServers", `{"command": ` + quote(server) + `, "env": {"X": "1"}}`, `"other": true`},
		// An empty args list puts recorder.KeepArgsFlag into the command
		// line the host starts.
		{"servers", `{"type": "stdio", "command": ` + quote(server) + `, "args": [], "env": {"X": "1"}}`, `"inputs": [], "other": true`},
	} {
		t.Run(form.key, func(t *testing.T) {
			testWrap(t, spy, server, form.key, `{"`+form.key+`": {"echoer": `+form.entry+`}, `+form.rest+`}`)
		})
	}
}

func testWrap(t *testing.T, spy, server, key, original string) {
	dir := t.TempDir()
	config := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(config, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "host.db")
	_, stderr := runText(t, "wrap", "--mcpspy", spy, "--cassette", db, "-o", config, config)
	if !strings.Contains(string(stderr), `echoer: records into `+db+` as session "echoer"`) {
		t.Errorf("stderr: %s", stderr)
	}
	entry := serverEntry(t, config, key, "echoer")

	// The host starts the entry's command line.
	echoThroughEntry(t, entry, db, "echoer", "through the wrap")

	runText(t, "wrap", "--unwrap", "-o", config, config)
	back := serverEntry(t, config, key, "echoer")
	if back.Command != server || len(back.Args) != 0 || back.Env["X"] != "1" {
		t.Errorf("after --unwrap: %+v", back)
	}
	if b, _ := os.ReadFile(config); string(b) != original {
		t.Errorf("after --unwrap:\n%s\nwant\n%s", b, original)
	}
}

// mcpspy wrap of Claude Code's ~/.claude.json wraps the servers "claude
// mcp add" keeps per project too, not only the user's at the top: the
// same server in two projects whose directories are both named "app"
// records as two sessions, SERVER@src/app and SERVER@work/app, and wrap
// says which project each came from. The go-sdk server, started as the
// wrapped project entry says, answers go-sdk's client through mcpspy and
// lands in the cassette under that name; --unwrap gives the file back
// byte for byte.
func TestMcpspy_WrapClaudeCodeProjects(t *testing.T) {
	t.Parallel()
	spy := peertest.Binary(t, "mcpspy")
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	dir := t.TempDir()
	config := filepath.Join(dir, ".claude.json")
	src, work := filepath.Join(dir, "src", "app"), filepath.Join(dir, "work", "app")
	entry := `{"type": "stdio", "command": ` + quote(server) + `, "args": [], "env": {}}`
	original := `{
  "numStartups": 3,
  "mcpServers": {
    "echoer": ` + entry + `
  },
  "projects": {
    ` + quote(src) + `: {
      "allowedTools": [],
      "mcpServers": {
        "echoer": ` + entry + `
      },
      "hasTrustDialogAccepted": true
    },
    ` + quote(work) + `: {
      "allowedTools": [],
      "mcpServers": {
        "echoer": ` + entry + `
      }
    }
  }
}
`
	if err := os.WriteFile(config, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "host.db")
	_, stderr := runText(t, "wrap", "--mcpspy", spy, "--cassette", db, "-o", config, config)
	for _, want := range []string{
		"mcpspy: wrap: echoer: records into " + db + ` as session "echoer"` + "\n",
		"mcpspy: wrap: echoer (project " + src + "): records into " + db + ` as session "echoer@src/app"` + "\n",
		"mcpspy: wrap: echoer (project " + work + "): records into " + db + ` as session "echoer@work/app"` + "\n",
	} {
		if !strings.Contains(string(stderr), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	// Claude Code, started in work/app, starts that project's entry.
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	var wrapped struct {
		Projects map[string]struct{ McpServers map[string]hostEntry }
	}
	if err := json.Unmarshal(b, &wrapped); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	echoThroughEntry(t, wrapped.Projects[work].McpServers["echoer"], db, "echoer@work/app", "from work/app")

	runText(t, "wrap", "--unwrap", "-o", config, config)
	if back, _ := os.ReadFile(config); string(back) != original {
		t.Errorf("after --unwrap:\n%s\nwant\n%s", back, original)
	}
}

// mcpspy wrap takes VS Code's user settings.json, whose servers are under
// "mcp": {"servers"}: it wraps them there, keeps the rest of the file
// (JSONC, settings of every other kind) as it was, and --unwrap gives the
// file back byte for byte.
func TestMcpspy_WrapVSCodeSettings(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "settings.json")
	original := "{\n\t// look\n\t\"editor.fontSize\": 14,\n\t\"mcp\": {\n\t\t\"inputs\": [],\n\t\t\"servers\": {\n\t\t\t\"git\": {\"type\": \"stdio\", \"command\": \"uvx\", \"args\": [\"mcp-server-git\"]},\n\t\t},\n\t},\n\t\"workbench.colorTheme\": \"Default Dark Modern\", /* theme */\n}\n"
	if err := os.WriteFile(config, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "w.db")
	_, stderr := runText(t, "wrap", "--mcpspy", "/usr/local/bin/mcpspy", "--cassette", db, "-o", config, config)
	if want := "mcpspy: wrap: git: records into " + db + ` as session "git"` + "\n"; !strings.Contains(string(stderr), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	wrapped, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(original, `"command": "uvx", "args": [`, `"command": "/usr/local/bin/mcpspy", "args": ["record", "-o", `+quote(db)+`, "--session", "git", "--", "uvx", `, 1)
	if string(wrapped) != want {
		t.Errorf("wrapped:\n%s\nwant:\n%s", wrapped, want)
	}
	runText(t, "wrap", "--unwrap", "-o", config, config)
	if back, _ := os.ReadFile(config); string(back) != original {
		t.Errorf("after --unwrap:\n%q\nwant\n%q", back, original)
	}
}

// echoThroughEntry starts a wrapped entry's command line as a host
// would, has go-sdk's client call the go-sdk server's echo tool with text
// through it, and fails unless the cassette db then holds that one call,
// as a session named session.
func echoThroughEntry(t *testing.T, entry hostEntry, db, session, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(entry.Command, entry.Args...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting %q %q: %v", entry.Command, entry.Args, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != text {
		t.Errorf("echo: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 1 || tape.Sessions[0].Info.Name != session || !strings.Contains(messagesText(tape.Sessions[0]), quote(text)) {
		t.Errorf("the cassette holds %+v, want one session %q with %q", tape.Sessions, session, text)
	}
}

type hostEntry struct {
	Type    string
	Command string
	Args    []string
	Env     map[string]string
}

// serverEntry reads the entry name of a host configuration's servers
// (under key), and fails unless the configuration's other members are
// kept.
func serverEntry(t *testing.T, config, key, name string) hostEntry {
	t.Helper()
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]json.RawMessage
	var entries map[string]hostEntry
	if err := json.Unmarshal(b, &c); err != nil || json.Unmarshal(c[key], &entries) != nil || string(c["other"]) != "true" {
		t.Fatalf("%v (other kept: %s)\n%s", err, c["other"], b)
	}
	e := entries[name]
	if key == "servers" && e.Type != "stdio" {
		t.Errorf("VS Code's entry lost its type: %+v", e)
	}
	return e
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func messagesText(s store.TapeSession) string {
	var b strings.Builder
	for _, m := range s.Messages {
		b.Write(m.Frame)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestMcpspy_WrapBadInput(t *testing.T) {
	dir := t.TempDir()
	notConfig := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(notConfig, []byte(`{"theme": "dark"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	broken, empty := filepath.Join(dir, "broken.json"), filepath.Join(dir, "empty.json")
	if err := os.WriteFile(broken, []byte("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"node\"},,\n  }\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unclosed := filepath.Join(dir, "unclosed.json")
	if err := os.WriteFile(unclosed, []byte("{\n  \"mcpServers\": {\n    /* \"a\": {\"command\": \"node\"},\n  }\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"wrap"}, "want exactly one CONFIG"},
		{[]string{"wrap", broken}, "wrap: " + broken + ":3:30: not JSON: invalid character ',' looking for beginning of object key string"},
		{[]string{"wrap", unclosed}, "wrap: " + unclosed + ":3:5: not JSON: a /* comment is never closed"},
		{[]string{"wrap", empty}, "wrap: " + empty + ": not JSON: the file is empty"},
		{[]string{"wrap", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"wrap", notConfig}, `settings.json: not an MCP host configuration: no server list of a shape wrap knows: "mcpServers" (Claude Desktop, Cursor, Claude Code), "servers" (VS Code's mcp.json), "mcp": {"servers"} (VS Code's settings.json), "projects": {DIR: {"mcpServers"}} (Claude Code's ~/.claude.json)`},
		{[]string{"wrap", "-o", "x.db", "--cassette", "x.db", notConfig}, "is also the --cassette"},
	} {
		err := run(context.Background(), tc.args, streams{In: strings.NewReader(""), Out: &strings.Builder{}, Err: &strings.Builder{}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// A server a configuration already starts through mcpspy record, "--" or
// not (record takes either), is left as it is by wrap, not recorded
// twice, and unwrap gives its own command back.
func TestMcpspy_WrapKnowsRecordWithoutDashes(t *testing.T) {
	tests := []struct {
		name     string
		args     []string // mcpspy's, in the configuration
		wantBack []string // the server's command line after --unwrap
		// wantInto is the cassette wrap says the server records into
		// (its own -o, not --cassette), "" for record's default.
		wantInto string
	}{
		{"with --", []string{"record", "-o", "x.db", "--session", "a", "--", "node", "server.js", "--port", "1"}, []string{"node", "server.js", "--port", "1"}, "x.db"},
		{"without --", []string{"record", "--o=x.db", "--session", "a", "node", "server.js", "--port", "1"}, []string{"node", "server.js", "--port", "1"}, "x.db"},
		{"without --, the server's own --", []string{"record", "--fsync", "npx", "-y", "pkg", "--", "-o", "y"}, []string{"npx", "-y", "pkg", "--", "-o", "y"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			config := filepath.Join(dir, "mcp.json")
			args, _ := json.Marshal(tt.args)
			original := `{"mcpServers": {"s": {"command": "/usr/local/bin/mcpspy", "args": ` + string(args) + `}}, "other": true}`
			if err := os.WriteFile(config, []byte(original), 0o600); err != nil {
				t.Fatal(err)
			}
			_, stderr := runText(t, "wrap", "--mcpspy", "/usr/local/bin/mcpspy", "--cassette", filepath.Join(dir, "w.db"), "-o", config, config)
			note := "s: left as it is: mcpspy records it already\n"
			if tt.wantInto != "" {
				note = "s: left as it is: mcpspy records it already, into " + tt.wantInto + "\n"
			}
			if !strings.Contains(string(stderr), note) {
				t.Errorf("wrap says %s, want %q", stderr, note)
			}
			// Nothing records into --cassette: the hint names where the
			// server does record, if anywhere.
			if strings.Contains(string(stderr), "w.db") || tt.wantInto != "" && !strings.Contains(string(stderr), "inspect --follow "+tt.wantInto+"\n") {
				t.Errorf("wrap's hint names a cassette nothing records into: %s", stderr)
			}
			if strings.Contains(string(stderr), "restart the host") {
				t.Errorf("wrap changed nothing, yet says to restart the host: %s", stderr)
			}
			if e := serverEntry(t, config, "mcpServers", "s"); e.Command != "/usr/local/bin/mcpspy" || !slices.Equal(e.Args, tt.args) {
				t.Errorf("wrap changed the entry: %+v", e)
			}
			runText(t, "wrap", "--unwrap", "-o", config, config)
			e := serverEntry(t, config, "mcpServers", "s")
			if back := append([]string{e.Command}, e.Args...); !slices.Equal(back, tt.wantBack) {
				t.Errorf("after --unwrap: %q, want %q", back, tt.wantBack)
			}
		})
	}
}

// wrap -o of a configuration kept as a symbolic link (dotfiles) writes
// the file the link leads to, keeping its mode, and the link stays.
func TestMcpspy_WrapThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "mcp.json")
	if err := os.Mkdir(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte(`{"mcpServers": {"s": {"command": "node"}}, "other": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(real, 0o644); err != nil { // past the umask
		t.Fatal(err)
	}
	config := filepath.Join(dir, "host.json")
	if err := os.Symlink(filepath.Join("dotfiles", "mcp.json"), config); err != nil {
		t.Fatal(err)
	}
	runText(t, "wrap", "--mcpspy", "/usr/local/bin/mcpspy", "--cassette", filepath.Join(dir, "w.db"), "-o", config, config)
	if st, err := os.Lstat(config); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a link: %v %v", config, st.Mode(), err)
	}
	if e := serverEntry(t, real, "mcpServers", "s"); e.Command != "/usr/local/bin/mcpspy" {
		t.Errorf("the file the link leads to was not wrapped: %+v", e)
	}
	if st, _ := os.Stat(real); st.Mode().Perm() != 0o644 {
		t.Errorf("%s mode %v, want 0644 as it was", real, st.Mode().Perm())
	}
}

// A path flag that would be written wrongly into every server's entry,
// breaking them all at the host's next start, is a usage error.
func TestMcpspy_WrapPathFlags(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(config, []byte(`{"mcpServers": {"a": {"command": "node"}}, "other": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"empty --cassette", []string{"--cassette", ""}, "wrap: --cassette wants a path, got an empty one"},
		{"--cassette=~/", []string{"--cassette=~/x.db"}, `wrap: --cassette ~/x.db: the shell did not expand ~ (it does not after "="); write --cassette=$HOME/x.db`},
		{"empty --mcpspy", []string{"--mcpspy", ""}, "wrap: --mcpspy wants a path, got an empty one"},
		{"--mcpspy=~/", []string{"--mcpspy=~/go/bin/mcpspy"}, `wrap: --mcpspy ~/go/bin/mcpspy: the shell did not expand ~ (it does not after "="); write --mcpspy=$HOME/go/bin/mcpspy`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb strings.Builder
			err := run(context.Background(), append(append([]string{"wrap"}, tt.args...), config), streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			if code := cli.ExitCode("mcpspy", err, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, errb.String(), tt.want)
			}
			if out.Len() > 0 {
				t.Errorf("wrote a configuration:\n%s", out.String())
			}
		})
	}
}

// Hosts start servers from a directory of their own: a --mcpspy given as
// a path is written absolute, as --cassette is; a bare name stays, for
// the host to find on its PATH.
func TestMcpspy_WrapMcpspyPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("mcp.json", []byte(`{"mcpServers": {"a": {"command": "node"}}, "other": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, mcpspy, want string
	}{
		{"relative path", "./bin/mcpspy", filepath.Join(dir, "bin", "mcpspy")},
		{"path under a directory", "bin/mcpspy", filepath.Join(dir, "bin", "mcpspy")},
		{"absolute path", "/usr/local/bin/mcpspy", "/usr/local/bin/mcpspy"},
		{"bare name", "mcpspy", "mcpspy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runText(t, "wrap", "--mcpspy", tt.mcpspy, "--cassette", "w.db", "-o", "out.json", "mcp.json")
			e := serverEntry(t, "out.json", "mcpServers", "a")
			if e.Command != tt.want {
				t.Errorf("command %q, want %q", e.Command, tt.want)
			}
			if wantCassette := filepath.Join(dir, "w.db"); len(e.Args) < 3 || e.Args[2] != wantCassette {
				t.Errorf("args %q, want the cassette %s", e.Args, wantCassette)
			}
		})
	}
}

// A JSONC configuration (VS Code's mcp.json), with a byte order mark, is
// wrapped and unwrapped in place; unwrap gives back the file byte for
// byte, and a file wrap cannot read is left as it was.
func TestMcpspy_WrapJSONC(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "mcp.json")
	original := "\uFEFF{\n\t// my servers\n\t\"servers\": {\n\t\t\"a\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"node\", /* local */\n\t\t},\n\t},\n\t\"other\": true,\n}\n"
	if err := os.WriteFile(config, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	runText(t, "wrap", "--mcpspy", "/usr/local/bin/mcpspy", "--cassette", filepath.Join(dir, "w.db"), "-o", config, config)
	wrapped, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(original, `"command": "node", /* local */`, `"command": "/usr/local/bin/mcpspy",`+"\n\t\t\t"+`"args": ["record", "-o", `+quote(filepath.Join(dir, "w.db"))+`, "--session", "a", "--", "node"], /* local */`, 1)
	if string(wrapped) != want {
		t.Errorf("wrapped:\n%s\nwant:\n%s", wrapped, want)
	}
	runText(t, "wrap", "--unwrap", "-o", config, config)
	if back, _ := os.ReadFile(config); string(back) != original {
		t.Errorf("unwrapped:\n%q\nwant:\n%q", back, original)
	}

	broken := original + "/* open"
	if err := os.WriteFile(config, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"wrap", "--mcpspy", "/usr/local/bin/mcpspy", "-o", config, config}, streams{In: strings.NewReader(""), Out: &strings.Builder{}, Err: &strings.Builder{}})
	if err == nil || !strings.Contains(err.Error(), config+":11:1: not JSON: a /* comment is never closed") {
		t.Errorf("%v", err)
	}
	if after, _ := os.ReadFile(config); string(after) != broken {
		t.Errorf("the file changed on error:\n%q", after)
	}
}

// wrap then --unwrap, in place, gives back the user's file byte for
// byte, with record's own flag parsing finding the server's command: an
// empty args list stays, a server without args gets none, and escapes
// JSON does not need stay in the command and args.
func TestMcpspy_WrapRoundTrip(t *testing.T) {
	tests := []struct{ name, config string }{
		{"empty args", `{"mcpServers": {"a": {"command": "node", "args": []}}, "other": true}`},
		{"absent args", `{"mcpServers": {"a": {"command": "node"}}, "other": true}`},
		{"escaped command", `{"mcpServers": {"a": {"command": "C:\/bin\/srv", "args": ["x"]}}, "other": true}`},
		{"escaped command, no args", `{"mcpServers": {"a": {"command": "\u0073rv"}}, "other": true}`},
		{"escaped args", `{"mcpServers": {"a": {"command": "srv", "args": ["\u002dv", "a\/b"]}}, "other": true}`},
		{"JSONC with comments", "{\n  // mine\n  \"servers\": {\n    \"a\": {\n      \"command\": /* local */ \"n\\/ode\",\n      \"args\": [ /* none */ ],\n    },\n  },\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			config := filepath.Join(dir, "mcp.json")
			if err := os.WriteFile(config, []byte(tt.config), 0o600); err != nil {
				t.Fatal(err)
			}
			runText(t, "wrap", "--mcpspy", "/usr/local/bin/mcpspy", "--cassette", filepath.Join(dir, "w.db"), "-o", config, config)
			wrapped, _ := os.ReadFile(config)
			runText(t, "wrap", "--unwrap", "-o", config, config)
			if back, _ := os.ReadFile(config); string(back) != tt.config {
				t.Errorf("wrap then --unwrap:\n got %q\nwant %q\nwrapped %q", back, tt.config, wrapped)
			}
		})
	}
}

// record's flag parsing says where the server's command starts and
// whether wrap marked an empty args list, however the flags are written;
// a session so named is no mark.
func TestMcpspy_RecordServerAtKeepArgs(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		at           int
		keepArgs, ok bool
	}{
		{"as wrap writes it", []string{"--unwrap-keeps-args", "-o", "/c.db", "--session", "a", "--", "node"}, 6, true, true},
		{"=true, among the flags, no --", []string{"-o", "/c.db", "-unwrap-keeps-args=true", "node"}, 3, true, true},
		{"not given", []string{"-o", "/c.db", "--session", "a", "--", "node"}, 5, false, true},
		{"a session so named", []string{"--session", "--unwrap-keeps-args", "--", "node"}, 3, false, true},
		{"no command", []string{"--unwrap-keeps-args", "--"}, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, keepArgs, ok := recordServerAt(tt.args)
			if at != tt.at || keepArgs != tt.keepArgs || ok != tt.ok {
				t.Errorf("recordServerAt(%q) = %d, %v, %v; want %d, %v, %v", tt.args, at, keepArgs, ok, tt.at, tt.keepArgs, tt.ok)
			}
		})
	}
}
