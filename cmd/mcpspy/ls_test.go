package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// ls prints one tab-separated line per session: id, name ("-" when
// none), transport, start, message count, server (name@version, or the
// name alone), protocol version ("-" before a handshake), how it ended,
// upstream. A .jsonl export lists the same lines as its cassette.
func TestMcpspy_LsLines(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ls.db")
	w, err := store.NewWriter(db, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.Local)
	named, err := w.NewSession(store.SessionInfo{Name: "alpha", Transport: store.TransportStdio, Upstream: "srv --flag", Start: start})
	if err != nil {
		t.Fatal(err)
	}
	named.Update(func(info *store.SessionInfo) {
		info.Handshake = store.Handshake{Method: "initialize", ProtocolVersion: "2025-06-18", ServerInfo: []byte(`{"name":"srv"}`)}
	})
	for range 3 {
		named.Append(store.C2S, start, []byte(`{"jsonrpc":"2.0","method":"notifications/x"}`), nil)
	}
	if err := named.End(store.EndInfo{Reason: store.EndEOF, Time: start.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	bare, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Upstream: "other", Start: start})
	if err != nil {
		t.Fatal(err)
	}
	bare.Append(store.C2S, start, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
	if _, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Upstream: "silent", Start: start}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	jsonl := filepath.Join(dir, "ls.jsonl")
	if code, _, stderr := runCaptured("export", "-o", jsonl, db); code != 0 {
		t.Fatalf("export: %d %s", code, stderr)
	}
	at := start.Format(time.DateTime)
	want := []string{
		"s1\talpha\tstdio\t" + at + "\t3 msgs\tsrv\t2025-06-18\t",
		"s2\t-\tstdio\t" + at + "\t1 msg\t-\t-\t", // not "1 msgs"
		"s3\t-\tstdio\t" + at + "\t0 msgs\t-\t-\t",
	}
	for _, path := range []string{db, jsonl} {
		code, out, stderr := runCaptured("ls", path)
		if code != 0 {
			t.Fatalf("ls %s: %d %s", filepath.Base(path), code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(want) {
			t.Fatalf("ls %s: %d lines, want %d:\n%s", filepath.Base(path), len(lines), len(want), out)
		}
		for i, line := range lines {
			if !strings.HasPrefix(line, want[i]) {
				t.Errorf("ls %s line %d:\n%q\nwant it to start\n%q", filepath.Base(path), i+1, line, want[i])
			}
		}
	}
}

// import into a file that is not a cassette is refused with the file
// named, and the file is left as it was.
func TestMcpspy_ImportIntoForeignFile(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.db")
	const notes = "my notes, not a cassette\n"
	if err := os.WriteFile(foreign, []byte(notes), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCaptured("import", "-o", foreign, shippedCassette(t, "everything-stdio.jsonl"))
	if code != 1 || !strings.Contains(stderr, foreign) || !strings.Contains(stderr, "not an mcptape cassette") {
		t.Errorf("import into a foreign file: exit %d, stderr %q; want 1 naming the file as not a cassette", code, stderr)
	}
	if got, _ := os.ReadFile(foreign); string(got) != notes {
		t.Errorf("the foreign file was changed: %q", got)
	}
}

// import of a cassette (.db) where an export belongs says what the file
// is, not that its first line is bad JSONL.
func TestMcpspy_ImportOfACassette(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	out := filepath.Join(t.TempDir(), "new.db")
	code, _, stderr := runCaptured("import", "-o", out, db)
	want := "mcpspy: import: " + db + " is a cassette already; import reads a JSONL export (mcpspy export makes one)\n"
	if code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}

// ls --json prints one object per session: its id, message count, and
// info as the session's header line in the export has it; a .jsonl lists
// the same objects as its cassette.
func TestMcpspy_LsJSON(t *testing.T) {
	db := filepath.Join("..", "..", "cassettes", "everything-http.db")
	code, export, stderr := runCaptured("export", db)
	if code != 0 {
		t.Fatalf("export: %d %s", code, stderr)
	}
	jsonl := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(jsonl, []byte(export), 0o600); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Session  string          `json:"session"`
		Messages int             `json:"messages"`
		Info     json.RawMessage `json:"info"`
	}
	var want []entry
	for _, line := range strings.Split(strings.TrimSuffix(export, "\n"), "\n") {
		var e entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Info != nil:
			want = append(want, e)
		case len(want) > 0:
			want[len(want)-1].Messages++
		}
	}
	if len(want) == 0 || want[0].Messages == 0 {
		t.Fatalf("the export has no session with messages:\n%s", export)
	}
	for _, path := range []string{db, jsonl} {
		code, out, stderr := runCaptured("ls", "--json", path)
		if code != 0 || stderr != "" {
			t.Fatalf("ls --json %s: %d %s", filepath.Base(path), code, stderr)
		}
		var got []entry
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			var e entry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("ls --json %s: %v in %q", filepath.Base(path), err, line)
			}
			got = append(got, e)
		}
		if d := cmp.Diff(want, got, cmp.Transformer("compact", func(r json.RawMessage) string {
			var b bytes.Buffer
			if err := json.Compact(&b, r); err != nil {
				return "invalid: " + string(r)
			}
			return b.String()
		})); d != "" {
			t.Errorf("ls --json %s (-export +ls):\n%s", filepath.Base(path), d)
		}
	}
}

// A recording with nothing in it says so on stderr rather than print
// nothing: a HAR saved from a tab that spoke no MCP (its page, its
// scripts) is one, and import already refuses it by name.
func TestMcpspy_EmptyRecordingSaysSo(t *testing.T) {
	har := filepath.Join(t.TempDir(), "page.har")
	page := `{"log":{"version":"1.2","entries":[{"startedDateTime":"2026-01-01T00:00:00Z","time":1,` +
		`"request":{"method":"GET","url":"http://x/index.html","headers":[]},` +
		`"response":{"status":200,"headers":[],"content":{"mimeType":"text/html","text":"<html>"}}}]}}`
	if err := os.WriteFile(har, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	const left = " (a HAR's entries that carry no MCP traffic are left out)\n"
	for _, tt := range []struct{ cmd, want string }{
		{"ls", "mcpspy: ls: " + har + " holds no session" + left},
		{"show", "mcpspy: show: " + har + " holds no message" + left},
	} {
		code, stdout, stderr := runCaptured(tt.cmd, har)
		if code != 0 || stdout != "" || stderr != tt.want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0, nothing, %q", tt.cmd, code, stdout, stderr, tt.want)
		}
	}
}

// A JSONL file written by hand with an empty session info (a bug report)
// lists its transport as unknown and its start as its first message's
// time, as the cassette imported from it does; a session with no message
// has no start. export --har names the transport it leaves out.
func TestMcpspy_LsEmptyInfo(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "bug.jsonl")
	const handWritten = `{"session":"s1","info":{}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
{"session":"s2","info":{}}
`
	if err := os.WriteFile(jsonl, []byte(handWritten), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "bug.db")
	if code, _, stderr := runCaptured("import", "-o", db, jsonl); code != 0 {
		t.Fatalf("import: %d %s", code, stderr)
	}
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).Local().Format(time.DateTime)
	want := "s1\t-\tunknown\t" + at + "\t1 msg\t-\t-\t"
	for _, path := range []string{jsonl, db} {
		code, out, stderr := runCaptured("ls", path)
		if code != 0 {
			t.Fatalf("ls %s: %d %s", filepath.Base(path), code, stderr)
		}
		// The cassette lists sessions by start, and one with none first.
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		slices.Sort(lines)
		if len(lines) != 2 || !strings.HasPrefix(lines[0], want) || !strings.HasPrefix(lines[1], "s2\t-\tunknown\t-\t0 msgs\t") {
			t.Errorf("ls %s:\n%s\nwant a line that starts %q, and s2's with transport unknown and start -", filepath.Base(path), out, want)
		}
	}
	code, _, stderr := runCaptured("export", "--har", "-o", filepath.Join(dir, "bug.har"), jsonl)
	if want := "only s1 (unknown), s2 (unknown)"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("export --har: exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}

// ls of several cassettes (ls *.db) lists them all, each line after its
// file and a tab (in --json, "file" first), as lint names each finding's;
// one that cannot be read is named at the end, and the exit is 1, the
// others listed all the same.
func TestMcpspy_LsSeveral(t *testing.T) {
	db, har := shippedCassette(t, "everything-stdio.db"), shippedCassette(t, "everything-http.har")
	_, dbLine, _ := runCaptured("ls", db)
	_, harLine, _ := runCaptured("ls", har)
	missing := filepath.Join(t.TempDir(), "missing.db")
	code, out, stderr := runCaptured("ls", db, missing, har)
	if want := db + "\t" + dbLine + har + "\t" + harLine; code != 1 || out != want || stderr != "mcpspy: "+missing+": cassette does not exist\n" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 1, the missing file named, and:\n%s", code, stderr, out, want)
	}
	_, out, _ = runCaptured("ls", "--json", db, har)
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			File    string `json:"file"`
			Session string `json:"session"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil || !strings.HasPrefix(line, `{"file":`) || v.Session != "s1" {
			t.Errorf("--json line %s: %v", line, err)
		}
		files = append(files, v.File)
	}
	if !slices.Equal(files, []string{db, har}) {
		t.Errorf("--json files %q", files)
	}
	// One cassette lists as it always has, without its name.
	if _, out, _ := runCaptured("ls", "--json", db); strings.Contains(out, `"file"`) {
		t.Errorf("--json of one cassette names it: %s", out)
	}
}

// A recording under another kind's name is named for what it holds, with
// the name to give it, and without the --salvage hint of a damaged file,
// which could not help.
func TestMcpspy_LsMisnamed(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ shipped, as, want string }{
		{"everything-stdio.jsonl", "jl.db", "it looks like a JSONL export (it starts with {), not a bbolt cassette as its name says; name it .jsonl to read it as one\n"},
		{"everything-stdio.db", "db.jsonl", "it looks like a bbolt cassette (it starts with a bbolt meta page), not a JSONL export as its name says; name it .db to read it as one\n"},
	} {
		path := peertest.ShippedAs(t, tt.shipped, dir, tt.as)
		code, _, stderr := runCaptured("ls", path)
		if code != 1 || !strings.HasSuffix(stderr, tt.want) || strings.Contains(stderr, "salvage") {
			t.Errorf("ls %s: exit %d, stderr %q; want 1 and one line ending %q", tt.as, code, stderr, tt.want)
		}
	}
}
