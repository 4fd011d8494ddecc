package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/store"
)

// handshakeTape is a stdio recording of the go-sdk test server: the
// handshake and one echo call.
const handshakeTape = `{"session":"s1","info":{"transport":"stdio","upstream":"gosdkserver","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00.000000000Z","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.001000000Z","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"gosdkserver","version":"1.0.0"}}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.002000000Z","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}
{"session":"s1","seq":4,"dir":"c2s","time":"2026-11-21T10:00:00.003000000Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"recorded"}}}}
{"session":"s1","seq":5,"dir":"s2c","time":"2026-11-21T10:00:00.004000000Z","message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"recorded"}]}}}
`

// handshakeDB writes handshakeTape as a .db cassette and its .jsonl.
func handshakeDB(t *testing.T) (db, jsonl string) {
	t.Helper()
	dir := t.TempDir()
	jsonl = filepath.Join(dir, "gosdk.jsonl")
	if err := os.WriteFile(jsonl, []byte(handshakeTape), 0o600); err != nil {
		t.Fatal(err)
	}
	tape, err := store.Load(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(dir, "gosdk.db")
	if _, err := store.Import(db, tape); err != nil {
		t.Fatal(err)
	}
	return db, jsonl
}

// A host's session: the handshake, the recorded echo, and an add the
// recording lacks.
const hostSession = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"recorded"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}
`

func readReport(t *testing.T, path string) serveReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r serveReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// answerTo picks the answer with the given id from mcpmock's stdout.
func answerTo(t *testing.T, stdout, id string) string {
	t.Helper()
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, `"id":`+id+`,`) {
			return l
		}
	}
	t.Fatalf("no answer with id %s in:\n%s", id, stdout)
	return ""
}

func TestServe_FallbackUsage(t *testing.T) {
	db, jsonl := handshakeDB(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	grown := filepath.Join(t.TempDir(), "n.db") // in a temp dir, should the refusal ever fail
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"both", []string{"serve", "--upstream", "http://127.0.0.1:1/mcp", db, "--", "server"}, "give either --upstream URL or -- COMMAND, not both"},
		{"nothing after --", []string{"serve", db, "--"}, "nothing after --"},
		{"ftp upstream", []string{"serve", "--upstream", "ftp://127.0.0.1:1/", db}, `--upstream "ftp://127.0.0.1:1/": unknown scheme "ftp" (want http, https, ws or wss)`},
		{"no host", []string{"serve", "--upstream", "http:///mcp", db}, `--upstream "http:///mcp" has no host`},
		{"no scheme", []string{"serve", "--upstream", "localhost:3001/mcp", db}, `--upstream "localhost:3001/mcp" has no scheme: did you mean http://localhost:3001/mcp (ws:// for WebSocket)?`},
		{"record-new jsonl", []string{"serve", "--record-new", jsonl, db, "--", "server"}, "--record-new " + jsonl + ": want a cassette .db"},
		{"record-new script", []string{"serve", "--record-new", script, db, "--", "server"}, "want a cassette .db"},
		{"record-new without a server", []string{"serve", "--record-new", db, db}, "--record-new is for a fallback server"},
		{"report over record-new", []string{"serve", "--report", grown, "--record-new", grown, db, "--", "server"}, "--report " + grown + " is also --record-new"},
		{"no source", []string{"serve", "--", "server"}, "no SOURCE given"},
		{"header for stdio", []string{"serve", "--header", "A: b", db, "--", "server"}, "--header is for --upstream URL, not a stdio server"},
		{"header without a fallback", []string{"serve", "--header", "A: b", db}, "--header is for a fallback server's requests: add --upstream URL"},
		{"redact without a server", []string{"serve", "--redact", "key", db}, "--redact is for what a fallback server adds"},
		{"redact an empty name", []string{"serve", "--redact", "", db, "--", "server"}, "serve: --redact wants a member or parameter name, got an empty one"},
		{"redact-value without a server", []string{"serve", "--redact-value", "sk-", db}, "--redact-value is for what a fallback server adds"},
		{"redact-value empty", []string{"serve", "--redact-value", "", db, "--", "server"}, `serve: --redact-value "": an empty pattern matches every value`},
		{"redact-value that does not compile", []string{"serve", "--redact-value", "sk-(", db, "--upstream", "http://127.0.0.1:1/mcp"}, `serve: --redact-value "sk-(": error parsing regexp`},
		{"header without colon", []string{"serve", "--header", "Bearer x", db, "--upstream", "http://127.0.0.1:1/mcp"}, `--header "Bearer …": want NAME: VALUE (no colon after the name)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runWith(t, "", tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tt.wantErr)
			}
		})
	}
}

// TestServe_FallbackStdio: the go-sdk server answers the add the
// cassette lacks; --strict passes (recorded anew is no miss), the report
// counts it apart, the cassette grows, and a second serve without the
// server answers the add from it.
func TestServe_FallbackStdio(t *testing.T) {
	db, _ := handshakeDB(t)
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	report := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runWith(t, hostSession, "serve", "--strict", "--report", report, db, "--", server)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	added := answerTo(t, stdout, "3")
	if !strings.Contains(added, `"structuredContent":{"sum":42}`) {
		t.Errorf("add: %s", added)
	}
	if !strings.Contains(answerTo(t, stdout, "2"), `"text":"recorded"`) {
		t.Errorf("echo: %s", stdout)
	}
	if want := "mcpmock: 1 request answered by the fallback server, recorded in " + db; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if r := readReport(t, report); r.Matched != 2 || r.RecordedAnew != 1 || len(r.Unmatched) != 0 || len(r.Unused) != 0 {
		t.Errorf("report: %+v; want 2 matched (initialize, echo), 1 recorded anew", r)
	}
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 2 || tape.Sessions[1].Info.Upstream != server || tape.Sessions[1].Info.Handshake.ProtocolVersion != "2025-06-18" {
		t.Fatalf("cassette: %d sessions; the new one %+v", len(tape.Sessions), tape.Sessions[len(tape.Sessions)-1].Info)
	}

	code, stdout2, stderr := runWith(t, hostSession, "serve", "--strict", "--report", report, db)
	if code != 0 {
		t.Fatalf("second serve: exit %d; stderr:\n%s", code, stderr)
	}
	if got := answerTo(t, stdout2, "3"); got != added {
		t.Errorf("replayed add: %s\nwant %s", got, added)
	}
	if r := readReport(t, report); r.Matched != 3 || r.RecordedAnew != 0 {
		t.Errorf("second report: %+v", r)
	}
}

// TestServe_FallbackWithoutDashes: a launcher that drops the "--" (the
// MCP Inspector's CLI drops every one) still starts the fallback server:
// its command starts at the first argument that is no SOURCE and names a
// program, and what follows it, flags included, is its own. A name that
// is neither stays an unknown SOURCE.
func TestServe_FallbackWithoutDashes(t *testing.T) {
	db, _ := handshakeDB(t)
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	code, stdout, stderr := runWith(t, hostSession, "serve", "--strict", db, "sh", "-c", `exec "$0"`, server)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if added := answerTo(t, stdout, "3"); !strings.Contains(added, `"structuredContent":{"sum":42}`) {
		t.Errorf("add: %s", added)
	}
	code, _, stderr = runWith(t, hostSession, "serve", db, "no-such-source-or-program")
	if want := `source "no-such-source-or-program": unknown kind`; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}

// TestServe_FallbackFromScratch: go-vcr's "record once". With the cassette
// not there yet (as the SOURCE, or as --record-new with no SOURCE), the
// go-sdk server answers everything, the host's own initialize included,
// and the file is created; a second serve answers it all from the file.
// A missing SOURCE that new sessions do not go to is still an error.
func TestServe_FallbackFromScratch(t *testing.T) {
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	for _, tc := range []struct {
		name string
		args func(db string) []string
	}{
		{"missing SOURCE", func(db string) []string { return []string{db} }},
		{"record-new without SOURCE", func(db string) []string { return []string{"--record-new", db} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, report := filepath.Join(dir, "new.db"), filepath.Join(dir, "r.json")
			args := append([]string{"serve", "--strict", "--report", report}, tc.args(db)...)
			code, stdout, stderr := runWith(t, hostSession, append(args, "--", server)...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if want := db + " does not exist yet: " + server + " answers every request"; !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
			if hello := answerTo(t, stdout, "1"); !strings.Contains(hello, `"serverInfo":{"name":"gosdkserver"`) {
				t.Errorf("initialize: %s; want the go-sdk server's own answer", hello)
			}
			if r := readReport(t, report); r.Matched != 0 || r.RecordedAnew != 3 || len(r.Unmatched) != 0 {
				t.Errorf("report: %+v; want initialize, echo and add recorded anew", r)
			}
			code, stdout2, stderr := runWith(t, hostSession, "serve", "--strict", "--report", report, db)
			if code != 0 {
				t.Fatalf("second serve: exit %d; stderr:\n%s", code, stderr)
			}
			for _, id := range []string{"1", "2", "3"} {
				if got, want := answerTo(t, stdout2, id), answerTo(t, stdout, id); got != want {
					t.Errorf("second serve answered %s\nwant, as the server did, %s", got, want)
				}
			}
			if r := readReport(t, report); r.Matched != 3 || len(r.Unused) != 0 {
				t.Errorf("second report: %+v", r)
			}
		})
	}
	t.Run("another SOURCE missing", func(t *testing.T) {
		dir := t.TempDir()
		missing := filepath.Join(dir, "missing.db")
		code, _, stderr := runWith(t, hostSession, "serve", "--record-new", filepath.Join(dir, "new.db"), missing, "--", server)
		if code == 0 || !strings.Contains(stderr, missing) {
			t.Errorf("exit %d, stderr %q; want a failure naming %s", code, stderr, missing)
		}
	})
}

// TestServe_FallbackStandsInForInitialized: a host that never sends
// notifications/initialized after a live handshake still has its request
// answered by the go-sdk server, which gets a notifications/initialized
// from mcpmock first, after the wait, as the cassette shows.
func TestServe_FallbackStandsInForInitialized(t *testing.T) {
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	db := filepath.Join(t.TempDir(), "new.db")
	noInitialized := strings.Join(slices.DeleteFunc(strings.SplitAfter(hostSession, "\n"), func(l string) bool {
		return strings.Contains(l, "notifications/initialized")
	}), "")
	code, stdout, stderr := runWith(t, noInitialized, "serve", db, "--", server)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if echo := answerTo(t, stdout, "2"); !strings.Contains(echo, `"text":"recorded"`) {
		t.Errorf("echo: %s", echo)
	}
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, m := range tape.Sessions[0].Messages {
		var f struct{ Method string }
		if err := json.Unmarshal(m.Frame, &f); err == nil && m.Dir == store.C2S {
			sent = append(sent, f.Method)
		}
	}
	if len(sent) < 3 || sent[0] != "initialize" || sent[1] != "notifications/initialized" {
		t.Errorf("sent to the server: %q; want initialize, then notifications/initialized, then the calls", sent)
	}
}

// A server that cannot start: the request gets an error saying so, the
// recorded ones are answered, --strict fails, and the report lists it.
func TestServe_FallbackCannotStart(t *testing.T) {
	_, jsonl := handshakeDB(t)
	report := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runWith(t, hostSession, "serve", "--strict", "--report", report, jsonl, "--", "/nonexistent/server", "--token", "s3cret")
	if code != 1 {
		t.Errorf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	got := answerTo(t, stdout, "3")
	for _, want := range []string{`"code":-32603`, "nothing recorded answers tools/call", "/nonexistent/server --token [redacted]", "cannot start it"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q: %s", want, got)
		}
	}
	if strings.Contains(stdout+stderr, "s3cret") {
		t.Error("the secret reached the output")
	}
	if want := "is not recorded: the first SOURCE is no .db cassette"; strings.Count(stderr, want) != 1 {
		t.Errorf("stderr should say once %q:\n%s", want, stderr)
	}
	if !strings.Contains(stderr, "1 the fallback server could not answer") {
		t.Errorf("--strict message:\n%s", stderr)
	}
	if r := readReport(t, report); r.Matched != 2 || len(r.FallbackFailed) != 1 || r.RecordedAnew != 0 {
		t.Errorf("report: %+v", r)
	}
}

// TestServe_FallbackCannotStartLeavesNoCassette: a cassette that does not
// exist yet, for a server that never started, is not created: an empty
// one would pass check and serve --strict with an invented initialize.
func TestServe_FallbackCannotStartLeavesNoCassette(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "new.db")
	_, stdout, stderr := runWith(t, hostSession, "serve", db, "--", "/nonexistent/server")
	if got := answerTo(t, stdout, "1"); !strings.Contains(got, "cannot start it") {
		t.Errorf("initialize: %s; want an error saying the server cannot start", got)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the directory holds %v (%v), want nothing; stderr:\n%s", entries, err, stderr)
	}
}

// TestServe_FallbackNeverStarted: a server command that could not be
// started any time a request needed it fails the run without --strict,
// naming the server and why; one never needed, one that started and then
// failed, and a URL (reached per request, maybe up later) do not.
func TestServe_FallbackNeverStarted(t *testing.T) {
	_, jsonl := handshakeDB(t)
	ln := httptest.NewServer(http.NotFoundHandler())
	deadURL := ln.URL + "/mcp"
	ln.Close() // nobody listens there now
	fromTape := strings.Join(strings.SplitAfter(hostSession, "\n")[:3], "")
	tests := []struct {
		name    string
		stdin   string
		server  []string
		code    int
		wantErr string
	}{
		{"cannot start, needed", hostSession, []string{"--", "/nonexistent/server"}, 1,
			`mcpmock: fallback server /nonexistent/server: cannot start it: exec: "/nonexistent/server"`},
		{"cannot start, not needed", fromTape, []string{"--", "/nonexistent/server"}, 0, ""},
		{"started, then exited", hostSession, []string{"--", "sh", "-c", "exit 3"}, 0, ""},
		{"URL nobody listens on", hostSession, []string{"--upstream", deadURL}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runWith(t, tt.stdin, append([]string{"serve", jsonl}, tt.server...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			for _, want := range []string{tt.wantErr, "no such file or directory; the 1 request that needed it got an error\n"} {
				if tt.wantErr != "" && !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

// TestServe_FallbackLeavesCassetteUntouched: a cassette the fallback
// server added nothing to keeps its bytes and its mtime, whether nothing
// was asked or everything was answered from it, so a golden cassette in
// git does not show as changed after a replay.
func TestServe_FallbackLeavesCassetteUntouched(t *testing.T) {
	fromTape := strings.Join(strings.SplitAfter(hostSession, "\n")[:3], "") // initialize, initialized, the recorded echo
	tests := []struct {
		name  string
		stdin string
	}{
		{"nothing asked", ""},
		{"all answered from the cassette", fromTape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := handshakeDB(t)
			old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := os.Chtimes(db, old, old); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runWith(t, tt.stdin, "serve", db, "--", "true")
			if code != 0 || strings.Contains(stdout, `"error"`) {
				t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			after, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("the cassette changed: %d of its %d bytes differ", differing(before, after), len(before))
			}
			if st, err := os.Stat(db); err != nil {
				t.Fatal(err)
			} else if !st.ModTime().Equal(old) {
				t.Errorf("the cassette's mtime is %v, was %v", st.ModTime(), old)
			}
		})
	}
}

// differing counts the bytes in which a and b differ, the longer's
// excess included.
func differing(a, b []byte) int {
	n := max(len(a), len(b)) - min(len(a), len(b))
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// TestServe_FallbackHTTPHeader: --header reaches the go-sdk server behind
// a bearer-token check, and the token never reaches the cassette; without
// it the request gets an error naming the refusal.
func TestServe_FallbackHTTPHeader(t *testing.T) {
	const token = "Bearer s3cret-token"
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdkserver") }, nil)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != token {
			http.Error(w, "no entry", http.StatusUnauthorized)
			return
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)

	t.Run("with the header", func(t *testing.T) {
		db, _ := handshakeDB(t)
		code, stdout, stderr := runWith(t, hostSession, "serve", "--strict", db, "--upstream", upstream.URL, "--header", "Authorization: "+token)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		if got := answerTo(t, stdout, "3"); !strings.Contains(got, `"structuredContent":{"sum":42}`) {
			t.Errorf("add: %s", got)
		}
		raw, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte("s3cret")) {
			t.Error("the token reached the cassette")
		}
		tape, err := store.Load(db)
		if err != nil {
			t.Fatal(err)
		}
		if len(tape.Sessions) != 2 || !strings.Contains(string(tape.Sessions[1].Messages[len(tape.Sessions[1].Messages)-1].Frame), `"sum":42`) {
			t.Errorf("the add was not recorded as a second session: %d sessions", len(tape.Sessions))
		}
	})
	t.Run("without it", func(t *testing.T) {
		db, _ := handshakeDB(t)
		code, stdout, stderr := runWith(t, hostSession, "serve", "--strict", db, "--upstream", upstream.URL)
		if code != 1 {
			t.Errorf("exit %d, want 1 (--strict, a request the fallback could not answer); stderr:\n%s", code, stderr)
		}
		if got := answerTo(t, stdout, "3"); !strings.Contains(got, `"code":-32603`) || !strings.Contains(got, "401") {
			t.Errorf("add: %s; want -32603 naming the 401", got)
		}
	})
}

// TestServe_FallbackRedact: --redact blanks a member in what the fallback
// server's session adds, and the grown cassette still answers the call
// (a redacted value matches any).
func TestServe_FallbackRedact(t *testing.T) {
	db, _ := handshakeDB(t)
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	code, stdout, stderr := runWith(t, hostSession, "serve", "--redact", "b", db, "--", server)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	added := answerTo(t, stdout, "3")
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	var frames []string
	for _, m := range tape.Sessions[len(tape.Sessions)-1].Messages {
		frames = append(frames, string(m.Frame))
	}
	recorded := strings.Join(frames, "\n")
	if !strings.Contains(recorded, `"b":"[redacted]"`) || strings.Contains(recorded, `"b":2`) {
		t.Errorf("the new session keeps b:\n%s", recorded)
	}
	code, stdout, stderr = runWith(t, hostSession, "serve", "--strict", db)
	if code != 0 {
		t.Fatalf("replay of the grown cassette: exit %d; stderr:\n%s", code, stderr)
	}
	if got := answerTo(t, stdout, "3"); got != added {
		t.Errorf("replayed add: %s\nwant %s", got, added)
	}
}

// TestServe_FallbackRedactValue: --redact-value keeps a key out of the
// cassette file wherever the fallback server's session holds it (a tool
// call's argument, the answer echoing it, the server's command line),
// while the host gets its echo whole; a replay of the grown cassette
// answers the call made with another key.
func TestServe_FallbackRedactValue(t *testing.T) {
	const (
		keyPattern = `sk-[A-Za-z0-9]{20,}`
		argKey     = "sk-ARGargARGargARGargARG01"
		cmdKey     = "sk-CMDcmdCMDcmdCMDcmdCMD01"
	)
	db, _ := handshakeDB(t)
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	session := func(key string) string {
		return strings.Replace(hostSession, `"name":"add","arguments":{"a":40,"b":2}`, `"name":"echo","arguments":{"text":"my key is `+key+`"}`, 1)
	}
	code, stdout, stderr := runWith(t, session(argKey), "serve", "--redact-value", keyPattern, db, "--", server, cmdKey)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if got, want := answerTo(t, stdout, "3"), `"text":"my key is `+argKey+`"`; !strings.Contains(got, want) {
		t.Errorf("echo: %s; want the server's answer whole, %s", got, want)
	}
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{argKey, cmdKey} {
		if bytes.Contains(raw, []byte(key)) {
			t.Errorf("the cassette file holds %s", key)
		}
	}
	if strings.Contains(stderr, cmdKey) {
		t.Errorf("stderr shows the key of the command line:\n%s", stderr)
	}
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	added := tape.Sessions[len(tape.Sessions)-1]
	if want := server + " [redacted]"; len(tape.Sessions) != 2 || added.Info.Upstream != want {
		t.Errorf("%d sessions, the new one's upstream %q; want 2, and %q", len(tape.Sessions), added.Info.Upstream, want)
	}
	var call string
	for _, m := range added.Messages {
		if m.Dir == store.C2S && strings.Contains(string(m.Frame), `"name":"echo"`) {
			call = string(m.Frame)
		}
	}
	if !strings.Contains(call, `"arguments":{"text":"[redacted]"}`) {
		t.Errorf("the recorded call is %s, want its text redacted", call)
	}

	code, stdout, stderr = runWith(t, session("sk-ANOTHERanotherANOTHER01"), "serve", "--strict", db)
	if code != 0 {
		t.Fatalf("replay of the grown cassette: exit %d; stderr:\n%s", code, stderr)
	}
	if got := answerTo(t, stdout, "3"); !strings.Contains(got, `"text":"[redacted]"`) {
		t.Errorf("replayed echo: %s; want the recorded answer, redacted", got)
	}
}

// TestServe_FallbackNewCassetteBesideASource: with a SOURCE that answers
// part of the session and a --record-new cassette not there yet, stderr
// says the server answers what no SOURCE does (not every request), and
// names the server without the credential in its URL.
func TestServe_FallbackNewCassetteBesideASource(t *testing.T) {
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdkserver") }, nil))
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	source, fresh := filepath.Join(dir, "handshake.jsonl"), filepath.Join(dir, "new.db")
	if err := os.WriteFile(source, []byte(handshakeTape), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runWith(t, hostSession, "serve", source, "--record-new", fresh, "--upstream", upstream.URL+"/mcp?api_key=zz-secret")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if got := answerTo(t, stdout, "3"); !strings.Contains(got, `"sum":42`) {
		t.Errorf("add: %s", got)
	}
	if want := fresh + " does not exist yet: "; !strings.Contains(stderr, want) || !strings.Contains(stderr, " answers what no SOURCE does") ||
		strings.Contains(stderr, "every request") || strings.Contains(stderr, "zz-secret") {
		t.Errorf("stderr:\n%s\nwant %q…%q, and no credential", stderr, want, "answers what no SOURCE does")
	}
}

// TestServe_FallbackIgnoreParams: --match ignore-params may name a method
// only the fallback server answers: mcpmock warns (a typo would be
// refused without a server) and serves; the server's answer is recorded,
// and the next serve, without the server, matches it by method alone.
func TestServe_FallbackIgnoreParams(t *testing.T) {
	db, _ := handshakeDB(t)
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	host := func(tag string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"host":"` + tag + `"}}}
`
	}
	code, stdout, stderr := runWith(t, host("first"), "serve", "--match", "ignore-params=tools/list", db, "--", server)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if want := "mcpmock: --match ignore-params=tools/list: no cassette recorded a request of method tools/list yet; the fallback server answers it until one does\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr:\n%s\nwant %q", stderr, want)
	}
	if !strings.Contains(answerTo(t, stdout, "2"), `"name":"echo"`) {
		t.Errorf("tools/list from the server: %s", stdout)
	}
	code, stdout, stderr = runWith(t, host("second"), "serve", "--match", "ignore-params=tools/list", db)
	if code != 0 || strings.Contains(stderr, "ignore-params") {
		t.Fatalf("exit %d, want 0 and no word about ignore-params; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(answerTo(t, stdout, "2"), `"name":"echo"`) {
		t.Errorf("tools/list replayed with other params: %s", stdout)
	}
}
