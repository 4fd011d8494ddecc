// Package peertest finds and starts the real MCP peers that tests talk to:
// the mcpspy and mcpmock binaries built from this module, Node.js, and the
// npm packages pinned in testdata/npm (the TypeScript SDK,
// server-everything and the MCP Inspector).
//
// It is for tests only. A missing peer fails the test with the command that
// installs it; it never skips, because CI must run every interop test.
package peertest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// ModuleRoot is the directory holding go.mod.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// ShippedAs copies the shipped recording cassettes/name to dir under
// as, for a test of how a file is read under another name, and returns
// its path.
func ShippedAs(tb testing.TB, name, dir, as string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(ModuleRoot(), "cassettes", name))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, as)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Unnamed is a shipped recording copied under a name that says nothing
// of its kind.
type Unnamed struct {
	Shipped string // its name under cassettes/
	Path    string // the copy, named for its kind without the dot: db, jsonl, har
}

// ShippedUnnamed copies a shipped cassette, export and HAR into a new
// directory, each without its extension.
func ShippedUnnamed(tb testing.TB) []Unnamed {
	tb.Helper()
	dir := tb.TempDir()
	var out []Unnamed
	for _, name := range []string{"everything-stdio.db", "everything-stdio.jsonl", "everything-http.har"} {
		out = append(out, Unnamed{name, ShippedAs(tb, name, dir, strings.TrimPrefix(filepath.Ext(name), "."))})
	}
	return out
}

// NPMDir returns testdata/npm with its packages installed. On a fresh
// clone the first test to ask installs them from the lockfile (`npm ci`),
// under a file lock so that test packages running in parallel install once.
func NPMDir(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(ModuleRoot(), "testdata", "npm")
	if err := ensureNPM(dir); err != nil {
		tb.Fatalf("npm peers are not installed and `npm ci --prefix %s` failed: %v", dir, err)
	}
	return dir
}

var npmOnce struct {
	sync.Once
	err error
}

func ensureNPM(dir string) error {
	npmOnce.Do(func() { npmOnce.err = installNPM(dir) })
	return npmOnce.err
}

func installNPM(dir string) error {
	if upToDate(dir) {
		return nil
	}
	unlock, err := lockFile(filepath.Join(dir, ".install.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if upToDate(dir) { // another process did it
		return nil
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// installedLock names the file in node_modules that holds the SHA-256 of
// the lockfile it was installed from.
const installedLock = ".mcptape-lock.sha256"

// upToDate says whether node_modules was installed from the lockfile as
// it is now. It compares contents, not times: a git worktree checks the
// lockfile out anew, newer than a node_modules shared with the main tree,
// and an install there replaced the shared tree's symlink. A tree that
// npm ci installed outside the tests (as .ci/run does) has no such file
// yet: npm's own marker being newer than the lockfile vouches for it, and
// the file is written then.
func upToDate(dir string) bool {
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false
	}
	sum := fmt.Sprintf("%x\n", sha256.Sum256(lock))
	hashFile := filepath.Join(dir, "node_modules", installedLock)
	if got, err := os.ReadFile(hashFile); err == nil {
		return string(got) == sum
	}
	m, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil {
		return false
	}
	l, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil || m.ModTime().Before(l.ModTime()) {
		return false
	}
	_ = os.WriteFile(hashFile, []byte(sum), 0o644) // only a shortcut for the next run
	return true
}

// Node returns the path of the node binary.
func Node(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		tb.Fatalf("node is not on PATH; interop tests need Node.js 20: %v", err)
	}
	return p
}

// NodeScript returns the command line that runs a script in testdata/npm.
func NodeScript(tb testing.TB, script string, args ...string) []string {
	tb.Helper()
	dir := NPMDir(tb)
	return append([]string{Node(tb), filepath.Join(dir, script)}, args...)
}

// NodeTranscript runs a script in testdata/npm to completion, within
// timeout, with env added to this process's environment, and returns
// what it printed on stdout: one JSON array of strings, the transcript of
// what the client saw. A non-zero exit or no transcript fails the test,
// with what the script printed.
func NodeTranscript(tb testing.TB, timeout time.Duration, env []string, script string, args ...string) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	argv := NodeScript(tb, script, args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s %v: %v\nsaw %s\nstderr:\n%s", script, args, err, out, stderr.String())
	}
	var seen []string
	if err := json.Unmarshal(bytes.TrimSpace(out), &seen); err != nil {
		tb.Fatalf("%s %v: no transcript (%v); stdout %q; stderr:\n%s", script, args, err, out, stderr.String())
	}
	return seen
}

// ServerEverything returns the command line that starts the reference
// server in the given mode ("stdio", "sse", "streamableHttp"). Its HTTP
// modes listen on every interface; loopback.cjs pins them to 127.0.0.1.
// Give the port with FreePortEnv.
func ServerEverything(tb testing.TB, mode string) []string {
	tb.Helper()
	dir := NPMDir(tb)
	return []string{Node(tb), "--require", filepath.Join(dir, "loopback.cjs"),
		filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), mode}
}

// InspectorCLI returns the command line that runs the MCP Inspector as a
// scriptable client (`mcp-inspector --cli`, its package's bin, run by node
// itself): args name the server (a command line, or a URL with
// --transport http|sse) and the method (--method tools/list, …). It prints
// the result as JSON on stdout and exits 0, or a message on stderr and
// exits 1. With --cli it opens no browser, starts no web server and needs
// no network; it starts the CLI proper as a second node process, found on
// PATH. Run it in a directory whose parent holds no package.json (a
// t.TempDir): see internal/interop/mcpinspector.
func InspectorCLI(tb testing.TB, args ...string) []string {
	tb.Helper()
	dir := NPMDir(tb)
	return append([]string{Node(tb), filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "cli", "build", "cli.js"), "--cli"}, args...)
}

// EverythingHTTP starts server-everything in an HTTP mode ("streamableHttp"
// or "sse") on a loopback port, waits until it listens, and returns its
// base URL. The test's Cleanup stops it.
func EverythingHTTP(tb testing.TB, mode string) string {
	tb.Helper()
	base, _ := StartEverythingHTTP(tb, mode)
	return base
}

// StartEverythingHTTP is EverythingHTTP that also returns the process,
// for a test that stops the server (Process.Stop) while its clients and
// a proxy in front of it go on.
func StartEverythingHTTP(tb testing.TB, mode string) (base string, p *Process) {
	tb.Helper()
	env, port := FreePortEnv(tb)
	p = Start(tb, NPMDir(tb), []string{env}, nil, nil, ServerEverything(tb, mode)...)
	ready := map[string]string{"streamableHttp": "MCP Streamable HTTP Server listening on port", "sse": "Server is running on port"}[mode]
	p.WaitLine(tb, ready, 30*time.Second)
	return fmt.Sprintf("http://127.0.0.1:%d", port), p
}

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// Binary builds ./cmd/<name> once per test process (with -race when the
// tests run with it) and returns its path.
func Binary(tb testing.TB, name string) string {
	tb.Helper()
	return BinaryPkg(tb, name, "./cmd/"+name)
}

// BinaryPkg builds the main package pkg (relative to the module root) as
// name, once per test process.
func BinaryPkg(tb testing.TB, name, pkg string) string {
	tb.Helper()
	return build(tb, name, pkg, raceEnabled)
}

// ReleaseBinary builds ./cmd/<name> without the race detector, for tests
// that hold the program to a time bound (the detector slows it 5-10×).
func ReleaseBinary(tb testing.TB, name string) string {
	tb.Helper()
	return build(tb, name+"-release", "./cmd/"+name, false)
}

// ReleaseBinaryPkg builds the main package pkg (relative to the module
// root) as name without the race detector, for tests that measure the
// program (the detector's shadow memory multiplies its RSS).
func ReleaseBinaryPkg(tb testing.TB, name, pkg string) string {
	tb.Helper()
	return build(tb, name+"-release", pkg, false)
}

// ReleaseTestBinary builds the tests of package pkg (relative to the
// module root) as name without the race detector, as go test -c does,
// for tests that measure release binaries and would gain nothing but
// time from running their own side of it under the race detector.
func ReleaseTestBinary(tb testing.TB, name, pkg string) string {
	tb.Helper()
	return buildWith(tb, name+"-release.test", pkg, []string{"test", "-c"})
}

// RaceEnabled says whether this test binary was built with -race.
func RaceEnabled() bool { return raceEnabled }

func build(tb testing.TB, name, pkg string, race bool) string {
	tb.Helper()
	goArgs := []string{"build"}
	if race {
		name += "-race"
		goArgs = append(goArgs, "-race")
	}
	return buildWith(tb, name, pkg, goArgs)
}

// buildWith runs go with goArgs, then -o and pkg, to make the binary
// name, once per test process.
func buildWith(tb testing.TB, name, pkg string, goArgs []string) string {
	tb.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	// One fixed directory per checkout, and fixed names in it: test runs
	// replace the binaries they need instead of leaving a directory of
	// them behind each time. Each process builds once (go's build cache
	// makes that quick) into a temporary name and renames it into place,
	// so parallel test processes never see half a binary, and one already
	// running keeps its own.
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("mcptape-test-bin-%08x", crc32.ChecksumIEEE([]byte(ModuleRoot()))))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, name+".build-*")
	if err != nil {
		tb.Fatal(err)
	}
	// Start from the binary an earlier process left: go build compares
	// its build ID with the sources' and skips the link when they agree.
	// A race link takes seconds, and every test package needs one or two.
	if prev, err := os.Open(out); err == nil {
		_, err = io.Copy(tmp, prev)
		prev.Close()
		if err == nil {
			err = tmp.Chmod(0o755)
		}
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			tb.Fatal(err)
		}
	}
	tmp.Close()
	args := append(slices.Clone(goArgs), "-o", tmp.Name(), pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = ModuleRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp.Name())
		tb.Fatalf("go %s %s: %v\n%s", strings.Join(goArgs, " "), name, err, b)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		os.Remove(tmp.Name())
		tb.Fatal(err)
	}
	built[name] = out
	return out
}

// Process is a started command whose stderr is watched for a line.
type Process struct {
	Cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	lines  chan string
	exited chan struct{} // closed when the process has been waited for
}

// Start runs argv with the given stdin/stdout (nil: none), and stops it
// (SIGTERM, then SIGKILL after 5 s) when the test ends.
func Start(tb testing.TB, dir string, env []string, stdin io.Reader, stdout io.Writer, argv ...string) *Process {
	tb.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	p := &Process{Cmd: cmd, lines: make(chan string, 1024), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %v: %v", argv, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		close(p.lines)
	}()
	waited := p.exited
	go func() { _ = cmd.Wait(); pw.Close(); close(waited) }()
	tb.Cleanup(func() {
		select {
		case <-waited:
			return
		default:
		}
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
		}
	})
	return p
}

// Stop interrupts the process (SIGINT, as a user's ^C) and waits until it
// has exited, so that what it writes on the way out (a cassette's last
// messages, mcpmock's report) is complete. It fails the test if the
// process is still running after timeout.
func (p *Process) Stop(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	_ = p.Cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(timeout):
		tb.Fatalf("%s did not exit within %s of SIGINT; stderr:\n%s", p.Cmd.Path, timeout, p.Stderr())
	}
}

// Stderr returns everything the process wrote to stderr so far.
func (p *Process) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// WaitLine waits for a stderr line with the given prefix and returns the
// rest of it, failing the test after timeout.
func (p *Process) WaitLine(tb testing.TB, prefix string, timeout time.Duration) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				tb.Fatalf("process ended before printing %q; stderr:\n%s", prefix, p.Stderr())
			}
			if rest, found := strings.CutPrefix(l, prefix); found {
				return rest
			}
		case <-ctx.Done():
			tb.Fatalf("no %q line within %s; stderr:\n%s", prefix, timeout, p.Stderr())
		}
	}
}

// FreePortEnv is a helper for servers that take their port from the
// environment (server-everything's PORT): it returns "PORT=n" for a port
// that was free a moment ago on 127.0.0.1.
func FreePortEnv(tb testing.TB) (env string, port int) {
	tb.Helper()
	port = freePort(tb)
	return fmt.Sprintf("PORT=%d", port), port
}

// CopyShipped copies cassettes/NAME, a recording the repository ships,
// into a directory of the test's own and returns the copy's path: no test
// can change the shipped file, even by opening it to write.
func CopyShipped(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(ModuleRoot(), "cassettes", name))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}
