package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/store"
)

// runCmd runs mcpspy in process and returns its error and streams.
func runCmd(args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = run(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	return out.String(), errb.String(), err
}

// zeroPageHolding overwrites with zeros the page of path that holds
// needle (found there exactly once), as a disk fault would.
func zeroPageHolding(tb testing.TB, path, needle string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if n := bytes.Count(data, []byte(needle)); n != 1 {
		tb.Fatalf("%q is in %s %d times, want once", needle, path, n)
	}
	size := os.Getpagesize()
	page := bytes.Index(data, []byte(needle)) / size * size
	copy(data[page:page+size], make([]byte, size))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// A real recording (server-everything over stdio) whose session info
// page is damaged: export refuses and points at --salvage; export
// --salvage writes every message, says on stderr what was lost, exits 1,
// and what it wrote replays to a go-sdk client like the undamaged
// recording.
func TestMcpspy_ExportSalvageReplays(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "bug-report.db")
	runOK(t, "import", "-o", db, shippedCassette(t, "everything-stdio.jsonl"))
	// The upstream command line is in the session's info and nowhere else.
	zeroPageHolding(t, db, "server-everything/dist/index.js stdio")

	_, _, err := runCmd("export", db)
	if err == nil || !strings.Contains(err.Error(), "cassette is corrupt") || !strings.Contains(err.Error(), "--salvage exports what can still be read") {
		t.Fatalf("export of the damaged cassette: %v, want corrupt and a pointer to --salvage", err)
	}

	out := filepath.Join(dir, "salvaged.jsonl")
	stdout, stderr, err := runCmd("export", "--salvage", "-o", out, db)
	if err == nil || !strings.Contains(err.Error(), "salvaged 19 messages in 1 session; lost 1 session info (made anew from the messages)") {
		t.Fatalf("export --salvage: %v, want the count of what was salvaged and lost", err)
	}
	if code := cli.ExitCode("mcpspy", err, new(bytes.Buffer)); code != 1 {
		t.Errorf("exit code %d, want 1: something was lost", code)
	}
	if stdout != "" || !strings.HasPrefix(stderr, "mcpspy: export: s1: session info lost: "+db+": cassette is corrupt") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stdout %q, stderr %q: want one line naming s1's info and the file", stdout, stderr)
	}

	got, want := readTape(t, out), readTape(t, shippedCassette(t, "everything-stdio.jsonl"))
	if len(got.Sessions) != 1 || len(got.Sessions[0].Messages) != len(want.Sessions[0].Messages) {
		t.Fatalf("salvaged %d sessions, want 1 with %d messages", len(got.Sessions), len(want.Sessions[0].Messages))
	}
	for i, m := range got.Sessions[0].Messages {
		if w := want.Sessions[0].Messages[i]; !bytes.Equal(m.Frame, w.Frame) || m.Seq != w.Seq || m.Note != "" {
			t.Errorf("seq %d: %.60s (note %q), want %.60s", m.Seq, m.Frame, m.Note, w.Frame)
		}
	}

	srv, cs, ctx := replayWithGoClient(t, out)
	// The handshake the lost info held comes back from the recorded
	// initialize answer.
	if got := cs.InitializeResult(); got == nil || got.ServerInfo == nil || !strings.Contains(got.ServerInfo.Name, "everything") {
		t.Errorf("the mock introduced itself as %+v, want server-everything", got)
	}
	echoReplays(t, srv, cs, ctx)
}

// A bug-report cassette (the shipped server-everything recording, with
// enough logging after it to give its session a tree of pages) whose page
// pointer was damaged into a loop: export refuses it, naming the page
// (bbolt would follow the loop for ever); export --salvage reads around
// the loop, says so, and what it wrote replays to a go-sdk client.
func TestMcpspy_ExportSalvageReadsAroundALoop(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	tape := readTape(t, shippedCassette(t, "everything-stdio.jsonl"))
	sess := &tape.Sessions[0]
	last := sess.Messages[len(sess.Messages)-1]
	for i := range 400 {
		seq := last.Seq + uint64(i) + 1
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%q}}`, strings.Repeat("log ", 50))
		sess.Messages = append(sess.Messages, &store.Message{Session: sess.Info.ID, Seq: seq, Dir: store.S2C, Time: last.Time.Add(time.Duration(i+1) * time.Millisecond), Frame: []byte(frame)})
	}
	db := filepath.Join(dir, "bug-report.db")
	if _, err := store.Import(db, tape); err != nil {
		t.Fatal(err)
	}
	// bbolt's page layout: a 16-byte header (flags at 8, count at 10), then
	// 16-byte elements, a branch element's child pointer in its last 8.
	// The widest branch page is the messages' (the index's records are
	// smaller); its last child holds logging alone.
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	size, branch, children := os.Getpagesize(), 0, uint16(1)
	for p := 2; (p+1)*size <= len(data); p++ {
		if n := binary.NativeEndian.Uint16(data[p*size+10:]); binary.NativeEndian.Uint16(data[p*size+8:]) == 1 && n > children {
			branch, children = p, n
		}
	}
	if branch == 0 {
		t.Fatal("no branch page with two children")
	}
	lastChild := int(children) - 1
	binary.NativeEndian.PutUint64(data[branch*size+16+lastChild*16+8:], uint64(branch)) // → the branch itself
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}

	_, _, err = runCmd("export", db)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("page %d is its own descendant", branch)) || !strings.Contains(err.Error(), "--salvage") {
		t.Fatalf("export: %v, want the looping page named and a pointer to --salvage", err)
	}
	out := filepath.Join(dir, "salvaged.jsonl")
	_, stderr, err := runCmd("export", "--salvage", "-o", out, db)
	if code := cli.ExitCode("mcpspy", err, new(bytes.Buffer)); code != 1 || !strings.Contains(err.Error(), "lost") {
		t.Errorf("export --salvage: %v (exit %d), want exit 1 and the count lost", err, code)
	}
	want := fmt.Sprintf("mcpspy: export: %s: element %d of page %d is in a loop of page pointers back to page %d; salvaged around it\n", db, lastChild, branch, branch)
	if !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "it lay below a page pointer that looped") {
		t.Errorf("stderr %q, want it to start %q and say why messages were lost", stderr, want)
	}
	got := readTape(t, out)
	if n := len(got.Sessions[0].Messages); n <= len(sess.Messages)-400 || n >= len(sess.Messages) {
		t.Errorf("salvaged %d messages of %d, want all but those below the loop", n, len(sess.Messages))
	}

	srv, cs, ctx := replayWithGoClient(t, out)
	if got := cs.InitializeResult(); got == nil || got.ServerInfo == nil || !strings.Contains(got.ServerInfo.Name, "everything") {
		t.Errorf("the mock introduced itself as %+v, want server-everything", got)
	}
	echoReplays(t, srv, cs, ctx)
}

// On an undamaged cassette --salvage is a plain export that says nothing
// was lost; it refuses what it cannot do, as a usage error.
func TestMcpspy_ExportSalvageUsage(t *testing.T) {
	db := shippedCassette(t, "everything-http.db")
	stdout, stderr, err := runCmd("export", "--salvage", db)
	plain, _, _ := runCmd("export", db)
	if err != nil || stdout != plain || !strings.Contains(stderr, "nothing was lost") {
		t.Errorf("salvage of an undamaged cassette: %v, stderr %q, same as export: %v", err, stderr, stdout == plain)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"with --filter", []string{"export", "--salvage", "--filter", "tool:echo", db}, "--salvage and --filter do not go together"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCmd(tt.args...)
			if code := cli.ExitCode("mcpspy", err, new(bytes.Buffer)); code != 2 || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v (exit %d), want usage error %q", err, code, tt.want)
			}
		})
	}
}

// A bug report's .jsonl that a download cut short: export and import
// refuse it at the cut line and point at --salvage, which writes every
// whole line, says which line it lost, exits 1, and what it wrote replays
// to a go-sdk client.
func TestMcpspy_ExportSalvageCutJSONL(t *testing.T) {
	shipped, err := os.ReadFile(shippedCassette(t, "everything-stdio.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "bug-report.jsonl")
	lines := bytes.Count(shipped, []byte("\n"))
	if err := os.WriteFile(cut, shipped[:len(shipped)-40], 0o600); err != nil { // into the last line
		t.Fatal(err)
	}

	_, _, err = runCmd("export", cut)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s:%d:", cut, lines)) || !strings.Contains(err.Error(), "--salvage exports what can still be read") {
		t.Fatalf("export of the cut file: %v, want the line named and a pointer to --salvage", err)
	}
	out := filepath.Join(dir, "rescued.jsonl")
	_, stderr, err := runCmd("export", "--salvage", "-o", out, cut)
	if err == nil || !strings.Contains(err.Error(), "salvaged 18 messages in 1 session; lost 1 unreadable line") {
		t.Fatalf("export --salvage: %v", err)
	}
	if want := fmt.Sprintf("mcpspy: export: line %d unreadable: %s:%d:", lines, cut, lines); !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q, want it to start %q", stderr, want)
	}
	want := readTape(t, shippedCassette(t, "everything-stdio.jsonl")).Sessions[0]
	got := readTape(t, out).Sessions[0]
	if got.Info.Upstream != want.Info.Upstream || len(got.Messages) != len(want.Messages)-1 {
		t.Fatalf("salvaged %q with %d messages, want the recording's info and all but its last message", got.Info.Upstream, len(got.Messages))
	}
	for i, m := range got.Messages {
		if !bytes.Equal(m.Frame, want.Messages[i].Frame) {
			t.Errorf("seq %d: %.60s, want %.60s", m.Seq, m.Frame, want.Messages[i].Frame)
		}
	}
	srv, cs, ctx := replayWithGoClient(t, out)
	echoReplays(t, srv, cs, ctx)
}

// Every command that reads a cassette, not only export, points at
// export --salvage when the file is damaged: a user meets the error first
// in ls, show or the inspector, and would not know that export has a way
// round it.
func TestMcpspy_DamagedCassettePointsAtSalvage(t *testing.T) {
	dir := t.TempDir()
	shipped, err := os.ReadFile(shippedCassette(t, "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	// A download that stopped past the root of the tree (page 9 of the
	// shipped file): salvage can read what lies below it.
	cut := filepath.Join(dir, "cut.db")
	if err := os.WriteFile(cut, shipped[:40960], 0o600); err != nil {
		t.Fatal(err)
	}
	mangled := filepath.Join(dir, "mangled.jsonl")
	if err := os.WriteFile(mangled, []byte("{\"session\":\"s1\",\"info\":{}}\n{\"session\":\"s1\",\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const hint = "mcpspy export --salvage -o FILE.jsonl CASSETTE exports what can still be read"
	tests := []struct {
		name string
		args []string
	}{
		{"ls", []string{"ls", cut}},
		{"show", []string{"show", cut}},
		{"show of a .jsonl", []string{"show", mangled}},
		{"inspect", []string{"inspect", cut}},
		{"diff", []string{"diff", cut, shippedCassette(t, "everything-stdio.db")}},
		{"import", []string{"import", "-o", filepath.Join(dir, "x.db"), mangled}},
		{"lint", []string{"lint", cut}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runCmd(tt.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error() + stderr; !strings.Contains(msg, hint) {
				t.Errorf("error %q, stderr %q: want the pointer to export --salvage", err, stderr)
			}
		})
	}
}

// A cassette cut short before the root of its tree has nothing salvage
// could read, as every page is found from the root: every command says
// so, and why, and none points at --salvage, which once failed with only
// "a page lies past the end of the file" and wrote nothing.
func TestMcpspy_CutPastTheRootSaysNothingCanBeSalvaged(t *testing.T) {
	dir := t.TempDir()
	shipped, err := os.ReadFile(shippedCassette(t, "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		size int
		why  string // after the file's name
	}{
		{"the root cut", 20480, // the root is page 9, from byte 36864
			"truncated: the file is 20480 bytes, its pages reach 94208 (a copy cut short?), and the cut took the root of its tree (page 9, at byte 36864): nothing in it can be salvaged, as every page is found from the root; only a whole copy helps"},
		// Cut inside the meta pages, it once pointed at --salvage too,
		// which could only say the same again.
		{"a meta page cut", 4096,
			"truncated: the file is 4096 bytes, its two meta pages need 8192 (a copy cut short?), and its tree lies past them: nothing in it can be salvaged; only a whole copy helps"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cut := filepath.Join(dir, strconv.Itoa(tt.size)+".db")
			if err := os.WriteFile(cut, shipped[:tt.size], 0o600); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, strconv.Itoa(tt.size)+".jsonl")
			want := "mcpspy: " + cut + ": cassette is corrupt: " + tt.why + "\n"
			for _, args := range [][]string{
				{"ls", cut},
				{"show", cut},
				{"export", cut},
				{"export", "--salvage", "-o", out, cut},
			} {
				code, _, stderr := runCaptured(args...)
				if code != 1 || stderr != want {
					t.Errorf("mcpspy %q: exit %d, stderr %q\nwant exit 1 and %q", args, code, stderr, want)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("salvage of nothing made %s (%v)", out, err)
			}
		})
	}
}

// A cassette cut short so that a session's end cannot be read loses that
// session from some seq on, how many messages is not known: the summary
// says "at least", not a count that reads as the whole loss.
func TestMcpspy_ExportSalvageCutShortSaysAtLeast(t *testing.T) {
	dir := t.TempDir()
	shipped, err := os.ReadFile(shippedCassette(t, "everything-stdio.db"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.db")
	// Where the cut must fall depends on the layout of the shipped file:
	// try each page boundary until one leaves the session's end unread.
	for size := 8 << 10; size < len(shipped); size += 4 << 10 {
		if err := os.WriteFile(cut, shipped[:size], 0o600); err != nil {
			t.Fatal(err)
		}
		_, stderr, err := runCmd("export", "--salvage", "-o", filepath.Join(dir, "out.jsonl"), cut)
		if !strings.Contains(stderr, "every later one lost") {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "; lost at least ") {
			t.Fatalf("cut at %d bytes: %v, want the loss counted as at least; stderr:\n%s", size, err, stderr)
		}
		return
	}
	t.Fatal("no cut of the shipped cassette left a session's end unread")
}
