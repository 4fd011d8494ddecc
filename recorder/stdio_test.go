package recorder_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func buildGoSDKServer(t testing.TB) string {
	t.Helper()
	return peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
}

// goSDKSession runs the same client exchange against a transport and
// returns what the client saw.
func goSDKSession(t *testing.T, transport mcp.Transport) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var progress []float64
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptape-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	seen := map[string]any{"server": cs.InitializeResult().ServerInfo}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	seen["tools"] = names
	progressCall := mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3}}
	progressCall.SetProgressToken("tok-1")
	for _, call := range []mcp.CallToolParams{
		{Name: "echo", Arguments: map[string]any{"text": "héllo <&> \u2028"}},
		{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}},
		progressCall,
	} {
		res, err := cs.CallTool(ctx, &call)
		if err != nil {
			t.Fatalf("call %s: %v", call.Name, err)
		}
		seen[call.Name] = res
	}
	// Notifications are handled apart from the call's result: wait for them.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n >= 3 {
			break
		}
	}
	mu.Lock()
	seen["progress-notifications"] = progress
	mu.Unlock()
	return seen
}

func TestStdio_GoSDKThroughMcpspy(t *testing.T) {
	spy := peertest.Binary(t, "mcpspy")
	server := buildGoSDKServer(t)
	db := filepath.Join(t.TempDir(), "gosdk.db")

	direct := goSDKSession(t, &mcp.CommandTransport{Command: exec.Command(server)})
	proxied := goSDKSession(t, &mcp.CommandTransport{Command: exec.Command(spy, "record", "-o", db, "--session", "gosdk", "--", server)})
	if d := cmp.Diff(jsonOf(t, direct), jsonOf(t, proxied)); d != "" {
		t.Fatalf("client saw different results through mcpspy (-direct +proxied):\n%s", d)
	}

	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(tape.Sessions))
	}
	s := tape.Sessions[0]
	if s.Info.Name != "gosdk" || s.Info.Transport != store.TransportStdio || s.Info.End == nil {
		t.Errorf("session info %+v", s.Info)
	}
	// go-sdk v1.8 on both ends speaks the stateless 2026-07-28 era: no
	// initialize, serverInfo in each result's _meta.
	h := s.Info.Handshake
	if h.Method != "server/discover" || h.ProtocolVersion != "2026-07-28" || !strings.Contains(string(h.ServerInfo), "gosdkserver") || !strings.Contains(string(h.ClientInfo), "mcptape-test") || !strings.Contains(string(h.Capabilities), `"tools"`) {
		t.Errorf("handshake not recorded: %s %s server %s client %s capabilities %s", h.Method, h.ProtocolVersion, h.ServerInfo, h.ClientInfo, h.Capabilities)
	}
	methods := assertPaired(t, s.Messages)
	for _, want := range []string{"server/discover", "tools/list", "tools/call", "notifications/progress"} {
		if methods[want] == 0 {
			t.Errorf("no %s in the cassette (methods: %v)", want, methods)
		}
	}
}

// assertPaired checks seqs are dense and every request has exactly one
// answer with the same id in the other direction, after it. It returns the
// count of each method seen.
func assertPaired(t *testing.T, msgs []*store.Message) map[string]int {
	t.Helper()
	methods := map[string]int{}
	type key struct {
		dir store.Dir
		id  string
	}
	open := map[key]uint64{}
	for i, m := range msgs {
		if m.Seq != uint64(i+1) {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
		c := jsonrpc.Classify(m.Frame)
		switch c.Kind {
		case jsonrpc.Request:
			methods[c.Method]++
			open[key{m.Dir, c.ID}] = m.Seq
		case jsonrpc.Notification:
			methods[c.Method]++
		case jsonrpc.Response, jsonrpc.Error:
			k := key{1 - m.Dir, c.ID}
			if _, ok := open[k]; !ok {
				t.Errorf("seq %d: %s answer to id %s with no request before it", m.Seq, m.Dir, c.ID)
			}
			delete(open, k)
		}
	}
	for k, seq := range open {
		t.Errorf("request seq %d (%s id %s) never answered", seq, k.dir, k.id)
	}
	return methods
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStdio_TSClientAndServerEverything(t *testing.T) {
	spy := peertest.Binary(t, "mcpspy")
	dir := t.TempDir()
	db := filepath.Join(dir, "everything.db")
	everything := peertest.ServerEverything(t, "stdio")

	run := func(argv ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, stderr.String())
		}
		var seen map[string]any
		if err := json.Unmarshal(out, &seen); err != nil {
			t.Fatalf("client output: %v\n%s", err, out)
		}
		return seen
	}
	client := peertest.NodeScript(t, "stdio-everything.mjs")
	direct := run(append(client, everything...)...)
	proxied := run(append(client, append([]string{spy, "record", "-o", db, "--"}, everything...)...)...)
	// Surprise: the TS SDK 1.32.2 client handles a progress notification
	// a tick after reading it but the response at once, so the last
	// progress, sent right before the result, is often dropped by the
	// client itself (with or without mcpspy). Compare what the client saw
	// of progress only as far as it is stable; the cassette below must
	// hold all three.
	for _, seen := range []map[string]any{direct, proxied} {
		if p, _ := seen["progress"].([]any); len(p) < 2 {
			t.Errorf("progress notifications seen: %v", seen["progress"])
		}
		delete(seen, "progress")
	}
	if d := cmp.Diff(direct, proxied); d != "" {
		t.Fatalf("TS client saw different results through mcpspy (-direct +proxied):\n%s", d)
	}

	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	s := tape.Sessions[0]
	methods := assertPaired(t, s.Messages)
	if methods["notifications/progress"] != 3 || methods["tools/call"] != 5 {
		t.Errorf("methods recorded: %v", methods)
	}
	if s.Info.Handshake.ProtocolVersion != "2025-11-25" {
		t.Errorf("protocol version %q", s.Info.Handshake.ProtocolVersion)
	}
}

// startSpy runs mcpspy with pipes on both sides of the client.
type spyProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *syncbuf.Buffer // written by the process while the test reads it
}

func startSpy(t *testing.T, env []string, args ...string) *spyProc {
	t.Helper()
	return startSpyBinary(t, peertest.Binary(t, "mcpspy"), env, args...)
}

func startSpyBinary(t *testing.T, bin string, env []string, args ...string) *spyProc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &spyProc{cmd: cmd, stderr: new(syncbuf.Buffer)}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return p
}

func TestStdio_ByteExact(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "exact.db")
	received := filepath.Join(dir, "received")
	self, _ := os.Executable()
	p := startSpy(t, []string{"MCPTAPE_FAKE_SERVER=adversarial", "MCPTAPE_FAKE_RECEIVED=" + received}, "record", "-o", db, "--", self)

	clientFrames := []string{
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"x\":\"\\u0000\\t\"}}\n",
		"  {\"id\":\"7\",\"method\":\"tools/call\" ,\"jsonrpc\":\"2.0\"}  \r\n",
		"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]\n",
		"not json from the client\n",
		"\xc3\x28\n",
	}
	go func() {
		for _, f := range clientFrames {
			io.WriteString(p.stdin, f)
		}
		// The client's last line, like the server's, has no newline.
		io.WriteString(p.stdin, `{"jsonrpc":"2.0","id":2,"method":"big","params":{"b":"`+strings.Repeat("B", 1<<20)+`"}}`)
		p.stdin.Close()
	}()
	got, err := io.ReadAll(p.stdout)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("mcpspy: %v\n%s", err, p.stderr)
	}
	wantOut := strings.Join(adversarialFrames, "") + bigFrame() + `{"jsonrpc":"2.0","id":100,"result":{}}`
	if !bytes.Equal(got, []byte(wantOut)) {
		t.Fatalf("client received %d bytes, want %d identical ones (first difference at %d)", len(got), len(wantOut), firstDiff(got, []byte(wantOut)))
	}
	serverGot, _ := os.ReadFile(received)
	wantIn := strings.Join(clientFrames, "") + `{"jsonrpc":"2.0","id":2,"method":"big","params":{"b":"` + strings.Repeat("B", 1<<20) + `"}}`
	if !bytes.Equal(serverGot, []byte(wantIn)) {
		t.Fatalf("server received %d bytes, want %d identical ones (first difference at %d)", len(serverGot), len(wantIn), firstDiff(serverGot, []byte(wantIn)))
	}
	if !strings.Contains(p.stderr.String(), "stderr \x1b[1mpasses through\x1b[0m") {
		t.Errorf("server stderr not passed through untouched: %q", p.stderr.String())
	}

	// The cassette holds each frame, and kinds are right.
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	var c2s, s2c [][]byte
	for _, m := range tape.Sessions[0].Messages {
		if m.Dir == store.C2S {
			c2s = append(c2s, m.Frame)
		} else {
			s2c = append(s2c, m.Frame)
		}
	}
	checkFrames(t, "c2s", c2s, []byte(wantIn))
	checkFrames(t, "s2c", s2c, []byte(wantOut))
	if k := jsonrpc.Classify(s2c[2]).Kind; k != jsonrpc.Malformed {
		t.Errorf("non-JSON line recorded as %v", k)
	}
	if k := jsonrpc.Classify(s2c[4]).Kind; k != jsonrpc.Batch {
		t.Errorf("batch recorded as %v", k)
	}
}

// checkFrames: the recorded frames, each with its "\n" put back, are the
// stream that was forwarded.
func checkFrames(t *testing.T, name string, frames [][]byte, stream []byte) {
	t.Helper()
	var rebuilt []byte
	for i, f := range frames {
		rebuilt = append(rebuilt, f...)
		if i < len(frames)-1 || bytes.HasSuffix(stream, []byte("\n")) {
			rebuilt = append(rebuilt, '\n')
		}
	}
	if !bytes.Equal(rebuilt, stream) {
		t.Errorf("%s: recorded frames differ from the forwarded stream at byte %d", name, firstDiff(rebuilt, stream))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// mcpspy exits as the server did: with its exit code, or 128+N when it
// died of signal N, and the session's end says which. The server's stderr
// reaches mcpspy's byte for byte, a last line without newline included.
func TestStdio_ExitCodeAndStderr(t *testing.T) {
	tests := []struct {
		name       string
		env        []string
		wantCode   int
		wantReason string
		wantSignal string
	}{
		{"exit code", []string{"MCPTAPE_FAKE_SERVER=exit", "MCPTAPE_EXIT_CODE=7"}, 7, store.EndExit, ""},
		{"killed by SIGTERM", []string{"MCPTAPE_FAKE_SERVER=signal", fmt.Sprintf("MCPTAPE_SIGNAL=%d", syscall.SIGTERM)}, 128 + int(syscall.SIGTERM), store.EndSignal, "terminated"},
		{"killed by SIGHUP", []string{"MCPTAPE_FAKE_SERVER=signal", fmt.Sprintf("MCPTAPE_SIGNAL=%d", syscall.SIGHUP)}, 128 + int(syscall.SIGHUP), store.EndSignal, "hangup"},
	}
	self, _ := os.Executable()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "exit.db")
			p := startSpy(t, tt.env, "record", "-o", db, "--", self)
			err := p.cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != tt.wantCode {
				t.Fatalf("mcpspy exit: %v, want exit status %d", err, tt.wantCode)
			}
			if got := p.stderr.String(); got != fakeStderr {
				t.Errorf("mcpspy's stderr %q, want the server's untouched: %q", got, fakeStderr)
			}
			tape, err := store.Load(db)
			if err != nil {
				t.Fatal(err)
			}
			end := tape.Sessions[0].Info.End
			if end == nil || end.Reason != tt.wantReason || end.Signal != tt.wantSignal || end.ExitCode == nil || *end.ExitCode != tt.wantCode {
				t.Errorf("end = %+v, want reason %s, signal %q, exit code %d", end, tt.wantReason, tt.wantSignal, tt.wantCode)
			}
		})
	}
}

// When the client closes its stdin, the server is stopped in steps: its
// stdin is closed, then it gets SIGTERM, then SIGKILL. A server that
// exits on EOF is never signalled; one that ignores EOF ends at SIGTERM;
// one that ignores both is killed, and mcpspy reports each.
func TestStdio_ShutdownSteps(t *testing.T) {
	tests := []struct {
		name       string
		env        []string
		grace      string
		wantCode   int
		wantSignal string
	}{
		// A grace long enough for any exit on EOF: a signal is the step's fault.
		{"exits on EOF", []string{"MCPTAPE_FAKE_SERVER=flood", "MCPTAPE_FLOOD_N=1"}, "10s", 0, ""},
		{"ignores EOF", []string{"MCPTAPE_FAKE_SERVER=deaf"}, "200ms", 128 + int(syscall.SIGTERM), "terminated"},
		{"ignores EOF and SIGTERM", []string{"MCPTAPE_FAKE_SERVER=stubborn"}, "200ms", 128 + int(syscall.SIGKILL), "killed"},
	}
	self, _ := os.Executable()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "shutdown.db")
			p := startSpy(t, tt.env, "record", "-o", db, "--grace", tt.grace, "--", self)
			if line, err := bufio.NewReader(p.stdout).ReadString('\n'); err != nil {
				t.Fatalf("first line %q, %v", line, err)
			}
			p.stdin.Close()
			code := 0
			if err := p.cmd.Wait(); err != nil {
				ee, ok := err.(*exec.ExitError)
				if !ok {
					t.Fatal(err)
				}
				code = ee.ExitCode()
			}
			if code != tt.wantCode {
				t.Fatalf("mcpspy exit %d, want %d\n%s", code, tt.wantCode, p.stderr)
			}
			tape, err := store.Load(db)
			if err != nil {
				t.Fatal(err)
			}
			end := tape.Sessions[0].Info.End
			if end == nil || end.Reason != store.EndEOF || end.Signal != tt.wantSignal || end.ExitCode == nil || *end.ExitCode != tt.wantCode {
				t.Errorf("end = %+v, want EOF, signal %q, exit code %d", end, tt.wantSignal, tt.wantCode)
			}
		})
	}
}

// A host that closes stdin and then signals mcpspy, as the TypeScript
// SDK's client does when the server has not exited within 2 s, has the
// SIGTERM passed on to the server at once, not after mcpspy's grace
// (an hour here): else the host's SIGKILL, 2 s later, kills mcpspy and
// leaves the server running. The server ends at SIGTERM; the session
// still ended because the client closed.
func TestStdio_SignalDuringGrace(t *testing.T) {
	db := filepath.Join(t.TempDir(), "grace.db")
	self, _ := os.Executable()
	p := startSpy(t, []string{"MCPTAPE_FAKE_SERVER=deaf"}, "record", "-o", db, "--grace", "1h", "--", self)
	if line, err := bufio.NewReader(p.stdout).ReadString('\n'); err != nil {
		t.Fatalf("first line %q, %v", line, err)
	}
	p.stdin.Close()
	waited := make(chan error, 1)
	go func() { waited <- p.cmd.Wait() }()
	// mcpspy is in its grace once the server has seen its stdin close.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(p.stderr.String(), "deaf: stdin closed"); {
		if time.Now().After(deadline) {
			t.Fatalf("the server never saw its stdin close\n%s", p.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Fatalf("mcpspy ended with %v, want the server's SIGTERM exit (143)\n%s", err, p.stderr)
		}
	case <-time.After(60 * time.Second): // a bound: without the fix it waits the hour
		t.Fatalf("mcpspy still waits out its grace after SIGTERM\n%s", p.stderr)
	}
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	if end := tape.Sessions[0].Info.End; end == nil || end.Reason != store.EndEOF || end.Signal != "terminated" {
		t.Errorf("end = %+v, want EOF (the client closed first), the server terminated", end)
	}
}

// A 64 MiB line passes both ways whole and is recorded as one frame: cat,
// as the server, prints back the line it is sent.
func TestStdio_64MiBLine(t *testing.T) {
	const size = 64 << 20
	prefix, suffix := `{"jsonrpc":"2.0","method":"big","params":{"b":"`, `"}}`+"\n"
	line := []byte(prefix + strings.Repeat("L", size-len(prefix)-len(suffix)) + suffix)
	var out bytes.Buffer
	var tap memTap
	p := recorder.StdioProxy{Command: []string{"cat"}, Stdin: bytes.NewReader(line), Stdout: &out, Stderr: &syncbuf.Buffer{}, Tap: &tap, Grace: 10 * time.Second}
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Errorf("cat exited %d", res.ExitCode)
	}
	if !bytes.Equal(out.Bytes(), line) {
		t.Errorf("client received %d bytes, want the %d sent (first difference at %d)", out.Len(), len(line), firstDiff(out.Bytes(), line))
	}
	for _, dir := range []store.Dir{store.C2S, store.S2C} {
		if got := tap.sizesOf(dir); len(got) != 1 || got[0] != size-1 {
			t.Errorf("%s frames recorded with sizes %v, want one of %d", dir, got, size-1)
		}
	}
}

// SIGTERM to mcpspy stops the server, records the end and keeps everything.
func TestStdio_SignalFlushes(t *testing.T) {
	self, _ := os.Executable()
	db := filepath.Join(t.TempDir(), "term.db")
	p := startSpy(t, []string{"MCPTAPE_FAKE_SERVER=flood", "MCPTAPE_FLOOD_N=300"}, "record", "-o", db, "--", self)
	r := bufio.NewReader(p.stdout)
	n := 0
	for ; n < 300; n++ {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatalf("after %d lines: %v", n, err)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	s := tape.Sessions[0]
	if len(s.Messages) != 300 {
		t.Errorf("%d messages recorded, want 300", len(s.Messages))
	}
	if s.Info.End == nil || s.Info.End.Reason != store.EndSignal {
		t.Errorf("end = %+v", s.Info.End)
	}
}

func TestStdio_SIGKILLLeavesAPrefix(t *testing.T) {
	self, _ := os.Executable()
	db := filepath.Join(t.TempDir(), "killed.db")
	const total = 10000
	// The 100 ms bound is the product's, so the product is measured: a
	// binary without the race detector.
	spy := peertest.ReleaseBinary(t, "mcpspy")
	p := startSpyBinary(t, spy, []string{"MCPTAPE_FAKE_SERVER=flood", fmt.Sprintf("MCPTAPE_FLOOD_N=%d", total)}, "record", "-o", db, "--", self)
	r := bufio.NewReader(p.stdout)
	var seenAt []time.Time
	for len(seenAt) < total/2 {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		seenAt = append(seenAt, time.Now())
	}
	killedAt := time.Now()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()

	tape, err := store.Load(db)
	if err != nil {
		t.Fatalf("cassette does not open after SIGKILL: %v", err)
	}
	msgs := tape.Sessions[0].Messages
	for i, m := range msgs {
		var v struct {
			Params struct{ Data struct{ N int } }
		}
		if err := json.Unmarshal(m.Frame, &v); err != nil || v.Params.Data.N != i+1 || m.Seq != uint64(i+1) {
			t.Fatalf("message %d is not the %dth frame (seq %d, n %d, %v)", i, i+1, m.Seq, v.Params.Data.N, err)
		}
	}
	// Everything the client had received 100 ms before the kill is there.
	mustHave := 0
	for _, at := range seenAt {
		if killedAt.Sub(at) > 100*time.Millisecond {
			mustHave++
		}
	}
	if len(msgs) < mustHave {
		t.Errorf("cassette holds %d messages; the client had %d of them more than 100 ms before SIGKILL", len(msgs), mustHave)
	}
	t.Logf("client saw %d, cassette holds %d, %d were older than 100 ms", len(seenAt), len(msgs), mustHave)
}

// Two mcpspy processes record into one cassette while a reader polls it.
func TestStdio_TwoRecordersOneCassette(t *testing.T) {
	self, _ := os.Executable()
	db := filepath.Join(t.TempDir(), "shared.db")
	const n = 2000
	var procs []*spyProc
	for i := range 2 {
		procs = append(procs, startSpy(t, []string{"MCPTAPE_FAKE_SERVER=flood", fmt.Sprintf("MCPTAPE_FLOOD_N=%d", n)},
			"record", "-o", db, "--session", fmt.Sprintf("rec%d", i), "--", self))
	}
	done := make(chan struct{})
	var polls int
	var pollErr error
	go func() {
		defer close(done)
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			var total int
			err := store.View(db, func(r *store.Reader) error {
				infos, err := r.Sessions()
				for _, in := range infos {
					total += r.Count(in.ID)
				}
				return err
			})
			if err == nil {
				polls++
			}
			if total == 2*n {
				return
			}
		}
		pollErr = fmt.Errorf("reader never saw all %d messages", 2*n)
	}()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bufio.NewReader(p.stdout)
			for range n {
				if _, err := r.ReadString('\n'); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	<-done
	if pollErr != nil {
		t.Fatal(pollErr)
	}
	for _, p := range procs {
		p.stdin.Close()
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("mcpspy: %v\n%s", err, p.stderr)
		}
	}
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Sessions) != 2 {
		t.Fatalf("%d sessions", len(tape.Sessions))
	}
	for _, s := range tape.Sessions {
		if len(s.Messages) != n || s.Info.End == nil {
			t.Errorf("%s (%s): %d messages, end %+v", s.Info.ID, s.Info.Name, len(s.Messages), s.Info.End)
		}
	}
	t.Logf("reader polled %d times while recording", polls)
}
