package faults_test

import (
	"bufio"
	"bytes"
	"flag"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// memoryTests measure the peak RSS of mcpspy's and mcpmock's release
// binaries while big frames pass, each with the fake peers and clients of
// its own that send and take those frames.
var memoryTests = []struct {
	name string
	run  func(t *testing.T)
}{
	{"BigFrameStdio", memoryBigFrameStdio},
	{"RunOfBigFramesStdio", memoryRunOfBigFramesStdio},
	{"BigFrameHTTP", memoryBigFrameHTTP},
	{"RunOfBigFramesHTTP", memoryRunOfBigFramesHTTP},
	{"RunOfBigFramesWebSocket", memoryRunOfBigFramesWebSocket},
	{"RunOfBigFramesClients", memoryRunOfBigFramesClients},
	{"RunOfBigFramesGzip", memoryRunOfBigFramesGzip},
	{"BigFramesMockFallbackStdio", memoryBigFramesMockFallbackStdio},
	{"BigFramesMockFallbackHTTP", memoryBigFramesMockFallbackHTTP},
	{"BigFramesMockFallbackWebSocket", memoryBigFramesMockFallbackWebSocket},
	{"BigFramesMockFallbackLegacySSE", memoryBigFramesMockFallbackLegacySSE},
	{"BigCallsMockStdio", memoryBigCallsMockStdio},
	{"BigRecordingMockStdio", memoryBigRecordingMockStdio},
}

// TestMemory runs the memory tests (select one with -run
// 'TestMemory/BigCallsMockStdio'). In a test binary built with -race, as
// CI builds it, it runs them in a release build of this package instead:
// the programs they measure are release builds either way, and all the
// race detector would check is this package's fake peers, at the cost of
// a range check over every 64 MiB buffer they write, read or mask (more
// than half of the package's time under -race).
func TestMemory(t *testing.T) {
	if peertest.RaceEnabled() {
		runReleaseBuilt(t)
		return
	}
	for _, m := range memoryTests {
		t.Run(m.name, m.run)
	}
}

// runReleaseBuilt runs TestMemory, and of its subtests those -run picks,
// in a release build of this package, with this run's -faults.long and
// what is left of its timeout, and reports what it says.
func runReleaseBuilt(t *testing.T) {
	bin := peertest.ReleaseTestBinary(t, "faults", "./internal/faults")
	args := []string{"-test.run", memoryRunPattern(flag.Lookup("test.run").Value.String()), "-test.v", "-test.count=1",
		"-faults.long=" + strconv.FormatBool(*long)}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout", time.Until(d).Round(time.Second).String())
	}
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	// Each line of the release build's output is marked, so that its
	// "--- PASS" lines are not read as this binary's own.
	var said strings.Builder
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		said.WriteString("| " + sc.Text() + "\n")
	}
	ran := strings.Count(said.String(), "| === RUN   TestMemory/")
	switch {
	case err != nil:
		t.Fatalf("the release build of the memory tests (%s %s): %v after %v:\n%s", bin, strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond), said.String())
	case ran == 0:
		t.Fatalf("the release build ran no memory test (%s %s):\n%s", bin, strings.Join(args, " "), said.String())
	case testing.Verbose():
		t.Logf("the release build of the memory tests passed in %v:\n%s", time.Since(start).Round(time.Millisecond), said.String())
	}
}

// memoryRunPattern is the -run pattern for the release build: TestMemory
// and, of the pattern this run was given, the parts that pick subtests
// (those after its first '/' outside brackets and parentheses), so that
// the release build runs no other test.
func memoryRunPattern(run string) string {
	depth := 0
	for i, c := range run {
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '/':
			if depth == 0 {
				return "^TestMemory$" + run[i:]
			}
		}
	}
	return "^TestMemory$"
}

func TestMemoryRunPattern(t *testing.T) {
	for _, tc := range []struct{ run, want string }{
		{"", "^TestMemory$"},
		{"TestMemory", "^TestMemory$"},
		{"TestMemory|TestKill", "^TestMemory$"},
		{"TestMemory/BigCallsMockStdio", "^TestMemory$/BigCallsMockStdio"},
		{"TestMemory/BigCalls/script_run$", "^TestMemory$/BigCalls/script_run$"},
		{"Test(Memory|Kill/x)/Big", "^TestMemory$/Big"},
		{"TestMemory/[/]x", "^TestMemory$/[/]x"},
	} {
		if got := memoryRunPattern(tc.run); got != tc.want {
			t.Errorf("memoryRunPattern(%q) = %q, want %q", tc.run, got, tc.want)
		}
	}
}
