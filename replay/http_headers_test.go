package replay_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/replay"
)

// echoCall is a 2026-07-28 tools/call of the go-sdk test server's echo
// tool; metaVersion "" leaves the _meta version out.
func echoCall(metaVersion string) string {
	meta := `"io.modelcontextprotocol/clientCapabilities":{}`
	if metaVersion != "" {
		meta += `,"io.modelcontextprotocol/protocolVersion":"` + metaVersion + `"`
	}
	return `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{` + meta + `}}}`
}

// headerCases are POSTs whose MCP headers a server must check: each sets
// the headers it lists on top of none ("-" removes one).
var headerCases = []struct {
	name    string
	body    string
	headers map[string]string
	status  int
	code    int // JSON-RPC error code; 0: a result
}{
	{"all headers right", echoCall("2026-07-28"), map[string]string{}, 200, 0},
	{"Mcp-Name with white space around it", echoCall("2026-07-28"), map[string]string{"Mcp-Name": " echo "}, 200, 0},
	{"no Mcp-Method", echoCall("2026-07-28"), map[string]string{"Mcp-Method": "-"}, 400, -32020},
	{"Mcp-Method not the body's", echoCall("2026-07-28"), map[string]string{"Mcp-Method": "tools/list"}, 400, -32020},
	{"no Mcp-Name", echoCall("2026-07-28"), map[string]string{"Mcp-Name": "-"}, 400, -32020},
	{"Mcp-Name not the body's", echoCall("2026-07-28"), map[string]string{"Mcp-Name": "add"}, 400, -32020},
	{"no MCP-Protocol-Version, _meta has one", echoCall("2026-07-28"), map[string]string{"MCP-Protocol-Version": "-"}, 400, -32020},
	{"MCP-Protocol-Version not _meta's", echoCall("2026-07-28"), map[string]string{"MCP-Protocol-Version": "2025-11-25"}, 400, -32020},
	{"2026-07-28 header, no _meta version", echoCall(""), map[string]string{}, 400, -32602},
}

// post sends one case: the 2026-07-28 headers of echoCall, changed as the
// case says.
func postCase(t *testing.T, url, body string, change map[string]string) (status int, code int, raw string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setStatelessHeaders(req, "tools/call", "echo")
	for k, v := range change {
		if v == "-" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw = bodyOf(t, resp)
	if i := strings.Index(raw, "data: "); i >= 0 { // an SSE answer: its one message
		raw = strings.TrimSpace(strings.SplitN(raw[i+len("data: "):], "\n", 2)[0])
	}
	var msg struct {
		Error *struct{ Code int } `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &msg) == nil && msg.Error != nil {
		code = msg.Error.Code
	}
	return resp.StatusCode, code, raw
}

// TestHTTP_HeaderChecksMatchGoSDK sends the same POSTs to go-sdk v1.8's
// stateless StreamableHTTPHandler and to mcpmock replaying the same call:
// both must accept and refuse the same ones, with the same status and
// JSON-RPC code, so a host that passes against mcpmock passes the real
// check too.
func TestHTTP_HeaderChecksMatchGoSDK(t *testing.T) {
	sdk := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdkserver") }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(sdk.Close)
	srv, err := replay.NewServer([]replay.Source{cassetteOf(t,
		`> `+echoCall("2026-07-28"),
		`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	)}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mock := newHTTPServer(t, srv)
	for _, tt := range headerCases {
		t.Run(tt.name, func(t *testing.T) {
			for _, peer := range []struct{ name, url string }{{"go-sdk", sdk.URL}, {"mcpmock", mock}} {
				status, code, raw := postCase(t, peer.url, tt.body, tt.headers)
				if status != tt.status || code != tt.code {
					t.Errorf("%s: %d, code %d, want %d, code %d; body %s", peer.name, status, code, tt.status, tt.code, raw)
				}
				if tt.code == 0 && !strings.Contains(raw, `"text":"hi"`) {
					t.Errorf("%s: %s; want the echo", peer.name, raw)
				}
			}
		})
	}
}

// An MCP-Protocol-Version no spec has is a 400 on any request (2025-06-18
// on); go-sdk says so in plain text, mcpmock with a JSON-RPC error that
// lists the versions it speaks.
func TestHTTP_UnknownProtocolVersionHeader(t *testing.T) {
	srv, err := replay.NewServer([]replay.Source{cassetteOf(t, statelessTape...)}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mock := newHTTPServer(t, srv)
	sdk := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdkserver") }, nil))
	t.Cleanup(sdk.Close)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	for _, peer := range []struct{ name, url string }{{"go-sdk", sdk.URL}, {"mcpmock", mock}} {
		status, _, raw := postCase(t, peer.url, init, map[string]string{"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "-", "Mcp-Name": "-"})
		if status != http.StatusBadRequest {
			t.Errorf("%s: %d %s; want 400", peer.name, status, raw)
		}
	}
	_, code, raw := postCase(t, mock, init, map[string]string{"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "-", "Mcp-Name": "-"})
	if code != -32022 || !strings.Contains(raw, `"1900-01-01"`) || !strings.Contains(raw, "2025-11-25") {
		t.Errorf("mcpmock: %s; want -32022 naming the version asked and those spoken", raw)
	}
}
