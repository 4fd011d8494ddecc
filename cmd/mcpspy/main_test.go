package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// notesFile writes dir/notes.db, a file named like a cassette that is
// not one, and returns its path.
func notesFile(tb testing.TB, dir string) string {
	tb.Helper()
	path := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(path, []byte("just some notes\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Each mistake gets one clear line naming what and where, and the right
// exit code: 2 for usage, 1 for runtime.
func TestMcpspy_BadInput(t *testing.T) {
	spy := peertest.Binary(t, "mcpspy")
	dir := t.TempDir()
	notCassette := notesFile(t, dir)
	script, jsonScript := shippedCassette(t, "script-basic.yaml"), shippedCassette(t, "script-json.json")
	dirJSONL, dirHAR := filepath.Join(dir, "d.jsonl"), filepath.Join(dir, "d.har")
	for _, d := range []string{dirJSONL, dirHAR} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A path whose parent is a file cannot be created, even by root.
	unwritable := filepath.Join(notCassette, "c.db")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantMsg  []string
	}{
		{"no command", nil, 2, []string{"no command given"}},
		{"unknown command", []string{"recrod"}, 2, []string{`unknown command "recrod"`, "; did you mean record?"}},
		{"flags before the command", []string{"-o", "x.db", "record", "--", "srv"}, 2, []string{`"-o x.db" comes before the command record: flags go after it (record -o x.db …)`}},
		{"nothing to record", []string{"record"}, 2, []string{"nothing to record"}},
		{"no command after --", []string{"record", "--"}, 2, []string{"no server command after --"}},
		{"bad flag", []string{"record", "--bogus", "--", "true"}, 2, []string{"flag provided but not defined: -bogus\n"}},
		{"bad flag near one", []string{"record", "--upstrem", "http://x"}, 2, []string{"flag provided but not defined: -upstrem; did you mean --upstream?\n"}},
		{"server command does not exist", []string{"record", "-o", filepath.Join(dir, "b.db"), "--", "no-such-mcp-server-xyz"}, 1, []string{`"no-such-mcp-server-xyz"`, "not found"}},
		{"empty server command", []string{"record", "-o", filepath.Join(dir, "x2.db"), "--", ""}, 1, []string{`server command "": exec: "": executable file not found`}},
		{"empty -o", []string{"record", "-o", "", "--", "true"}, 2, []string{"record: -o wants a CASSETTE path, got an empty one\n"}},
		{"file is not a cassette", []string{"record", "-o", notCassette, "--", "true"}, 1, []string{notCassette, "not an mcptape cassette"}},
		{"unwritable cassette path", []string{"record", "-o", unwritable, "--", "true"}, 1, []string{unwritable, "not a directory"}},
		{"ls of a missing file", []string{"ls", filepath.Join(dir, "missing.db")}, 1, []string{"missing.db", "does not exist"}},
		{"ls of a non-cassette", []string{"ls", notCassette}, 1, []string{notCassette, "not an mcptape cassette"}},
		{"export without a cassette", []string{"export"}, 2, []string{"want exactly one CASSETTE"}},
		{"import without -o", []string{"import", "x.jsonl"}, 2, []string{"-o CASSETTE is required"}},
		{"--no-redact in stdio mode", []string{"record", "--no-redact", "--", "true"}, 2, []string{"--no-redact is for HTTP and WebSocket recording"}},
		{"record --redact without a name", []string{"record", "--redact", "", "--", "true"}, 2, []string{"record: --redact wants a member, header or parameter name"}},
		{"record --redact-value empty", []string{"record", "--redact-value", "", "--", "true"}, 2, []string{`record: --redact-value "": an empty pattern matches every value`}},
		{"record --redact-value that does not compile", []string{"record", "--redact-value", "sk-(", "--", "true"}, 2, []string{`record: --redact-value "sk-(": error parsing regexp`}},
		{"--insecure in stdio mode", []string{"record", "--insecure", "--", "true"}, 2, []string{"--insecure is for HTTP and WebSocket recording"}},
		{"--header in stdio mode", []string{"record", "--header", "Authorization: Bearer x", "--", "true"}, 2, []string{"--header is for HTTP and WebSocket recording"}},
		{"record --header without a colon", []string{"record", "--header", "Authorization Bearer x", "--upstream", "http://127.0.0.1:1/mcp"}, 2, []string{`record: --header "Authorization …": want NAME: VALUE (no colon after the name)`}},
		{"--grace of 0", []string{"record", "--grace", "0s", "--", "true"}, 2, []string{"record: --grace 0s: want a time above 0"}},
		{"--grace with --upstream", []string{"record", "--grace", "1s", "--upstream", "http://127.0.0.1:1/mcp"}, 2, []string{"--grace is for a stdio server"}},
		{"export --redact without a name", []string{"export", "--redact", "", notCassette}, 2, []string{"--redact wants a member, header or parameter name"}},
		{"record: --upstream and a command", []string{"record", "--upstream", "http://127.0.0.1:1/mcp", "--", "true"}, 2, []string{"give either --upstream URL or -- COMMAND, not both"}},
		{"record: --upstream and a command without --", []string{"record", "--upstream", "http://127.0.0.1:1/mcp", "true"}, 2, []string{"give either --upstream URL or -- COMMAND, not both"}},
		{"record: --upstream without a scheme", []string{"record", "--upstream", "localhost:3001/mcp"}, 2, []string{`record: --upstream "localhost:3001/mcp" has no scheme: did you mean http://localhost:3001/mcp (ws:// for WebSocket)?`}},
		{"record: --upstream host and port only", []string{"record", "--upstream", "127.0.0.1:3001"}, 2, []string{`has no scheme: did you mean http://127.0.0.1:3001 `}},
		{"record: --upstream of another scheme", []string{"record", "--upstream", "ftp://127.0.0.1:3001/"}, 2, []string{`record: --upstream "ftp://127.0.0.1:3001/": unknown scheme "ftp" (want http, https, ws or wss)`}},
		{"record: --upstream without a host", []string{"record", "--upstream", "http:///mcp"}, 2, []string{`record: --upstream "http:///mcp" has no host`}},
		{"record: --listen with a command", []string{"record", "--listen", "127.0.0.1:0", "--", "true"}, 2, []string{"--listen needs --upstream URL"}},
		{"record into a .jsonl", []string{"record", "-o", filepath.Join(dir, "r.jsonl"), "--", "true"}, 2, []string{"record: -o " + filepath.Join(dir, "r.jsonl") + ": a .jsonl is read as a JSONL export, and a cassette is a bbolt file: name it .db"}},
		{"import into a .jsonl", []string{"import", "-o", filepath.Join(dir, "i.jsonl"), "x.jsonl"}, 2, []string{"import: -o " + filepath.Join(dir, "i.jsonl") + ": a .jsonl is read as a JSONL export"}},
		{"rerun into a .jsonl", []string{"rerun", "-o", "out.jsonl", notCassette, "--", "true"}, 2, []string{"rerun: -o out.jsonl: a .jsonl is read as a JSONL export"}},
		{"wrap into a .jsonl cassette", []string{"wrap", "--cassette", "w.jsonl", "mcp.json"}, 2, []string{"wrap: --cassette w.jsonl: a .jsonl is read as a JSONL export"}},
		{"export into a .db", []string{"export", "-o", "out.db", notCassette}, 2, []string{"export: -o out.db: export writes JSONL, and a .db is read as a cassette: name it .jsonl"}},
		{"export --script into a .jsonl", []string{"export", "--script", "-o", "fake.jsonl", notCassette}, 2, []string{"export: -o fake.jsonl: --script writes a YAML script, which mcpmock reads by its .yaml or .yml name"}},
		{"export --script into a .json", []string{"export", "--script", "-o", "fake.json", notCassette}, 2, []string{"export: -o fake.json: --script writes a YAML script, which mcpmock reads by its .yaml or .yml name"}},
		{"export JSONL into a .yaml", []string{"export", "-o", "x.yaml", notCassette}, 2, []string{"export: -o x.yaml: export writes JSONL, and mcpmock reads a .yaml as a script: name it .jsonl, or export --script"}},
		{"export a HAR into a .json", []string{"export", "--har", "-o", "x.json", notCassette}, 2, []string{"export: -o x.json: export writes a HAR, and mcpmock reads a .json as a script: name it .har, or export --script"}},
		{"diff --ignore of an empty name", []string{"diff", "--ignore", "", notCassette, notCassette}, 2, []string{"diff: --ignore wants a member name, got an empty one"}},
		{"rerun --ignore of an empty name", []string{"rerun", "--ignore", "", notCassette, "--", "true"}, 2, []string{"rerun: --ignore wants a member name, got an empty one"}},
		{"ls of a script", []string{"ls", script}, 1, []string{script + ": not an mcptape cassette (not a bbolt database: a .yaml file is an mcpmock script, and a recording is a cassette .db, a JSONL export .jsonl or a HAR .har)\n"}},
		{"show of a JSON script", []string{"show", jsonScript}, 1, []string{jsonScript + ": not an mcptape cassette (not a bbolt database: a .json file is an mcpmock script"}},
		{"import of a script", []string{"import", "-o", filepath.Join(dir, "s.db"), script}, 1, []string{"import: " + script + " is not a JSONL export: a .yaml file is an mcpmock script (mcpmock serve " + script + " serves it); import reads a JSONL export or a HAR\n"}},
		{"ls of a directory named .jsonl", []string{"ls", dirJSONL}, 1, []string{dirJSONL + ": not an mcptape cassette (a directory, not a file)\n"}},
		{"show of a directory named .har", []string{"show", dirHAR}, 1, []string{dirHAR + ": not an mcptape cassette (a directory, not a file)\n"}},
		{"export --salvage of a directory named .jsonl", []string{"export", "--salvage", dirJSONL}, 1, []string{dirJSONL + ": not an mcptape cassette (a directory, not a file)\n"}},
		{"import of a directory", []string{"import", "-o", filepath.Join(dir, "d2.db"), dirJSONL}, 1, []string{"import: " + dirJSONL + " is a directory, not a JSONL export or a HAR\n"}},
		{"ls of no cassette", []string{"ls"}, 2, []string{"ls: no CASSETTE given"}},
		{"import of two files", []string{"import", "-o", filepath.Join(dir, "d.db"), "a.jsonl", "b.jsonl"}, 2, []string{"import: want exactly one FILE.jsonl or FILE.har, got 2 arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(spy, tt.args...)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			msg := stderr.String()
			for _, w := range tt.wantMsg {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q does not contain %q", msg, w)
				}
			}
			if lines := strings.Count(strings.TrimSpace(lastBlock(msg)), "\n"); lines > 0 && tt.wantCode == 1 {
				t.Errorf("runtime error takes %d lines, want one:\n%s", lines+1, msg)
			}
		})
	}
	// A file that was not a cassette is left as it was.
	if b, _ := os.ReadFile(notCassette); string(b) != "just some notes\n" {
		t.Errorf("the non-cassette file was changed: %q", b)
	}
	// A record that failed before its session began made no cassette.
	for _, name := range []string{"b.db", "x2.db", "s.db"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stat %s: %v; want no cassette made", name, err)
		}
	}
}

// lastBlock drops the usage text a usage error prints before its line.
func lastBlock(s string) string {
	if i := strings.LastIndex(s, "\n\n"); i >= 0 {
		return s[i+2:]
	}
	return s
}

func TestMcpspy_ExportImportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	shipped := filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.db")
	first := filepath.Join(dir, "first.jsonl")
	db := filepath.Join(dir, "back.db")
	second := filepath.Join(dir, "second.jsonl")
	var out, errs bytes.Buffer
	s := streams{In: strings.NewReader(""), Out: &out, Err: &errs}
	for _, args := range [][]string{
		{"export", "-o", first, shipped},
		{"import", "-o", db, first},
		{"export", "-o", second, db},
	} {
		if err := run(context.Background(), args, s); err != nil {
			t.Fatalf("mcpspy %v: %v\n%s", args, err, errs.String())
		}
	}
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("export → import → export differs (%d vs %d bytes)", len(a), len(b))
	}
	// The shipped JSONL twin is exactly the export of the shipped cassette.
	twin, _ := os.ReadFile(filepath.Join(peertest.ModuleRoot(), "cassettes", "everything-stdio.jsonl"))
	if !bytes.Equal(a, twin) {
		t.Errorf("cassettes/everything-stdio.jsonl is not the export of everything-stdio.db: run make cassettes")
	}
	// Importing the same session again gives it the next free id, says
	// so, and keeps it whole.
	errs.Reset()
	if err := run(context.Background(), []string{"import", "-o", db, first}, s); err != nil {
		t.Fatalf("second import: %v", err)
	}
	if want := "mcpspy: import: session s1 of " + first + " is s2 in " + db + " (s1 was taken)\n"; !strings.Contains(errs.String(), want) {
		t.Errorf("second import: stderr %q, want it to say %q", errs.String(), want)
	}
	out.Reset()
	if err := run(context.Background(), []string{"export", "--session", "s2", db}, s); err != nil {
		t.Fatal(err)
	}
	if want := strings.ReplaceAll(string(a), `{"session":"s1",`, `{"session":"s2",`); out.String() != want {
		t.Errorf("the session imported again as s2 exports otherwise than s1 with its id changed")
	}
	// ls names the session and what the handshake told.
	out.Reset()
	if err := run(context.Background(), []string{"ls", db}, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "mcp-servers/everything@2.0.0") || !strings.Contains(out.String(), "2025-11-25") {
		t.Errorf("ls: %s", out.String())
	}
	if st, err := os.Stat(first); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("export -o file mode: %v %v", st.Mode(), err)
	}
	if st, err := os.Stat(db); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("import -o cassette mode: %v %v", st.Mode(), err)
	}
}

// An output that is the input would replace the cassette being read with
// its own export: refused, and the file is left as it was.
func TestMcpspy_OutputOverInput(t *testing.T) {
	dir := t.TempDir()
	copyOf := func(name string) string { return peertest.ShippedAs(t, name, dir, name) }
	db, jsonl := copyOf("everything-stdio.db"), copyOf("everything-stdio.jsonl")
	before := map[string][]byte{}
	for _, p := range []string{db, jsonl} {
		before[p], _ = os.ReadFile(p)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"export a .db over itself", []string{"export", "-o", db, db}, "export: -o " + db + " is the CASSETTE being exported"},
		{"export --filter a .jsonl over itself", []string{"export", "--filter", "tool:echo", "-o", jsonl, jsonl}, "export: -o " + jsonl + " is the CASSETTE being exported"},
		{"import a .jsonl into itself", []string{"import", "-o", jsonl, jsonl}, "import: -o " + jsonl + " is the file being imported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCaptured(tt.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tt.want)
			}
		})
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Errorf("%s changed", p)
		}
	}
}

// A command that writes its output through a temporary file names the
// output in its errors, never the temporary file.
func TestMcpspy_WriteErrorsNameOutput(t *testing.T) {
	dir := t.TempDir()
	broken := brokenExport(t)
	taken := filepath.Join(dir, "taken")
	if err := os.Mkdir(taken, 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"import over a directory", []string{"import", "-o", taken, broken}, "mcpspy: write " + taken + ": cannot replace it (a directory, not a file)\n"},
		{"export over a directory", []string{"export", "-o", taken, broken}, "mcpspy: write " + taken + ": cannot replace it (a directory, not a file)\n"},
		{"export --filter over a directory", []string{"export", "--filter", "lint", "-o", taken, broken}, "mcpspy: write " + taken + ": cannot replace it (a directory, not a file)\n"},
		{"export --redact over a directory", []string{"export", "--redact", "name", "-o", taken, broken}, "mcpspy: write " + taken + ": cannot replace it (a directory, not a file)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCaptured(tt.args...)
			if code != 1 || !strings.HasPrefix(errOut, tt.want) || strings.Contains(errOut, ".tmp-") {
				t.Errorf("exit %d, stderr %q; want exit 1 and stderr starting %q, naming no temporary file", code, errOut, tt.want)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

// Every flag the README's Commands block gives mcpspy is one the command
// takes (its -h lists it).
func TestMcpspy_READMECommands(t *testing.T) {
	peertest.CheckREADMEFlags(t, "mcpspy", func(sub string) string {
		code, out, errOut := runCaptured(sub, "-h")
		if code != 0 {
			t.Errorf("mcpspy %s -h: exit %d", sub, code)
		}
		return out + errOut
	})
}

// record -- COMMAND stores the command line with its secrets hidden, and
// the server still gets them as given: printf, as the server, prints back
// each argument it was started with.
func TestMcpspy_RecordRedactsCommandLine(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
		args  []string
	}{
		{"flag then value", nil, []string{"--api-key", "s3cret", "--verbose"}},
		{"flag=value", nil, []string{"--token=s3cret", "--port=8080"}},
		{"NAME=VALUE", nil, []string{"GITHUB_TOKEN=s3cret", "serve"}},
		{"password in a URL", nil, []string{"https://user:s3cret@db.example/x"}},
		{"a password inside a NAME=VALUE's name", nil, []string{"DB_PASSWORD=s3cret", "serve"}},
		{"a password inside a flag's name", nil, []string{"--db-password", "s3cret"}},
		// mcp-remote's way to give a remote server its token.
		{"a header argument", nil, []string{"mcp-remote", "https://h.example/mcp", "--header", "Authorization: Bearer s3cret"}},
		{"a header argument with no space", nil, []string{"--header", "X-Api-Key:s3cret"}},
		// Named like nothing secret: only --redact-value finds these.
		{"a bare argument --redact-value matches", []string{"--redact-value", "s3cret"}, []string{"serve", "s3cret-0123"}},
		{"a NAME=VALUE --redact-value matches", []string{"--redact-value", "s3cret"}, []string{"--tenant=s3cret-0123", "serve"}},
		// --redact's names hide a flag's value, as the credential names do.
		{"a flag --redact names", []string{"--redact", "tenant"}, []string{"--tenant", "s3cret", "--tenant=s3cret"}},
		{"a URL's query parameter --redact names", []string{"--redact", "tenant"}, []string{"https://db.example/mcp?tenant=s3cret"}},
		// A URL argument loses what the upstream URL would.
		{"a URL's query parameter named like a credential", nil, []string{"https://db.example/mcp?api_key=s3cret&page=2"}},
		{"a URL's path segment --redact-value matches", []string{"--redact-value", "s3cret"}, []string{"https://db.example/s3cret/mcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "argv.db")
			args := append(append(append([]string{"record", "-o", db}, tt.flags...), "--", "printf", `%s\n`), tt.args...)
			code, out, errOut := runCaptured(args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if want := strings.Join(tt.args, "\n") + "\n"; out != want {
				t.Errorf("the server got %q, want the real arguments %q", out, want)
			}
			tape, err := store.Load(db)
			if err != nil {
				t.Fatal(err)
			}
			up := tape.Sessions[0].Info.Upstream
			if strings.Contains(up, "s3cret") || !strings.Contains(up, "redacted") || !strings.HasPrefix(up, "printf ") {
				t.Errorf("recorded command line %q, want it with s3cret hidden", up)
			}
		})
	}
}

// Help that is asked for goes to stdout, with exit 0, so that it pages;
// "help COMMAND" is "COMMAND -h". A usage error prints the usage to
// stderr instead.
func TestMcpspy_Help(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // stdout starts so
	}{
		{"-h", []string{"-h"}, "mcpspy records and inspects MCP traffic."},
		{"help", []string{"help"}, "mcpspy records and inspects MCP traffic."},
		{"record -h", []string{"record", "-h"}, "Usage: mcpspy record"},
		{"help record", []string{"help", "record"}, "Usage: mcpspy record"},
		{"help ls", []string{"help", "ls"}, "Usage: mcpspy ls [--json] CASSETTE"},
		{"help lint", []string{"help", "lint"}, "Usage: mcpspy lint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCaptured(tt.args...)
			if code != 0 || !strings.HasPrefix(stdout, tt.want) || stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0, stdout starting %q, no stderr", code, stdout, stderr, tt.want)
			}
		})
	}
	// The overview says what a CASSETTE may be: a newcomer with a .jsonl
	// or a .har would not guess that every reading command takes it.
	if _, stdout, _ := runCaptured("-h"); !strings.Contains(stdout, "also reads a JSONL export\n(.jsonl) or a HAR (.har") {
		t.Errorf("mcpspy -h does not say what a CASSETTE may be:\n%s", stdout)
	}
	code, stdout, stderr := runCaptured("ls", "--bogus")
	if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "Usage: mcpspy ls [--json] CASSETTE...|-\n") {
		t.Errorf("ls --bogus: exit %d, stdout %q, stderr %q; want 2, the usage on stderr", code, stdout, stderr)
	}
}

// The server's command line starts after "--" or at the first argument
// that is not one of record's flags (the MCP Inspector drops a "--" it is
// given); from there on everything is the server's, its own "--" and
// flags named like record's included.
func TestMcpspy_RecordCommandLine(t *testing.T) {
	tests := []struct {
		name string
		args []string // after record -o DB
		want string   // what printf '%s|' printed
	}{
		{"after --", []string{"--", "printf", "%s|", "a"}, "a|"},
		{"without --", []string{"printf", "%s|", "a"}, "a|"},
		{"without --, the server's own -- and -o", []string{"printf", "%s|", "-o", "x", "--", "y"}, "-o|x|--|y|"},
		{"after --, a second -- is the server's", []string{"--", "printf", "%s|", "--", "y"}, "--|y|"},
		{"record's flags first, then the command", []string{"--session", "named", "printf", "%s|", "--session"}, "--session|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "c.db")
			code, out, errOut := runCaptured(append([]string{"record", "-o", db}, tt.args...)...)
			if code != 0 || out != tt.want {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and %q", code, out, errOut, tt.want)
			}
			tape, err := store.Load(db)
			if err != nil {
				t.Fatal(err)
			}
			if up := tape.Sessions[0].Info.Upstream; !strings.HasPrefix(up, "printf ") {
				t.Errorf("recorded upstream %q, want the printf command line", up)
			}
		})
	}
}

// TestMcpspy_FlagsAfterCassette: the commands that read files take their
// flags after the files as well as before, as people type them; record
// does not, since what follows is the server's own command line.
func TestMcpspy_FlagsAfterCassette(t *testing.T) {
	cassette := shippedCassette(t, "everything-stdio.db")
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.yaml"), filepath.Join(dir, "after.yaml")
	runOK(t, "export", "--script", "-o", before, cassette)
	runOK(t, "export", cassette, "--script", "-o", after)
	a, err := os.ReadFile(before)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(after)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || !bytes.HasPrefix(a, []byte("# A mcpmock script")) {
		t.Errorf("export CASSETTE --script -o FILE wrote\n%.200s\nwant what export --script -o FILE CASSETTE wrote\n%.200s", b, a)
	}
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"show", cassette, "--filter", "tool:echo"}, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	if err != nil || !strings.Contains(out.String(), "echo") || strings.Contains(out.String(), "tools/list") {
		t.Errorf("show CASSETTE --filter tool:echo: %v\n%s%s", err, out.String(), errb.String())
	}
	err = run(context.Background(), []string{"diff", cassette, cassette, "--exit-code"}, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	if err != nil {
		t.Errorf("diff A A --exit-code: %v", err)
	}
	err = run(context.Background(), []string{"export", cassette, "--bogus"}, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	if err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -bogus") {
		t.Errorf("export CASSETTE --bogus: %v, want the flag named", err)
	}
}

// --version (and version) print to stdout the version every recording
// keeps as its recorder, for a bug report.
func TestMcpspy_Version(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		code, stdout, stderr := runCaptured(arg)
		if code != 0 || !strings.HasPrefix(stdout, "mcpspy 0.1 go") || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and \"mcpspy 0.1 go…\"", arg, code, stdout, stderr)
		}
		if !strings.HasPrefix(stdout, strings.Replace(version, "/", " ", 1)+" ") {
			t.Errorf("%s: %q does not start with the recorder version %q", arg, stdout, version)
		}
	}
}

// "-o -" is standard output, as for curl and tshark, where text is
// written; a cassette cannot go there, and none is made named "-".
func TestMcpspy_OutputDash(t *testing.T) {
	spy := peertest.Binary(t, "mcpspy")
	dir := t.TempDir()
	config := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(config, []byte(`{"mcpServers": {"a": {"command": "srv"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	db, jsonl := shippedCassette(t, "everything-stdio.db"), shippedCassette(t, "everything-stdio.jsonl")
	spyIn := func(args ...string) (code int, stdout, stderr string) {
		cmd := exec.Command(spy, args...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	for _, args := range [][]string{{"export", db}, {"export", "--filter", "tool:echo", db}, {"wrap", "--cassette", "c.db", config}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, want, _ := spyIn(args...)
			code, got, errOut := spyIn(append([]string{args[0], "-o", "-"}, args[1:]...)...)
			if code != 0 || got != want || want == "" {
				t.Errorf("with -o -: exit %d, stderr %q, stdout %d bytes; want exit 0 and the %d bytes it writes without -o", code, errOut, len(got), len(want))
			}
		})
	}
	for _, args := range [][]string{
		{"record", "-o", "-", "--", "true"},
		{"import", "-o", "-", jsonl},
		{"rerun", "-o", "-", db, "--", "true"},
		{"wrap", "--cassette", "-", config},
	} {
		t.Run(strings.Join(args[:3], " "), func(t *testing.T) {
			code, _, errOut := spyIn(args...)
			want := "mcpspy: " + args[0] + ": " + args[1] + " -: a cassette is a bbolt file and cannot go to stdout"
			if code != 2 || !strings.HasPrefix(errOut, want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file named - was made: %v", err)
	}
}

// A file a Windows tool or editor saved with a UTF-8 byte order mark
// before its JSON (Fiddler's HARs, Notepad's configs) reads as it would
// without one; wrap keeps the mark in the file it writes back.
func TestMcpspy_ByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	withMark := func(name string, text []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, append([]byte("\ufeff"), text...), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shipped := func(name string) []byte {
		b, err := os.ReadFile(shippedCassette(t, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	jsonl, har := withMark("bom.jsonl", shipped("everything-stdio.jsonl")), withMark("bom.har", shipped("everything-http.har"))
	for _, args := range [][]string{
		{"ls", jsonl},
		{"ls", har},
		{"export", "--salvage", jsonl},
		{"import", "-o", filepath.Join(dir, "j.db"), jsonl},
		{"import", "-o", filepath.Join(dir, "h.db"), har},
	} {
		if code, _, stderr := runCaptured(args...); code != 0 {
			t.Errorf("mcpspy %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
		}
	}
	if _, out, _ := runCaptured("export", jsonl); out != string(shipped("everything-stdio.jsonl")) {
		t.Errorf("the export of a marked export differs from the export itself")
	}
	config := withMark("mcp.json", []byte(`{"mcpServers": {"a": {"command": "srv"}}}`))
	if code, _, stderr := runCaptured("wrap", "--cassette", filepath.Join(dir, "c.db"), "-o", config, config); code != 0 {
		t.Fatalf("wrap: exit %d, stderr %q", code, stderr)
	}
	// wrap keeps the file's layout, and its mark.
	if b, _ := os.ReadFile(config); !bytes.HasPrefix(b, []byte("\ufeff{\"mcpServers\": {\"a\": {\"command\": \"")) || !bytes.Contains(b, []byte(`"record"`)) {
		t.Errorf("wrapped config:\n%s\nwant the mark, then the wrapped JSON", b)
	}
}
