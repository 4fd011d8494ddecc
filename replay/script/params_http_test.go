package script_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/script"
)

// A tool whose schema marks two inputs x-mcp-header: a 2026-07-28
// tools/call of it must carry them as Mcp-Param-Region and Mcp-Param-Count.
const regionSchema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"count":{"type":"integer","x-mcp-header":"Count"},"query":{"type":"string"}}}`

const regionScript = `server: {name: regions, version: 1.0.0}
tools:
  - name: forecast
    inputSchema: ` + regionSchema + `
    answers:
      - text: "sunny"
`

// regionServers are go-sdk v1.8's stateless handler and mcpmock serving
// the script, with the same tool; both check Mcp-Param-* headers.
func regionServers(t *testing.T) (sdkURL, mockURL string) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "regions", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "forecast", InputSchema: json.RawMessage(regionSchema)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny"}}}, nil
	})
	sdk := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(sdk.Close)

	src, err := script.Parse("regions.yaml", []byte(regionScript))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer([]replay.Source{src}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mock := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); mock.Close() })
	return sdk.URL, mock.URL + "/mcp"
}

// TestHTTP_ParamHeadersMatchGoSDK sends both servers the same
// tools/call POSTs: they must accept and refuse the same ones, with the
// same status and JSON-RPC code.
func TestHTTP_ParamHeadersMatchGoSDK(t *testing.T) {
	sdkURL, mockURL := regionServers(t)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := func(args string) string {
		return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forecast","arguments":` + args + `,` + meta + `}}`
	}
	tests := []struct {
		name    string
		args    string
		headers map[string]string
		code    int // 0: answered
	}{
		{"both headers", `{"region":"eu-west","count":2,"query":"q"}`, map[string]string{"Region": "eu-west", "Count": "2"}, 0},
		{"non-ASCII value in Base64", `{"region":"Zürich"}`, map[string]string{"Region": "=?base64?WsO8cmljaA==?="}, 0},
		{"absent inputs, no headers", `{"query":"q"}`, nil, 0},
		{"a header missing", `{"region":"eu-west","count":2}`, map[string]string{"Region": "eu-west"}, -32020},
		{"a header that differs", `{"region":"eu-west"}`, map[string]string{"Region": "us-east"}, -32020},
		{"a header for an absent input", `{"query":"q"}`, map[string]string{"Count": "2"}, -32020},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, peer := range []struct{ name, url string }{{"go-sdk", sdkURL}, {"mcpmock", mockURL}} {
				req, _ := http.NewRequest("POST", peer.url, strings.NewReader(call(tt.args)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", "forecast")
				for k, v := range tt.headers {
					req.Header.Set("Mcp-Param-"+k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := readAll(resp)
				wantStatus := 200
				if tt.code != 0 {
					wantStatus = 400
				}
				switch {
				case resp.StatusCode != wantStatus:
					t.Errorf("%s: %d %s; want %d", peer.name, resp.StatusCode, body, wantStatus)
				case tt.code == 0 && !strings.Contains(body, "sunny"):
					t.Errorf("%s: %s; want the answer", peer.name, body)
				case tt.code != 0 && !strings.Contains(body, `"code":-32020`):
					t.Errorf("%s: %s; want -32020", peer.name, body)
				}
			}
		})
	}
}

// TestHTTP_ParamHeadersGoSDKClient: go-sdk's client, which sets the
// Mcp-Param-* headers from the listed schema, passes mcpmock's check.
func TestHTTP_ParamHeadersGoSDKClient(t *testing.T) {
	_, mockURL := regionServers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mockURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("speaks %s; the headers are 2026-07-28's", v)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil { // the client learns the marks here
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"region": "Zürich", "count": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "sunny" {
		t.Errorf("answer %+v", res.Content)
	}
	// An empty string goes as an empty header; go-sdk's own server refuses
	// that as missing (rerun's TestGoSDK_EmptyParamHeaderRefused), mcpmock
	// takes it: the header is there.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"region": ""}}); err != nil {
		t.Errorf("an empty region: %v", err)
	}
}

func readAll(resp *http.Response) (string, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestHTTP_ParamHeadersFollowReload: mcpmock serve --watch reloads a
// script whose tool now marks another input x-mcp-header. The check of a
// 2026-07-28 tools/call must follow the new schema, which go-sdk's client
// learns from tools/list, not the one it first parsed.
func TestHTTP_ParamHeadersFollowReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "regions.yaml")
	write := func(text string, stamp time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, stamp, stamp); err != nil { // a new stamp even on a coarse clock
			t.Fatal(err)
		}
	}
	now := time.Now()
	write(regionScript, now)
	src, err := script.LoadReloadable(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := replay.NewServer([]replay.Source{src}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mock := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); mock.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func(args map[string]any) error {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mock.URL + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.ListTools(ctx, nil); err != nil { // the client learns the marks here
			t.Fatal(err)
		}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: args})
		return err
	}
	if err := call(map[string]any{"region": "eu-west"}); err != nil {
		t.Fatalf("before the reload: %v", err)
	}

	zoned := strings.Replace(regionScript, `"x-mcp-header":"Region"`, `"x-mcp-header":"Zone"`, 1)
	if zoned == regionScript {
		t.Fatal("the schema did not change")
	}
	write(zoned, now.Add(time.Hour))
	if changed, err := src.ReloadIfChanged(); !changed || err != nil {
		t.Fatalf("reload: changed %v, %v", changed, err)
	}
	srv.RestartSessionless()
	if err := call(map[string]any{"region": "eu-west"}); err != nil {
		t.Errorf("after the reload, a call with the new schema's headers: %v", err)
	}
}
