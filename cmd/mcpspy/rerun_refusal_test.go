package main

import (
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// An upstream URL with the wrong path: server-everything (Express)
// refuses every POST with a 404 and an HTML error page. stderr names each
// refused request on one line, with the page's text, not its markup
// spread over ten lines a request.
func TestMcpspy_RerunRefusedOnOneLine(t *testing.T) {
	t.Parallel()
	base := peertest.EverythingHTTP(t, "streamableHttp")
	db := shippedCassette(t, "everything-http.db")
	code, _, stderr := runCaptured("rerun", "--exit-code", db, "--upstream", base+"/wrong")
	prefix := "mcpspy: rerun: " + db + " s1: "
	want := []string{
		prefix + "initialize (id 0): HTTP 404: Error Cannot POST /wrong",
		prefix + "tools/list (id 1): HTTP 404: Error Cannot POST /wrong",
		prefix + "tools/call (id 2): HTTP 404: Error Cannot POST /wrong",
		prefix + "tools/call (id 3): HTTP 404: Error Cannot POST /wrong",
	}
	if got := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); code != 1 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and:\n%s", code, stderr, strings.Join(want, "\n"))
	}
}
