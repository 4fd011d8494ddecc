package inspector

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/vcr"
)

// TestPages_RealRefusal: go-sdk's Streamable HTTP server answers a POST
// for a session it does not know with 404 and a line of text, no JSON-RPC
// message. Recorded through mcpspy's HTTP recorder, that body is a
// malformed frame; show and the table call it what it is, an HTTP error
// page with its status, not a broken message ("bad"), in the .db and in
// its JSONL export alike.
func TestPages_RealRefusal(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdk") }, nil))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "refused.db")
	t.Run("record", func(t *testing.T) { // the recorder ends with the subtest
		rec := vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record))
		req, err := http.NewRequest(http.MethodPost, rec.URL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", "forgotten")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || strings.HasPrefix(string(body), "{") {
			t.Fatalf("go-sdk answered %d %q; want 404 and a text body (has it changed?)", resp.StatusCode, body)
		}
	})
	for _, p := range []string{path, jsonlTwin(t, path)} {
		m, src := openModel(t, p)
		var out bytes.Buffer
		if _, err := m.WriteText(context.Background(), &out, src, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 || !strings.Contains(lines[1], "← http ") || !strings.HasSuffix(lines[1], " 404 Not Found (error page, no JSON-RPC message)") {
			t.Errorf("%s:\n%s\nwant the second line an error page with its 404", filepath.Base(p), out.String())
		}
		r, _ := m.Row(1)
		if r.PageStatus != 404 || kindColor(r) != tcell.ColorRed {
			t.Errorf("%s: row %+v, want PageStatus 404, colored as an error", filepath.Base(p), r)
		}
	}
}
