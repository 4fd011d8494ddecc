package replay_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/vcr"
)

// TestReplay_ErrorWithItsStatus: go-sdk's stateless server (2026-07-28)
// answers a call of a method it does not handle with 404 and a JSON-RPC
// error naming the request's id: an answer, sent with an error status.
// Recorded through the HTTP recorder, the replay answers a live call of
// it the same way: 404, application/json, the error with the live id;
// not 200, which a client tells apart (go-sdk wraps a non-2xx answer's
// error as rejected by the transport; the TypeScript SDK throws a
// StreamableHTTPError carrying the status).
func TestReplay_ErrorWithItsStatus(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdk") }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "unknown.db")
	post := func(t *testing.T, url, id string) (int, string, string) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"nope/never","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		setStatelessHeaders(req, "nope/never", "")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}

	var recorded string
	t.Run("recorded", func(t *testing.T) {
		rec := vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record))
		status, ct, body := post(t, rec.URL(), "7")
		if status != http.StatusNotFound || !strings.Contains(body, `"id":7`) || !strings.Contains(body, "-32601") {
			t.Fatalf("go-sdk answered %d %s %s; want 404 and a -32601 error for id 7 (has it changed?)", status, ct, body)
		}
		recorded = ct
	})
	up.Close()

	srv := vcr.NewHTTP(t, path, up.URL+"/mcp")
	status, ct, body := post(t, srv.URL(), `"live-9"`)
	if status != http.StatusNotFound || ct != "application/json" || !strings.Contains(body, `"id":"live-9"`) || !strings.Contains(body, `"code":-32601`) {
		t.Errorf("replayed %d %s %s; want 404 %s and the -32601 error for id \"live-9\"", status, ct, body, recorded)
	}
}
