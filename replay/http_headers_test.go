package replay_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
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

// readCall and promptCall are 2026-07-28 requests whose Mcp-Name header
// mirrors the uri and the name.
const (
	readCall   = `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"file:///doc","_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	promptCall = `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"greet","_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
)

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
	// Mcp-Name mirrors a resources/read's uri and a prompts/get's name too.
	{"resources/read, Mcp-Name not the body's uri", readCall, map[string]string{"Mcp-Method": "resources/read", "Mcp-Name": "file:///other"}, 400, -32020},
	{"resources/read, no Mcp-Name", readCall, map[string]string{"Mcp-Method": "resources/read", "Mcp-Name": "-"}, 400, -32020},
	{"prompts/get, Mcp-Name not the body's", promptCall, map[string]string{"Mcp-Method": "prompts/get", "Mcp-Name": "other"}, 400, -32020},
	{"prompts/get, no Mcp-Name", promptCall, map[string]string{"Mcp-Method": "prompts/get", "Mcp-Name": "-"}, 400, -32020},
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

// echoServers are go-sdk's stateless handler serving the test server's
// echo tool, and mcpmock replaying its answer to echoCall.
func echoServers(t *testing.T) (sdkURL, mockURL string) {
	t.Helper()
	sdk := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdkserver") }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(sdk.Close)
	srv, err := replay.NewServer([]replay.Source{cassetteOf(t,
		`> `+echoCall("2026-07-28"),
		`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	)}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sdk.URL, newHTTPServer(t, srv)
}

// TestHTTP_HeaderChecksMatchGoSDK sends the same POSTs to go-sdk v1.8's
// stateless StreamableHTTPHandler and to mcpmock replaying the same call:
// both must accept and refuse the same ones, with the same status and
// JSON-RPC code, so a host that passes against mcpmock passes the real
// check too.
func TestHTTP_HeaderChecksMatchGoSDK(t *testing.T) {
	sdkURL, mock := echoServers(t)
	for _, tt := range headerCases {
		t.Run(tt.name, func(t *testing.T) {
			for _, peer := range []struct{ name, url string }{{"go-sdk", sdkURL}, {"mcpmock", mock}} {
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
	for _, peer := range []struct{ name, url string }{{"go-sdk", sdk.URL}, {"mcpmock", mock}} {
		status, _, raw := postCase(t, peer.url, initializeBody, map[string]string{"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "-", "Mcp-Name": "-"})
		if status != http.StatusBadRequest {
			t.Errorf("%s: %d %s; want 400", peer.name, status, raw)
		}
	}
	_, code, raw := postCase(t, mock, initializeBody, map[string]string{"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "-", "Mcp-Name": "-"})
	if code != -32022 || !strings.Contains(raw, `"1900-01-01"`) || !strings.Contains(raw, "2025-11-25") {
		t.Errorf("mcpmock: %s; want -32022 naming the version asked and those spoken", raw)
	}
}

// initializeBody is a handshake-era initialize, for POSTs that only test
// headers.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// everythingAndMock are server-everything over Streamable HTTP and
// mcpmock, each an /mcp endpoint URL.
func everythingAndMock(t *testing.T) (everything, mock string) {
	t.Helper()
	srv, err := replay.NewServer([]replay.Source{cassetteOf(t, statelessTape...)}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return peertest.EverythingHTTP(t, "streamableHttp") + "/mcp", newHTTPServer(t, srv)
}

// TestHTTP_MediaTypesMatchServerEverything sends server-everything
// (TypeScript SDK) and mcpmock the same initialize POSTs with wrong
// Content-Type or Accept headers: both must answer with the same status.
// (go-sdk answers 400 where these two answer 406, and takes */* for both
// types; mcpmock follows the stricter reference server.)
//
// One difference is on purpose: server-everything (TS SDK 1.32.2) matches
// media types case-sensitively and refuses "Application/JSON", which RFC
// 9110 says is the same type; mcpmock takes it
// (TestHTTP_MediaTypeCaseServerEverything pins what the TS SDK does).
func TestHTTP_MediaTypesMatchServerEverything(t *testing.T) {
	everything, mock := everythingAndMock(t)
	tests := []struct {
		name        string
		contentType string
		accept      string
		status      int
	}{
		{"right", "application/json", "application/json, text/event-stream", 200},
		{"with parameters", "application/json; charset=utf-8", "application/json;q=0.9, text/event-stream", 200},
		{"body said to be text", "text/plain", "application/json, text/event-stream", 415},
		{"no Content-Type", "", "application/json, text/event-stream", 415},
		{"accepts JSON only", "application/json", "application/json", 406},
		{"accepts SSE only", "application/json", "text/event-stream", 406},
		{"accepts anything", "application/json", "*/*", 406},
		{"no Accept", "application/json", "", 406},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, peer := range []struct{ name, url string }{{"server-everything", everything}, {"mcpmock", mock}} {
				req, _ := http.NewRequest("POST", peer.url, strings.NewReader(initializeBody))
				if tt.contentType != "" {
					req.Header.Set("Content-Type", tt.contentType)
				}
				if tt.accept != "" {
					req.Header.Set("Accept", tt.accept)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body := bodyOf(t, resp)
				if resp.StatusCode != tt.status {
					t.Errorf("%s: %d %s; want %d", peer.name, resp.StatusCode, body, tt.status)
				}
				if tt.status == 200 {
					if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
						del, _ := http.NewRequest("DELETE", peer.url, nil)
						del.Header.Set("Mcp-Session-Id", id)
						if r, err := http.DefaultClient.Do(del); err == nil {
							r.Body.Close()
						}
					}
				}
			}
		})
	}
}

// TestHTTP_MediaTypeCaseServerEverything: the TypeScript SDK's server
// refuses an Accept whose media types are not lower case, where RFC 9110
// (8.3.1) makes type and subtype case-insensitive. mcpmock accepts it. If
// this starts failing, the TS SDK has fixed it.
func TestHTTP_MediaTypeCaseServerEverything(t *testing.T) {
	everything, mock := everythingAndMock(t)
	for _, peer := range []struct {
		name, url string
		status    int
	}{{"server-everything", everything, 406}, {"mcpmock", mock, 200}} {
		req, _ := http.NewRequest("POST", peer.url, strings.NewReader(initializeBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "Application/JSON, Text/Event-Stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if body := bodyOf(t, resp); resp.StatusCode != peer.status {
			t.Errorf("%s: %d %s; want %d", peer.name, resp.StatusCode, body, peer.status)
		}
	}
}

// An Mcp-Name in 2026-07-28's Base64 form ("=?base64?…?=", meant for
// values that are not plain ASCII): mcpmock decodes it before comparing,
// so it never refuses a client that encodes more than it must. go-sdk
// v1.8 compares the header as it stands and refuses it; asserted, so that
// a change in go-sdk shows here.
func TestHTTP_EncodedMcpName(t *testing.T) {
	sdkURL, mock := echoServers(t)
	encoded := map[string]string{"Mcp-Name": "=?base64?ZWNobw==?="} // "echo"
	if status, code, raw := postCase(t, mock, echoCall("2026-07-28"), encoded); status != 200 || code != 0 {
		t.Errorf("mcpmock: %d %s; want the echo", status, raw)
	}
	if status, code, raw := postCase(t, sdkURL, echoCall("2026-07-28"), encoded); status != 400 || code != -32020 {
		t.Errorf("go-sdk: %d %s; v1.8 refused an encoded Mcp-Name with 400, -32020", status, raw)
	}
}

// A cassette knows its tools' Mcp-Param-* headers from its recorded
// tools/list answer: a 2026-07-28 call without the header is refused as
// go-sdk refuses it (TestHTTP_ParamHeadersMatchGoSDK in replay/script
// compares the two), and the call with it is answered.
func TestHTTP_ParamHeadersFromCassette(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` + meta + `}}`
	srv, err := replay.NewServer([]replay.Source{cassetteOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string","x-mcp-header":"Text"}}}}]}}`,
		`> `+call,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	)}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mock := newHTTPServer(t, srv)
	if status, code, raw := postCase(t, mock, call, nil); status != 400 || code != -32020 || !strings.Contains(raw, "Mcp-Param-Text is missing") {
		t.Errorf("without Mcp-Param-Text: %d %s; want 400, -32020 naming it", status, raw)
	}
	if status, code, raw := postCase(t, mock, call, map[string]string{"Mcp-Param-Text": "hi"}); status != 200 || code != 0 {
		t.Errorf("with it: %d %s; want the answer", status, raw)
	}
}

// TestHTTP_MediaTypesGoSDK pins what the table in docs/REPLAY.md says of
// go-sdk v1.8, where it differs from server-everything and mcpmock: an
// Accept without both types is a 400, not a 406, and */* passes.
func TestHTTP_MediaTypesGoSDK(t *testing.T) {
	sdk := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdkserver") }, nil))
	t.Cleanup(sdk.Close)
	for _, tt := range []struct {
		accept string
		status int
	}{{"application/json", 400}, {"*/*", 200}} {
		req, _ := http.NewRequest("POST", sdk.URL, strings.NewReader(initializeBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", tt.accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if body := bodyOf(t, resp); resp.StatusCode != tt.status {
			t.Errorf("go-sdk, Accept %q: %d %s; want %d", tt.accept, resp.StatusCode, body, tt.status)
		}
	}
}
