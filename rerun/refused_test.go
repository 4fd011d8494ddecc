package rerun_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
)

// httpSessionOf is sessionOf over Streamable HTTP: each client frame
// carries the status its POST got (0: none recorded).
func httpSessionOf(status []int, lines ...string) *store.TapeSession {
	s := sessionOf(lines...)
	s.Info.Transport = store.TransportHTTP
	c := 0
	for _, m := range s.Messages {
		m.HTTP = &store.HTTPMeta{Method: http.MethodPost, Path: "/mcp"}
		if m.Dir == store.C2S {
			if c < len(status) {
				m.HTTP.Status = status[c]
			}
			c++
		}
	}
	return s
}

// go-sdk's 2026-07-28 client probes with server/discover, which a
// handshake-era server (server-everything) refuses with an HTTP 400 and
// an error of null id: the recording has that refusal, and a rerun that
// gets it again reproduced the recording. A refusal with another status,
// or one the recording lacks, is a difference, and reported.
func TestRun_RecordedRefusal(t *testing.T) {
	endpoint, _ := url.Parse(peertest.EverythingHTTP(t, "streamableHttp") + "/mcp")
	const discover = `> {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"gocli","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	const refusal = `< {"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`
	for _, tt := range []struct {
		name       string
		recorded   *store.TapeSession
		unanswered string // how the one line Unanswered holds begins; "": none
		difference string // what CompareSessions finds; "": the same
	}{
		{name: "the same refusal", recorded: httpSessionOf([]int{400}, discover, refusal)},
		{name: "another status", recorded: httpSessionOf([]int{404}, discover, refusal),
			unanswered: "server/discover (id 1): HTTP 400: ", difference: "- (refused: HTTP 404)\n    + (refused: HTTP 400)"},
		{name: "answered in the recording",
			recorded:   httpSessionOf([]int{200}, discover, `< {"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`),
			unanswered: "server/discover (id 1): HTTP 400: ", difference: "+ (refused: HTTP 400)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := runOK(t, tt.recorded, rerun.Options{URL: endpoint})
			switch {
			case tt.unanswered == "" && len(res.Unanswered) > 0:
				t.Errorf("unanswered %q, want none: the rerun was refused as the recording was", res.Unanswered)
			case tt.unanswered != "" && (len(res.Unanswered) != 1 || !strings.HasPrefix(res.Unanswered[0], tt.unanswered)):
				t.Errorf("unanswered %q, want one line beginning %q", res.Unanswered, tt.unanswered)
			}
			d := differences(tt.recorded, &res.Session)
			switch {
			case tt.difference == "" && len(d) > 0:
				t.Errorf("differences %q, want none", d)
			case tt.difference != "" && (len(d) != 1 || !strings.Contains(d[0], tt.difference)):
				t.Errorf("differences %q, want one with %q", d, tt.difference)
			}
		})
	}
}
