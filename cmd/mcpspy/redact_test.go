package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/cli"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// export --redact on the shipped real-peer cassette: the named values are
// blanked and nothing else changes; a go-sdk client replaying the export
// with values of its own gets the recorded answers.
func TestMcpspy_ExportRedact(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	plain, _ := runText(t, "export", db)
	out := filepath.Join(t.TempDir(), "shared.jsonl")
	_, stderr := runText(t, "export", "--redact", "MESSAGE", "--redact", "location", "-o", out, db)
	if want := "mcpspy: export: redacted 2 values in 2 messages\n"; string(stderr) != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	shared, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	was, now := strings.Split(string(plain), "\n"), strings.Split(string(shared), "\n")
	if len(was) != len(now) {
		t.Fatalf("%d lines, the plain export has %d", len(now), len(was))
	}
	changed := map[string]string{ // what each changed line held, and holds now
		`"arguments":{"message":"hello from mcptape"}`: `"arguments":{"message":"[redacted]"}`,
		`"arguments":{"location":"New York"}`:          `"arguments":{"location":"[redacted]"}`,
	}
	for i := range was {
		if was[i] == now[i] {
			continue
		}
		found := false
		for from, to := range changed {
			if strings.Replace(was[i], from, to, 1) == now[i] {
				found = true
				delete(changed, from)
			}
		}
		if !found {
			t.Errorf("line %d changed otherwise than by the redaction:\n%s\n%s", i+1, was[i], now[i])
		}
	}
	if len(changed) > 0 {
		t.Errorf("not redacted: %v", changed)
	}
	// The tool schemas name the redacted fields; they stay whole.
	if !strings.Contains(string(shared), `"properties":{"message":{"type":"string"`) {
		t.Errorf("the echo tool's inputSchema was changed")
	}

	srv, cs, ctx := replayWithGoClient(t, out)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list from the redacted export: %v, %v", tools, err)
	}
	for _, call := range []struct {
		tool, arg, value, want string
	}{
		{"echo", "message", "what this host sends today", "Echo: hello from mcptape"},
		{"get-structured-content", "location", "Paris", `"temperature"`},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: map[string]any{call.arg: call.value}})
		if err != nil {
			t.Fatalf("%s: %v", call.tool, err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, call.want) {
			t.Errorf("%s answered %q, want the recorded answer (%q)", call.tool, got, call.want)
		}
	}
	// Only the redacted member is free: another argument still misses.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: map[string]any{"a": 2, "b": 4}})
	if err == nil && !res.IsError {
		t.Errorf("get-sum with other numbers answered %+v; want no recorded answer", res.Content)
	}
	if r := srv.Report(); len(r.Unmatched) != 1 || r.Unmatched[0].Method != "tools/call" {
		t.Errorf("unmatched %+v, want the get-sum call only", r.Unmatched)
	}
}

// Headers and query parameters named by --redact are blanked in the HTTP
// metadata, with the credentials the recorder always hides; a filtered
// export is redacted too; the result imports.
func TestMcpspy_ExportRedactHTTP(t *testing.T) {
	db := shippedCassette(t, "everything-http.db")
	dir := t.TempDir()
	out := filepath.Join(dir, "shared.jsonl")
	runText(t, "export", "--redact", "user-agent", "--redact", "message", "--filter", "tool:echo", "-o", out, db)
	shared, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"User-Agent":["[redacted]"]`, `"arguments":{"message":"[redacted]"}`} {
		if !bytes.Contains(shared, []byte(want)) {
			t.Errorf("the export lacks %s:\n%s", want, shared)
		}
	}
	if bytes.Contains(shared, []byte(`"node"`)) {
		t.Errorf("the user agent is still there:\n%s", shared)
	}
	runOK(t, "import", "-o", filepath.Join(dir, "shared.db"), out)
}

func TestMcpspy_ExportRedactWarnings(t *testing.T) {
	db := shippedCassette(t, "everything-stdio.db")
	out, stderr := runText(t, "export", "--redact", "no_such_member", db)
	if want := "mcpspy: export: no member, header or query parameter is named no_such_member; no value was redacted\n"; string(stderr) != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	if plain, _ := runText(t, "export", db); !bytes.Equal(out, plain) {
		t.Errorf("a --redact that matched nothing changed the export")
	}
}

// runText runs mcpspy with args and returns what it wrote.
func runText(tb testing.TB, args ...string) (stdout, stderr []byte) {
	tb.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errb}); err != nil {
		tb.Fatalf("mcpspy %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes(), errb.Bytes()
}

// A frame that is not JSON cannot be looked into: export says so.
func TestMcpspy_ExportRedactNotJSON(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	lines := `{"session":"s1","info":{"transport":"stdio","start":"2026-11-22T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-22T10:00:00Z","raw":"{\"password\": oops"}
{"session":"s1","seq":2,"dir":"c2s","time":"2026-11-22T10:00:01Z","message":{"jsonrpc":"2.0","id":1,"method":"login","params":{"password":"p"}}}
`
	if err := os.WriteFile(in, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr := runText(t, "export", "--redact", "password", in)
	if !bytes.Contains(out, []byte(`"params":{"password":"[redacted]"}`)) || !bytes.Contains(out, []byte(`"raw":"{\"password\": oops"`)) {
		t.Errorf("export:\n%s", out)
	}
	want := "mcpspy: export: redacted 1 value in 1 message\nmcpspy: export: 1 message is not JSON, written as it came: check it by hand before sharing\n"
	if string(stderr) != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

// record --redact over stdio: the go-sdk client and server see every byte
// (the echo comes back whole), the cassette holds "[redacted]" in the
// request and in the answer, and mcpmock replays it for any text.
func TestMcpspy_RecordRedactStdio(t *testing.T) {
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	db := filepath.Join(t.TempDir(), "c.db")
	toSpy, clientIn := io.Pipe()
	clientOut, fromSpy := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(context.Background(), []string{"record", "-o", db, "--redact", "TEXT", "--", server},
			streams{In: toSpy, Out: fromSpy, Err: io.Discard})
		fromSpy.Close()
		done <- err
	}()
	echoSecret(t, &mcp.IOTransport{Reader: clientOut, Writer: clientIn}, "my secret words")
	if err := <-done; err != nil {
		t.Fatalf("record: %v", err)
	}
	requireRedacted(t, db, "my secret words", `"arguments":{"text":"[redacted]"}`, `"text":"[redacted]"`)

	_, cs2, ctx2 := replayWithGoClient(t, db)
	res, err := cs2.CallTool(ctx2, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "anything at all"}})
	if err != nil || res.IsError {
		t.Fatalf("replay of the redacted call: %v %+v", err, res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "[redacted]" {
		t.Errorf("replayed %q, want the stored \"[redacted]\"", got)
	}
}

// recordGoStdio records the go-sdk test server through mcpspy record on
// stdio into db, while drive has a go-sdk client (with opts) talk to it.
// flags go to record, serverArgs to the server.
func recordGoStdio(t *testing.T, db string, flags, serverArgs []string, opts *mcp.ClientOptions, drive func(context.Context, *mcp.ClientSession)) {
	t.Helper()
	server := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	args := append(append(append([]string{"record", "-o", db}, flags...), "--", server), serverArgs...)
	toSpy, clientIn := io.Pipe()
	clientOut, fromSpy := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(context.Background(), args, streams{In: toSpy, Out: fromSpy, Err: io.Discard})
		fromSpy.Close()
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts).Connect(ctx, &mcp.IOTransport{Reader: clientOut, Writer: clientIn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	drive(ctx, cs)
	cs.Close()
	if err := <-done; err != nil {
		t.Fatalf("record: %v", err)
	}
}

// record --redact over Streamable HTTP blanks message members as well as
// the header of that name.
func TestMcpspy_RecordRedactHTTP(t *testing.T) {
	t.Parallel()
	upstream := peertest.Start(t, t.TempDir(), nil, nil, nil, peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver"), "-http", "127.0.0.1:0")
	up := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(upstream.WaitLine(t, "gosdkserver: listening on ", 30*time.Second), "gosdkserver: listening on ")), "/")
	db := filepath.Join(t.TempDir(), "c.db")
	sp := startSpy(t, "-o", db, "--redact", "text", "--upstream", up+"/mcp")
	echoSecret(t, &mcp.StreamableClientTransport{Endpoint: sp.url + "/mcp"}, "my secret words")
	if err := sp.stop(t); err != nil {
		t.Fatalf("mcpspy: %v\n%s", err, sp.stderr)
	}
	requireRedacted(t, db, "my secret words", `"arguments":{"text":"[redacted]"}`)
}

// echoSecret has a go-sdk client call the go-sdk server's echo with
// secret over tr, and checks the secret comes back whole: forwarding is
// never redacted.
func echoSecret(t *testing.T, tr mcp.Transport, secret string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": secret}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != secret {
		t.Errorf("the client got %q: forwarding must not be redacted", got)
	}
}

// requireRedacted checks that no frame of the cassette holds secret and
// that each of want is in some frame.
func requireRedacted(t *testing.T, db, secret string, want ...string) {
	t.Helper()
	var all strings.Builder
	for _, s := range readTape(t, db).Sessions {
		for _, m := range s.Messages {
			all.Write(m.Frame)
			all.WriteByte('\n')
		}
	}
	if strings.Contains(all.String(), secret) {
		t.Errorf("the cassette holds %q:\n%s", secret, all.String())
	}
	for _, w := range want {
		if !strings.Contains(all.String(), w) {
			t.Errorf("no frame holds %s:\n%s", w, all.String())
		}
	}
}

// Export names the members it left that look like credentials, so that a
// --redact the user did not think of is not missed; the protocol's
// progressToken, tool schemas and the members it redacted do not count.
func TestMcpspy_ExportRedactNamesWhatItLeft(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	lines := `{"session":"s1","info":{"transport":"stdio","start":"2026-11-22T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-22T10:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"p","apiKey":"k1","session":{"refreshToken":"r"}},"_meta":{"progressToken":7}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-22T10:00:01Z","message":{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"apiKey":"k2"}}}}
{"session":"s1","seq":3,"dir":"s2c","time":"2026-11-22T10:00:02Z","message":{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"login","inputSchema":{"type":"object","properties":{"apiKey":{"type":"string"}}}}]}}}
`
	if err := os.WriteFile(in, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr := runText(t, "export", "--redact", "PASSWORD", in)
	want := "mcpspy: export: redacted 1 value in 1 message\n" +
		"mcpspy: export: left as they were, though named like credentials: apiKey ×2, refreshToken ×1; add --redact NAME to hide one\n"
	if string(stderr) != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
}

// export --redact-value finds a secret by what it looks like, whatever
// its member is called: the go-sdk server's echo, recorded on stdio with a
// key in the text, is exported without the key in the request or in the
// answer, and the export replays to a host that sends its own key.
func TestMcpspy_ExportRedactValue(t *testing.T) {
	const secret = "my key is sk-ABCDEFGHIJKLMNOPQRSTUVWX"
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	recordGoStdio(t, db, nil, nil, nil, func(ctx context.Context, cs *mcp.ClientSession) {
		for _, text := range []string{secret, "nothing secret here"} {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}); err != nil {
				t.Fatal(err)
			}
		}
	})

	out := filepath.Join(dir, "shared.jsonl")
	_, stderr := runText(t, "export", "--redact-value", keyPattern, "-o", out, db)
	if !strings.Contains(string(stderr), "redacted 2 values in 2 messages") {
		t.Errorf("stderr: %s", stderr)
	}
	requireRedacted(t, out, "sk-ABCDEFGHIJKLMNOPQRSTUVWX", `"arguments":{"text":"[redacted]"}`, `"text":"[redacted]"`, `"nothing secret here"`)

	replaysWithAnyKey(t, out)
}

// replaysWithAnyKey checks that mcpmock answers an echo call, whose text
// was redacted in path, when the host sends a key of its own.
func replaysWithAnyKey(t *testing.T, path string) {
	t.Helper()
	srv, cs, ctx := replayWithGoClient(t, path)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "my key is sk-0000000000000000000000000"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != store.Redacted {
		t.Errorf("replaying the redacted call: %v %+v", err, res)
	}
	if r := srv.Report(); len(r.Unmatched) > 0 {
		t.Errorf("unmatched: %+v", r.Unmatched)
	}
}

// --redact-value blanks a member holding an array with a secret in it (a
// command line), header values, and query values and path segments of
// the recorded paths; a pattern that does not compile, or
// an empty one, is a usage error naming it.
func TestMcpspy_ExportRedactValueShapes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	lines := `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/mcp","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":"sk-AAAAAAAAAAAAAAAAAAAAAAAA","method":"tools/call","params":{"name":"run","arguments":{"argv":["tool","--key","sk-AAAAAAAAAAAAAAAAAAAAAAAA"],"opts":[{"token":"x"},{"k":"sk-AAAAAAAAAAAAAAAAAAAAAAAA"}]}}},"http":{"method":"POST","path":"/mcp/sk-AAAAAAAAAAAAAAAAAAAAAAAA/x?org=sk-AAAAAAAAAAAAAAAAAAAAAAAA&page=2","request_header":{"X-Upstream-Auth":["sk-AAAAAAAAAAAAAAAAAAAAAAAA"],"Accept":["application/json"]}}}
`
	if err := os.WriteFile(in, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := runText(t, "export", "--redact-value", `sk-[A`+`-Z]{20,}`, in)
	got := string(out)
	for _, want := range []string{`"id":"sk-AAAAAAAAAAAAAAAAAAAAAAAA"`, `"argv":"[redacted]"`, `"opts":[{"token":"x"},{"k":"[redacted]"}]`, `"X-Upstream-Auth":["[redacted]"]`, `"Accept":["application/json"]`, `"path":"/mcp/[redacted]/x?org=[redacted]&page=2"`} {
		if !strings.Contains(got, want) {
			t.Errorf("export lacks %s:\n%s", want, got)
		}
	}
	for _, bad := range []string{"(", ""} {
		var errb bytes.Buffer
		err := run(context.Background(), []string{"export", "--redact-value", bad, in}, streams{In: strings.NewReader(""), Out: io.Discard, Err: &errb})
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--redact-value") {
			t.Errorf("--redact-value %q: %v", bad, err)
		}
	}
}

const keyPattern = `sk-[A-Za-z0-9]{20,}`

// requireNotInFile checks that no byte run of the cassette file holds any
// of secrets: not a frame, not a header, not the session's info.
func requireNotInFile(t *testing.T, db string, secrets ...string) {
	t.Helper()
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(raw), s) {
			t.Errorf("the cassette file holds %q", s)
		}
	}
}

// record --redact-value over stdio, with the go-sdk server as the real
// peer: a key in a tool call and its echo, and one given to the server as
// a command-line argument, never reach the cassette, while the client gets
// the echo whole; the cassette replays to a host that sends its own key.
func TestMcpspy_RecordRedactValueStdio(t *testing.T) {
	const (
		callKey = "sk-ABCDEFGHIJKLMNOPQRSTUVWX"
		argKey  = "sk-ZYXWVUTSRQPONMLKJIHGFEDC"
	)
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoStdio(t, db, []string{"--redact-value", keyPattern}, []string{argKey}, nil, func(ctx context.Context, cs *mcp.ClientSession) {
		for _, text := range []string{"my key is " + callKey, "nothing secret here"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != text {
				t.Errorf("the client got %q, want %q: forwarding must not be redacted", got, text)
			}
		}
	})
	requireRedacted(t, db, callKey, `"arguments":{"text":"[redacted]"}`, `"text":"[redacted]"`, `"nothing secret here"`)
	requireNotInFile(t, db, callKey, argKey)
	tape := readTape(t, db)
	if len(tape.Sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(tape.Sessions))
	}
	if up := tape.Sessions[0].Info.Upstream; !strings.Contains(up, "gosdkserver") || !strings.HasSuffix(up, " "+store.Redacted) {
		t.Errorf("stored command line %q, want the server with its argument redacted", up)
	}

	replaysWithAnyKey(t, db)
}

// record --redact-value over Streamable HTTP, through the binary, with the
// go-sdk server and client: a key in a header whose name says nothing, in
// the upstream URL's query and in a tool call are stored "[redacted]",
// and the client gets its echo whole.
func TestMcpspy_RecordRedactValueHTTP(t *testing.T) {
	t.Parallel()
	const (
		headerKey = "sk-HEADERHEADERHEADERHEADER"
		queryKey  = "sk-QUERYQUERYQUERYQUERYQUERY"
		callKey   = "sk-CALLCALLCALLCALLCALLCALL"
	)
	upstream := peertest.Start(t, t.TempDir(), nil, nil, nil, peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver"), "-http", "127.0.0.1:0")
	up := strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(upstream.WaitLine(t, "gosdkserver: listening on ", 30*time.Second), "gosdkserver: listening on ")), "/")
	db := filepath.Join(t.TempDir(), "c.db")
	sp := startSpy(t, "-o", db, "--redact-value", keyPattern, "--upstream", up+"/mcp?org="+queryKey)
	client := &http.Client{Transport: peertest.HeaderTransport{Name: "X-Credential", Value: "Bearer " + headerKey}}
	// "/" is the upstream URL itself, query and all.
	echoSecret(t, &mcp.StreamableClientTransport{Endpoint: sp.url + "/", HTTPClient: client}, "my key is "+callKey)
	if err := sp.stop(t); err != nil {
		t.Fatalf("mcpspy: %v\n%s", err, sp.stderr)
	}
	requireRedacted(t, db, callKey, `"arguments":{"text":"[redacted]"}`, `"text":"[redacted]"`)
	requireNotInFile(t, db, headerKey, queryKey, callKey)

	// The go-sdk client asks server/discover first, then falls back to
	// initialize: two sessions.
	posts := 0
	for _, s := range readTape(t, db).Sessions {
		if !strings.HasSuffix(s.Info.Upstream, "/mcp?org="+store.Redacted) {
			t.Errorf("%s: stored upstream %q, want its org redacted", s.Info.ID, s.Info.Upstream)
		}
		for _, m := range s.Messages {
			if m.HTTP == nil || m.Dir != store.C2S {
				continue
			}
			posts++
			if got := m.HTTP.RequestHeader["X-Credential"]; !slices.Equal(got, []string{store.Redacted}) {
				t.Errorf("%s #%d: X-Credential stored as %q", s.Info.ID, m.Seq, got)
			}
			if m.HTTP.Path != "/mcp?org="+store.Redacted {
				t.Errorf("%s #%d: path stored as %q", s.Info.ID, m.Seq, m.HTTP.Path)
			}
		}
	}
	if posts == 0 {
		t.Errorf("no client message was recorded")
	}
}

// An export without --redact of a recording that kept credentials (a
// browser's HAR imported with --no-redact) writes them as they are, and
// says so, in JSONL and HAR alike; with --redact it hides them; one of a
// redacted recording says nothing.
func TestMcpspy_ExportWarnsOfKeptCredentials(t *testing.T) {
	har := filepath.Join(peertest.ModuleRoot(), "store", "testdata", "browser.har")
	dir := t.TempDir()
	kept, redacted := filepath.Join(dir, "kept.db"), filepath.Join(dir, "redacted.db")
	runOK(t, "import", "--no-redact", "-o", kept, har)
	runOK(t, "import", "-o", redacted, har)
	const key = "sk-live-0123456789abcdef"
	const warning = "mcpspy: export: 10 messages hold credentials that mcpspy record hides, written as they are"
	for _, args := range [][]string{{"export"}, {"export", "--har"}} {
		out, stderr := runText(t, append(args, kept)...)
		if !bytes.Contains(out, []byte(key)) || !strings.HasPrefix(string(stderr), warning) {
			t.Errorf("%s of a recording that kept a key: key written %v, stderr %q; want it written and %q",
				args, bytes.Contains(out, []byte(key)), stderr, warning)
		}
		if _, stderr := runText(t, append(args, redacted)...); len(stderr) > 0 {
			t.Errorf("%s of a redacted recording: stderr %q, want none", args, stderr)
		}
	}
	if out, stderr := runText(t, "export", "--redact", "authorization", kept); bytes.Contains(out, []byte(key)) || strings.Contains(string(stderr), warning) {
		t.Errorf("export --redact authorization: key written %v, stderr %q", bytes.Contains(out, []byte(key)), stderr)
	}
}
