package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// A test runner that dies without stopping its mock (SIGKILL here, as an
// uncaught exception skips afterEach) takes an --exit-with-parent mcpmock
// with it: mcpmock stops as on SIGTERM, writing its report. The parent is
// a shell that starts mcpmock in the background, as a Node child_process
// or a CI script does, and is then killed.
func TestServe_ExitWithParent(t *testing.T) {
	dir := t.TempDir()
	report, errFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "stderr")
	script := filepath.Join(peertest.ModuleRoot(), "cassettes", "script-basic.yaml")
	parent := exec.Command("sh", "-c", `"$0" serve --exit-with-parent --http 127.0.0.1:0 --report "$1" "$2" 2>"$3" & echo $!; exec sleep 300`,
		peertest.Binary(t, "mcpmock"), report, script, errFile)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("mcpmock's pid: %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // if the test fails, nothing stays behind
	stderrSays := func(want string) bool {
		b, _ := os.ReadFile(errFile)
		return strings.Contains(string(b), want)
	}
	waitFor(t, "the listening line", func() bool { return stderrSays("mcpmock: listening on http://127.0.0.1:") })

	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	waitFor(t, "the report", func() bool { _, err := os.Stat(report); return err == nil })
	if !stderrSays("has ended: stopping (--exit-with-parent)") {
		b, _ := os.ReadFile(errFile)
		t.Errorf("stderr does not say why it stopped:\n%s", b)
	}
}

// waitFor polls cond until it holds, failing the test after 20s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 20s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
