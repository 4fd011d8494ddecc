package mcpinspector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/interop/interoptest"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// The inspector's method arguments for the two runs every test makes: a
// tools/list, and a call of server-everything's echo (which the inspector
// precedes with a tools/list of its own, to convert the arguments).
var (
	listTools = []string{"--method", "tools/list"}
	callEcho  = []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"}
)

// run is how one inspector invocation ended.
type run struct {
	stdout, stderr string
	err            error // nil when it exited 0
}

// inspect runs `mcp-inspector --cli args...` in a fresh directory (see
// TestInspector_ParentPackageJSON for why that matters) and waits for it
// to exit, at most a minute.
func inspect(t *testing.T, args ...string) run {
	t.Helper()
	return inspectIn(t, t.TempDir(), args...)
}

func inspectIn(t *testing.T, dir string, args ...string) run {
	t.Helper()
	argv := peertest.InspectorCLI(t, args...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second // its CLI proper is a child that shares stdout
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("inspector %q still running after a minute; stderr:\n%s", args, stderr.String())
	}
	return run{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// mustInspect is inspect for a run that must succeed; it returns stdout.
func mustInspect(t *testing.T, args ...string) string {
	t.Helper()
	r := inspect(t, args...)
	if r.err != nil {
		t.Fatalf("inspector %q: %v; stderr:\n%s", args, r.err, r.stderr)
	}
	return r.stdout
}

// stdioArgs returns the inspector's arguments for a stdio server started
// as argv, with the method arguments. Each of the inspector's two layers
// (its bin, and the CLI proper it starts) takes the first "--" for the end
// of its own options and drops it. So a "--" must be given twice to keep
// the CLI proper off the server's own flags (node's --require), and the
// "--" of mcpspy record's command line never reaches mcpspy
// (TestInspector_EatsDoubleDash), which takes the server's command
// without it. The method arguments come before them.
func stdioArgs(method []string, argv ...string) []string {
	i := slices.Index(argv, "--")
	if i < 0 {
		return slices.Concat(argv, method)
	}
	return slices.Concat(argv[:i], method, []string{"--", "--"}, argv[i+1:])
}

// urlArgs returns the inspector's arguments for a server at u over transport
// ("http" or "sse"). The URL is the target: --server-url is for the web
// UI only (TestInspector_ServerURLFlag).
func urlArgs(u, transport string, method []string) []string {
	return slices.Concat([]string{u, "--transport", transport}, method)
}

// toolNames returns the names in a tools/list result (the inspector's
// output, or a recorded frame's result).
func toolNames(t *testing.T, result []byte) []string {
	t.Helper()
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("tools/list result: %v\n%s", err, result)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// callText returns a tools/call result's text blocks, joined by " | ",
// with "isError" added when the result says so.
func callText(t *testing.T, result []byte) string {
	t.Helper()
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("tools/call result: %v\n%s", err, result)
	}
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Type+": "+c.Text)
	}
	if r.IsError {
		parts = append(parts, "isError")
	}
	return strings.Join(parts, " | ")
}

// listChanged is the notification server-everything sends after
// initialized: where it lands among the client's requests is the
// server's timing, so shape counts it apart.
const listChanged = "notifications/tools/list_changed"

// shape lists a session's messages as "dir kind method-or-id", but for
// list_changed notifications, which it counts. Legacy SSE's endpoint
// event is "s2c endpoint".
func shape(msgs []*store.Message) (rest []string, changed int) {
	for _, m := range msgs {
		s := jsonrpc.Classify(m.Frame)
		switch {
		case s.Method == listChanged:
			changed++
			continue
		case s.Kind == jsonrpc.Malformed && m.HTTP != nil && m.HTTP.EventType == "endpoint":
			rest = append(rest, fmt.Sprintf("%s endpoint", m.Dir))
			continue
		}
		what := s.Method
		if what == "" {
			what = "id=" + s.ID
		}
		rest = append(rest, fmt.Sprintf("%s %s %s", m.Dir, s.Kind, what))
	}
	return rest, changed
}

// The sessions each inspector run makes, in shape's terms: the
// inspector's ids start at 0, and it sets the level before anything else.
var (
	wantHandshake = []string{
		"c2s request initialize", "s2c response id=0",
		"c2s notification notifications/initialized",
		"c2s request logging/setLevel", "s2c response id=1",
		"c2s request tools/list", "s2c response id=2",
	}
	wantListSession = wantHandshake
	wantCallSession = append(slices.Clone(wantHandshake), "c2s request tools/call", "s2c response id=3")
)

// answer returns the result of the response to the c2s request method
// (with tool, for tools/call) in a session.
func answer(t *testing.T, s store.TapeSession, method, tool string) []byte {
	t.Helper()
	id := ""
	for _, m := range s.Messages {
		sum := jsonrpc.Classify(m.Frame)
		switch {
		case m.Dir == store.C2S && sum.Kind == jsonrpc.Request && sum.Method == method && sum.Tool == tool:
			id = sum.ID
		case m.Dir == store.S2C && sum.Kind == jsonrpc.Response && id != "" && sum.ID == id:
			var r struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(m.Frame, &r); err != nil {
				t.Fatalf("session %s seq %d: %v", s.Info.ID, m.Seq, err)
			}
			return r.Result
		}
	}
	t.Fatalf("session %s has no answer to %s %s", s.Info.ID, method, tool)
	return nil
}

// inspectorInfo is the clientInfo the inspector sends: its package's name
// (less the scope) and version.
const inspectorInfo = `{"name":"inspector","version":"0.22.0"}`

// checkHandshake checks what a session recorded of the handshake between
// the inspector and server-everything.
func checkHandshake(t *testing.T, s store.TapeSession, transport string) {
	t.Helper()
	h := s.Info.Handshake
	if s.Info.Transport != transport || h.Method != "initialize" || h.ProtocolVersion != "2025-11-25" ||
		string(h.ClientInfo) != inspectorInfo || !strings.Contains(string(h.ServerInfo), `"name":"mcp-servers/everything"`) ||
		!strings.Contains(string(h.Capabilities), `"logging":{}`) {
		t.Errorf("session %s: info %+v, handshake %+v", s.Info.ID, s.Info, h)
	}
}

// readReport waits for mcpmock's report (written when it exits; over
// stdio that is after the inspector has exited, see waitEnded) and
// returns it.
func readReport(t *testing.T, path string) replay.Report {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			var r replay.Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("report %s: %v\n%s", path, err, b)
			}
			return r
		}
		if !errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			t.Fatalf("mcpmock wrote no report within 20 s: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // polling, with a deadline
	}
}

// checkClean checks that a report has matched requests, none unmatched
// and nothing recorded unused.
func checkClean(t *testing.T, r replay.Report, matched int) {
	t.Helper()
	if len(r.Unmatched) > 0 || len(r.Unused) > 0 || r.Matched != matched {
		t.Errorf("report: %d matched (want %d), unmatched %+v, unused %q", r.Matched, matched, r.Unmatched, r.Unused)
	}
}

// recordEverythingHTTP starts server-everything in mode ("streamableHttp"
// or "sse") and mcpspy recording it into a new cassette named name, and
// returns the cassette, mcpspy, and mcpspy's URL for path.
func recordEverythingHTTP(t *testing.T, name, mode, path string) (db string, spy *peertest.Process, url string) {
	t.Helper()
	db = filepath.Join(t.TempDir(), name)
	interoptest.LogOnFailure(t, db)
	up := peertest.EverythingHTTP(t, mode)
	spy = peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpspy"), "record", "-o", db, "--listen", "127.0.0.1:0", "--upstream", up)
	return db, spy, spy.WaitLine(t, "mcpspy: listening on ", 20*time.Second) + path
}

// checkHAR exports tape as mcpspy export --har does and checks it
// against the recording: each client message is the body of exactly one
// request of its session's page, and each server message is in the
// response of one (a JSON body, or an event of a rebuilt stream).
func checkHAR(t *testing.T, tape *store.Tape) {
	t.Helper()
	h, skipped := store.BuildHAR(tape, "test")
	if len(skipped) > 0 {
		t.Fatalf("HAR left out HTTP sessions: %+v", skipped)
	}
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		t.Fatal(err)
	}
	var har struct {
		Log struct {
			Entries []struct {
				Pageref string
				Comment string
				Request struct {
					Method   string
					PostData *struct{ Text string }
				}
				Response struct {
					Status  int
					Content struct{ Text string }
				}
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &har); err != nil {
		t.Fatalf("HAR: %v", err)
	}
	// Every request was answered, with a message or without (202): the
	// cassette has every status, none is inferred or missing.
	for _, e := range har.Log.Entries {
		if e.Response.Status == 0 || strings.Contains(e.Comment, "inferred") {
			t.Errorf("HAR: %s %s: status %d (%s)", e.Pageref, e.Request.Method, e.Response.Status, e.Comment)
		}
	}
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			bodies, answers := 0, 0
			for _, e := range har.Log.Entries {
				if e.Pageref != s.Info.ID {
					continue
				}
				if e.Request.PostData != nil && e.Request.PostData.Text == string(m.Frame) {
					bodies++
				}
				if strings.Contains(e.Response.Content.Text, string(m.Frame)) {
					answers++
				}
			}
			switch {
			case m.Dir == store.C2S && bodies != 1:
				t.Errorf("HAR: %s seq %d is the body of %d requests, want 1", s.Info.ID, m.Seq, bodies)
			case m.Dir == store.S2C && m.HTTP.EventType != "endpoint" && answers == 0:
				t.Errorf("HAR: %s seq %d is in no response", s.Info.ID, m.Seq)
			}
		}
	}
}
