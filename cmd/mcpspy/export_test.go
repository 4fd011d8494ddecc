package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/inspector"
	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// export --filter on the shipped real-peer cassettes (TypeScript SDK and
// server-everything, over stdio and Streamable HTTP). A response carries
// its request's method and tool, so tool:echo keeps the call and its
// answer; notifications carry no tool, so tool: drops progress.
func TestMcpspy_ExportFilter(t *testing.T) {
	tests := []struct {
		name     string
		cassette string // under cassettes/, without extension
		filter   string
		sessions []string
		// wantFrom is the original seq of each exported message, in order
		// (they are renumbered 1, 2, …).
		wantFrom []uint64
		// wantCalls is the number of requests replay finds in the output.
		wantCalls int
	}{
		{"stdio tool:echo keeps the call and its answer", "everything-stdio", "tool:echo", nil, []uint64{7, 8}, 1},
		{"http tool:echo keeps the call and its answer", "everything-http", "tool:echo", nil, []uint64{6, 7}, 1},
		{"with --session by id", "everything-stdio", "tool:echo", []string{"s1"}, []uint64{7, 8}, 1},
		{"with --session by name", "everything-http", "tool:echo", []string{"everything-http"}, []uint64{6, 7}, 1},
		{"tool: drops progress notifications", "everything-stdio", "tool:trigger-long-running-operation", nil, []uint64{15, 19}, 1},
		{"kind:notification", "everything-http", "kind:notification", nil, []uint64{3, 9, 10, 11}, 0},
		{"negated direction", "everything-stdio", "!dir:s2c", nil, []uint64{1, 3, 4, 7, 9, 11, 13, 15}, 7},
		{"latency", "everything-stdio", "slow:>100ms", nil, []uint64{1, 2, 15, 19}, 2},
		{"free text reads frames", "everything-http", `"Echo: hello"`, nil, []uint64{7}, 0},
		{"regexp", "everything-stdio", `/"name":"get-[a-z-]+","arguments"/`, nil, []uint64{9, 11, 13}, 3},
		{"methods and kinds", "everything-stdio", "method:tools/* kind:request|response", nil, []uint64{4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 19}, 6},
		{"empty filter: everything, with notes", "everything-http", "", nil, seqs(1, 12), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db := shippedCassette(t, tt.cassette+".db")
			got := exportWithFilter(t, db, tt.filter, tt.sessions, filepath.Join(dir, "out.jsonl"))

			// Exactly what the inspector's e key writes for this filter and
			// scope, from the model itself.
			if want := inspectorExport(t, db, tt.filter, tt.sessions); !bytes.Equal(got, want) {
				t.Errorf("export --filter differs from the inspector's export:\n got %s\nwant %s", got, want)
			}

			// The .jsonl twin gives the same messages; only the file name
			// in each note differs (the inspector names its source).
			twin := shippedCassette(t, tt.cassette+".jsonl")
			fromTwin := exportWithFilter(t, twin, tt.filter, tt.sessions, filepath.Join(dir, "twin.jsonl"))
			fromTwin = bytes.ReplaceAll(fromTwin, []byte(tt.cassette+".jsonl"), []byte(tt.cassette+".db"))
			if !bytes.Equal(got, fromTwin) {
				t.Errorf("the .db and its .jsonl twin export differently:\n.db    %s\n.jsonl %s", got, fromTwin)
			}

			tape := readTape(t, filepath.Join(dir, "out.jsonl"))
			if len(tape.Sessions) != 1 {
				t.Fatalf("%d sessions exported, want 1", len(tape.Sessions))
			}
			var from []uint64
			for i, m := range tape.Sessions[0].Messages {
				if m.Seq != uint64(i+1) {
					t.Errorf("message %d has seq %d: not renumbered", i, m.Seq)
				}
				from = append(from, noteSeq(t, m.Note, tt.cassette+".db"))
			}
			if !slices.Equal(from, tt.wantFrom) {
				t.Errorf("exported original seqs %v, want %v", from, tt.wantFrom)
			}

			// It imports, and exports back unchanged; replay accepts it.
			back := filepath.Join(dir, "back.db")
			runOK(t, "import", "-o", back, filepath.Join(dir, "out.jsonl"))
			runOK(t, "export", "-o", filepath.Join(dir, "again.jsonl"), back)
			if again, _ := os.ReadFile(filepath.Join(dir, "again.jsonl")); !bytes.Equal(again, got) {
				t.Errorf("export --filter → import → export differs:\n%s\n%s", got, again)
			}
			c, err := replay.LoadCassette(filepath.Join(dir, "out.jsonl"))
			if err != nil {
				t.Fatalf("replay rejects the filtered export: %v", err)
			}
			if c.Len() != tt.wantCalls {
				t.Errorf("replay finds %d recorded requests, want %d", c.Len(), tt.wantCalls)
			}
		})
	}
}

// A filtered export replays to a client: a go-sdk client calling echo
// gets the recorded answer and nothing recorded goes unused. Without the
// handshake, mcpmock answers initialize from the session info the export
// kept (server-everything's serverInfo and capabilities).
func TestMcpspy_ExportFilterReplays(t *testing.T) {
	tests := []struct {
		name, cassette, filter string
		allUsed                bool // the echo call is all the export holds
	}{
		{"stdio without the handshake", "everything-stdio", "tool:echo", true},
		{"stdio with the handshake", "everything-stdio", "method:initialize|tools/call !tool:get-*|trigger-*", true},
		{"http with the handshake", "everything-http", "method:initialize|tools/call !tool:trigger-*", true},
		{"the README's example", "everything-http", "session:s1 tool:echo", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "echo.jsonl")
			exportWithFilter(t, shippedCassette(t, tt.cassette+".db"), tt.filter, nil, out)
			srv, cs, ctx := replayWithGoClient(t, out)
			if got := cs.InitializeResult(); got == nil || got.ServerInfo == nil || !strings.Contains(got.ServerInfo.Name, "everything") || got.Capabilities.Tools == nil {
				t.Errorf("the mock introduced itself as %+v, want server-everything's serverInfo with tools", got)
			} else if c := got.Capabilities; c.Prompts == nil || c.Completions == nil || !strings.Contains(got.Instructions, "Everything Server") {
				// Prompts and completions are in no echo call: they come from
				// what the recorder kept, as do the instructions.
				t.Errorf("capabilities %+v, instructions %.60q: want server-everything's, as recorded", c, got.Instructions)
			}
			echoReplays(t, srv, cs, ctx)
			if tt.allUsed {
				srv.AssertAllUsed()
			}
		})
	}
}

func TestMcpspy_ExportFilterErrors(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string // the one stderr line, in full when it ends the line
	}{
		{"unknown key", []string{"--filter", "tool:echo colour:red", db}, 2,
			`mcpspy: export: --filter "colour:red": unknown key "colour"`},
		{"unknown kind", []string{"--filter", "kind:bogus", db}, 2,
			`mcpspy: export: --filter "kind:bogus": unknown kind "bogus"`},
		{"bad duration", []string{"--filter", "slow:>fast", db}, 2,
			`mcpspy: export: --filter "slow:>fast": slow needs a duration`},
		{"bad status", []string{"--filter", "status:6xx", db}, 2,
			`mcpspy: export: --filter "status:6xx": status must be an HTTP status from 100 to 599 (404) or a class from 1xx to 5xx, not "6xx"`},
		{"unknown stream", []string{"--filter", "dir:s2c stream:nope", db}, 2,
			`mcpspy: export: --filter "stream:nope": unknown stream "nope" (want post-body, json, post-sse, get-sse, legacy-sse or ws, or a stream id: stream:6)`},
		{"lone negation", []string{"--filter", "!", db}, 2,
			`mcpspy: export: --filter "!": ! must be followed by a term to negate`},
		{"unclosed quote", []string{"--filter", `"Echo: hello`, db}, 2,
			`mcpspy: export: --filter "\"Echo: hello": unclosed quote`},
		{"bad filter before a missing file", []string{"--filter", "dir:up", "missing.db"}, 2,
			`mcpspy: export: --filter "dir:up": dir must be c2s or s2c`},
		{"unknown session", []string{"--filter", "tool:echo", "--session", "s9", db}, 1,
			`mcpspy: ` + db + `: no such session "s9"`},
		{"missing file", []string{"--filter", "tool:echo", "missing.db"}, 1, "mcpspy: missing.db: cassette does not exist"},
		{"no match", []string{"--filter", "tool:echo error", db}, 1,
			"mcpspy: export: the filter matched no message; nothing written"},
		{"no match in the session", []string{"--filter", "session:s1 method:nosuch", db}, 1,
			`mcpspy: export: the filter matched no message: no message has method "nosuch"; nothing written`},
		{"a mistyped tool and method", []string{"--filter", "tool:ecoh|echo method:tools/cal", db}, 1,
			`mcpspy: export: the filter matched no message: no message has tool "ecoh" (did you mean echo?); no message has method "tools/cal" (did you mean tools/call?); nothing written`},
		{"a glob and a negated name are no typos", []string{"--filter", "method:nosuch/* !tool:nosuch", db}, 1,
			"mcpspy: export: the filter matched no message; nothing written"},
		{"a session term naming no session", []string{"--filter", "session:s2 kind:request", db}, 1,
			`mcpspy: export: --filter session:s2: ` + db + `: no such session "s2" (it holds s1`},
		{"a negated one too", []string{"--filter", "!session:s1|s9", db}, 1,
			`mcpspy: export: --filter session:s9: ` + db + `: no such session "s9" (it holds s1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), append([]string{"export"}, tt.args...), streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			code := cli.ExitCode("mcpspy", err, &errb)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (%v)", code, tt.wantCode, err)
			}
			msg := strings.TrimSuffix(errb.String(), "\n")
			if !strings.HasPrefix(msg, tt.wantErr) || strings.Contains(msg, "\n") {
				t.Errorf("stderr %q: want one line starting %q", msg, tt.wantErr)
			}
			if out.Len() != 0 {
				t.Errorf("wrote %d bytes to stdout, want none:\n%s", out.Len(), out.String())
			}
		})
	}
}

// A filter that matches nothing with -o writes nothing and fails: an
// older export at that path is kept (it may be all the user has), and
// the exit status says that it is not this one's.
func TestMcpspy_ExportFilterNoMatchFile(t *testing.T) {
	db := shippedCassette(t, "everything-http.db")
	dir := t.TempDir()
	kept := filepath.Join(dir, "keep.jsonl")
	if err := os.WriteFile(kept, []byte("stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "new.jsonl")
	tests := []struct {
		name, out, wantErr string
	}{
		{"an existing file", kept, `mcpspy: export: the filter matched no message: no message has tool "nope"; ` + kept + " left as it was\n"},
		{"a new file", fresh, `mcpspy: export: the filter matched no message: no message has tool "nope"; ` + fresh + " not written\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCaptured("export", "--filter", "tool:nope", "-o", tt.out, db)
			if code != 1 || errOut != tt.wantErr {
				t.Errorf("exit %d, stderr %q; want 1, %q", code, errOut, tt.wantErr)
			}
		})
	}
	if got, err := os.ReadFile(kept); err != nil || string(got) != "stale\n" {
		t.Errorf("the existing file holds %q (%v), want it as it was", got, err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no match made %s (%v)", fresh, err)
	}
}

// replayWithGoClient serves path with mcpmock and connects a go-sdk
// client to it; both close, and ctx ends, when the test does.
func replayWithGoClient(tb testing.TB, path string) (*mocktest.Server, *mcp.ClientSession, context.Context) {
	tb.Helper()
	srv := mocktest.NewFromCassette(tb, path)
	cs, ctx := goClientOn(tb, srv)
	return srv, cs, ctx
}

// goClientOn connects a go-sdk client to srv for the rest of the test.
func goClientOn(tb testing.TB, srv *mocktest.Server) (*mcp.ClientSession, context.Context) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, srv.Transport(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs, ctx
}

// echoReplays calls the echo tool the shipped cassettes recorded and
// checks the recorded answer came back, with no request unmatched.
func echoReplays(tb testing.TB, srv *mocktest.Server, cs *mcp.ClientSession, ctx context.Context) {
	tb.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello from mcptape"}})
	if err != nil {
		tb.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "Echo: hello from mcptape" {
		tb.Errorf("echo answered %q", got)
	}
	if r := srv.Report(); len(r.Unmatched) > 0 {
		tb.Errorf("unmatched requests: %+v", r.Unmatched)
	}
}

func shippedCassette(tb testing.TB, name string) string {
	tb.Helper()
	return filepath.Join(peertest.ModuleRoot(), "cassettes", name)
}

func runOK(tb testing.TB, args ...string) {
	tb.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errb}); err != nil {
		tb.Fatalf("mcpspy %v: %v\n%s", args, err, errb.String())
	}
}

// exportWithFilter runs export --filter twice, to stdout and to out, checks
// the two agree and the file is private, and returns the text.
func exportWithFilter(tb testing.TB, cassette, filter string, sessions []string, out string) []byte {
	tb.Helper()
	args := []string{"export", "--filter", filter}
	for _, s := range sessions {
		args = append(args, "--session", s)
	}
	var stdout, errb bytes.Buffer
	err := run(context.Background(), append(args, cassette), streams{In: strings.NewReader(""), Out: &stdout, Err: &errb})
	if err != nil && strings.HasPrefix(err.Error(), "export: the filter matched no message;") {
		// Nothing selected: nothing written, to stdout or to -o FILE.
		if code, _, errOut := runCaptured(append(args, "-o", out, cassette)...); code != 1 || stdout.Len() > 0 {
			tb.Errorf("no match: exit %d (%s) with -o, %d bytes on stdout", code, errOut, stdout.Len())
		}
		if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
			tb.Errorf("no match made %s (%v)", out, err)
		}
		return nil
	}
	if err != nil {
		tb.Fatalf("mcpspy %v: %v\n%s", args, err, errb.String())
	}
	runOK(tb, append(args, "-o", out, cassette)...)
	file, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	if !bytes.Equal(file, stdout.Bytes()) {
		tb.Errorf("-o FILE and stdout differ:\n%s\n%s", file, stdout.Bytes())
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		tb.Errorf("export -o file mode: %v %v", st.Mode(), err)
	}
	return file
}

// inspectorExport is what the inspector's e key writes with nothing
// marked, after f and the sessions pane set to each session in turn.
func inspectorExport(tb testing.TB, cassette, filter string, sessions []string) []byte {
	tb.Helper()
	m, src, err := inspector.Open(cassette)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := inspector.ParseFilter(filter)
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.SetFilter(f, src); err != nil {
		tb.Fatal(err)
	}
	var idxs []int
	if len(sessions) == 0 {
		idxs = m.VisibleIndexes()
	}
	for i, s := range m.Sessions {
		for _, want := range sessions {
			if s.Info.ID == want || s.Info.Name == want {
				if err := m.SetScope(i, src); err != nil {
					tb.Fatal(err)
				}
				idxs = append(idxs, m.VisibleIndexes()...)
				break
			}
		}
	}
	var b bytes.Buffer
	if err := m.Export(&b, src, idxs); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func readTape(tb testing.TB, path string) *store.Tape {
	tb.Helper()
	tape, err := store.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return tape
}

// noteSeq reads the original seq from "exported from NAME s1 #9".
func noteSeq(tb testing.TB, note, name string) uint64 {
	tb.Helper()
	rest, ok := strings.CutPrefix(note, "exported from "+name+" s1 #")
	var n uint64
	if !ok || json.Unmarshal([]byte(rest), &n) != nil {
		tb.Fatalf("note %q does not name the original seq", note)
	}
	return n
}

func seqs(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// --session scopes a filtered export as the sessions pane scopes the
// inspector; several sessions give the union, in cassette order. The
// cassette holds both shipped recordings, the HTTP one renamed s2.
func TestMcpspy_ExportFilterSessions(t *testing.T) {
	db := twoSessionCassette(t)
	tests := []struct {
		name     string
		filter   string
		sessions []string
		want     map[string][]uint64 // per exported session, the original seqs
	}{
		{"no --session: every session", "tool:echo", nil, map[string][]uint64{"s1": {7, 8}, "s2": {6, 7}}},
		{"one session", "tool:echo", []string{"s2"}, map[string][]uint64{"s2": {6, 7}}},
		{"by name", "tool:echo", []string{"everything"}, map[string][]uint64{"s1": {7, 8}}},
		{"two sessions, named twice", "kind:request", []string{"s2", "s1", "s2"},
			map[string][]uint64{"s1": {1, 4, 7, 9, 11, 13, 15}, "s2": {1, 4, 6, 8}}},
		{"session: in the filter", "session:s2 kind:request", nil, map[string][]uint64{"s2": {1, 4, 6, 8}}},
		{"scope and filter disagree", "session:s2", []string{"s1"}, nil},
		{"body filter in scope", `"Echo: hello"`, []string{"s2"}, map[string][]uint64{"s2": {7}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			got := exportWithFilter(t, db, tt.filter, tt.sessions, out)
			if want := inspectorExport(t, db, tt.filter, tt.sessions); !bytes.Equal(got, want) {
				t.Errorf("export --filter differs from the inspector's export:\n got %s\nwant %s", got, want)
			}
			if got == nil { // nothing selected, nothing written
				if tt.want != nil {
					t.Errorf("exported nothing, want %v", tt.want)
				}
				return
			}
			seen := map[string][]uint64{}
			var order []string
			for _, s := range readTape(t, out).Sessions {
				order = append(order, s.Info.ID)
				for _, m := range s.Messages {
					rest, _ := strings.CutPrefix(m.Note, "exported from two.db "+s.Info.ID+" #")
					var n uint64
					if err := json.Unmarshal([]byte(rest), &n); err != nil {
						t.Fatalf("note %q does not name the original seq", m.Note)
					}
					seen[s.Info.ID] = append(seen[s.Info.ID], n)
				}
			}
			if !slices.IsSorted(order) {
				t.Errorf("sessions exported in order %v", order)
			}
			if len(seen) != len(tt.want) {
				t.Errorf("exported sessions %v, want %v", seen, tt.want)
			}
			for id, w := range tt.want {
				if !slices.Equal(seen[id], w) {
					t.Errorf("session %s: exported original seqs %v, want %v", id, seen[id], w)
				}
			}
		})
	}
}

// twoSessionCassette imports the shipped stdio recording as s1 and the
// HTTP one, renamed, as s2 into one cassette.
func twoSessionCassette(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	http, err := os.ReadFile(shippedCassette(tb, "everything-http.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	renamed := filepath.Join(dir, "s2.jsonl")
	if err := os.WriteFile(renamed, bytes.ReplaceAll(http, []byte(`{"session":"s1",`), []byte(`{"session":"s2",`)), 0o600); err != nil {
		tb.Fatal(err)
	}
	db := filepath.Join(dir, "two.db")
	runOK(tb, "import", "-o", db, shippedCassette(tb, "everything-stdio.jsonl"))
	runOK(tb, "import", "-o", db, renamed)
	return db
}

func TestMcpspy_ExportHelp(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"export -h", []string{"export", "-h"}, []string{"Usage: mcpspy export [--session ID] [--filter EXPR | --salvage | --script [--timing recorded] | --har] [--redact NAME] [--redact-value REGEX] [-o FILE] CASSETTE", "-filter EXPR", "-redact NAME", "-salvage"}},
		{"mcpspy -h", []string{"-h"}, []string{"mcpspy export [--session ID] [--filter EXPR | --salvage | --script [--timing recorded] | --har] [--redact NAME] [--redact-value REGEX] [-o FILE] CASSETTE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), tt.args, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			if code := cli.ExitCode("mcpspy", err, &errb); code != 0 {
				t.Errorf("exit %d (%v)", code, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String()+errb.String(), w) {
					t.Errorf("help does not contain %q:\n%s%s", w, out.String(), errb.String())
				}
			}
		})
	}
}

// A filtered export that keeps a session's initialize request without its
// answer would leave a client waiting on replay: say so, per session. One
// without the exchange at all needs no warning (mcpmock introduces itself).
func TestMcpspy_ExportFilterWarnsNoHandshake(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	const warning = "mcpspy: export: session s1 keeps the initialize request but not its answer; mcpmock would leave a client's initialize unanswered (keep both, or neither)\n"
	tests := []struct {
		name, filter string
		wantStderr   string
	}{
		{"the handshake filtered out: mcpmock introduces itself", "tool:echo", ""},
		{"the handshake kept", "method:initialize|tools/call", ""},
		{"the request kept, its answer not", "dir:c2s method:initialize|tools/call", warning},
		{"the answer kept, its request not", "dir:s2c method:initialize|tools/call", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"export", "--filter", tt.filter, db}, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
			if err != nil {
				t.Fatal(err)
			}
			if errb.String() != tt.wantStderr {
				t.Errorf("stderr %q, want %q", errb.String(), tt.wantStderr)
			}
		})
	}
}
