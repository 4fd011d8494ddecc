package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// endpointLine is show's line of server-everything's endpoint event:
// seq, time, direction, kind, size, and what it tells the client.
var endpointLine = regexp.MustCompile(`^ +1 [0-9:.]+ +← sse +[0-9]+ endpoint: POST to /message\?sessionId=[0-9a-f-]+$`)

// TestMcpspy_ShowLegacyEndpoint: server-everything's legacy HTTP+SSE
// (2024-11-05) recorded through the mcpspy binary, as a user would. The
// stream's first event, "endpoint", whose data is the URI to POST to and
// no JSON, is the session's seq 1: show calls it an endpoint event and
// names the URI, kind:endpoint finds it, and neither kind:malformed nor
// error does, nor lint; the same from its JSONL and HAR exports. ls
// counts it as a message, as show lists it.
func TestMcpspy_ShowLegacyEndpoint(t *testing.T) {
	t.Parallel()
	base := peertest.EverythingHTTP(t, "sse")
	db := filepath.Join(t.TempDir(), "sse.db")
	s := startSpy(t, "-o", db, "--upstream", base+"/sse")
	argv := peertest.NodeScript(t, "http-client.mjs", "sse", s.url+"/sse", "echo", `{"message":"legacy"}`)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = peertest.NPMDir(t)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Echo: legacy") {
		t.Fatalf("client: %v\n%s", err, out)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("mcpspy exit: %v", err)
	}

	twin := filepath.Join(t.TempDir(), "sse.jsonl")
	runOK(t, "export", "-o", twin, db)
	har := filepath.Join(t.TempDir(), "sse.har")
	runOK(t, "export", "--har", "-o", har, db)
	for _, path := range []string{db, twin, har} {
		t.Run(filepath.Ext(path), func(t *testing.T) {
			out := showOutput(t, path)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if !endpointLine.MatchString(lines[0]) {
				t.Errorf("show's first line %q, want seq 1 the endpoint event, naming the URI to POST to", lines[0])
			}
			for _, tt := range []struct {
				filter string
				want   []uint64
			}{
				{"kind:endpoint", []uint64{1}},
				{"kind:malformed", nil},
				{"error", nil},
				{"lint", nil},
			} {
				if got, _ := showSeqs(t, "--filter", tt.filter, path); !slices.Equal(got, tt.want) {
					t.Errorf("show --filter %s shows %v, want %v", tt.filter, got, tt.want)
				}
			}
			if with := showOutput(t, "--lint", path); with != out {
				t.Errorf("show --lint adds to show:\n%s", with)
			}
			_, ls, _ := runCaptured("ls", "--json", path)
			if want := fmt.Sprintf(`"messages":%d,`, len(lines)); !strings.Contains(ls, want) {
				t.Errorf("ls --json: %s\nwant %s, as show lists", ls, want)
			}
		})
	}
}
