package replay_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
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

// headerCatcher keeps a header of every HTTP response a client reads.
type headerCatcher struct {
	name string
	mu   sync.Mutex
	seen map[int][]string // status: the values
}

func (c *headerCatcher) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		c.mu.Lock()
		if c.seen == nil {
			c.seen = map[int][]string{}
		}
		c.seen[resp.StatusCode] = append(c.seen[resp.StatusCode], resp.Header.Values(c.name)...)
		c.mu.Unlock()
	}
	return resp, err
}

func (c *headerCatcher) at(status int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[status]
}

// TestReplay_ErrorWithItsHeaders: a call answered with its JSON-RPC error,
// a 403 and a scope challenge (script-faults.yaml's forbidden), recorded
// through the HTTP recorder, replays with the status and the challenge,
// as go-sdk's client meets them; and export --script makes the same fault
// of it again.
func TestReplay_ErrorWithItsHeaders(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	const challenge = `Bearer error="insufficient_scope", scope="admin"`
	src, err := script.Load(filepath.Join(peertest.ModuleRoot(), "cassettes", "script-faults.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mock, err := replay.NewServer([]replay.Source{src}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(mock.Handler())
	stop := func() { mock.Close(); up.Close() }
	defer stop()
	path := filepath.Join(t.TempDir(), "forbidden.db")
	call := func(t *testing.T, url string) {
		t.Helper()
		catcher := &headerCatcher{name: "Www-Authenticate"}
		c := mcp.NewClient(&mcp.Implementation{Name: "errorstatus-test", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: catcher}}
		cs, err := c.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "forbidden"})
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != -32001 || !strings.Contains(err.Error(), "rejected by transport: Forbidden") {
			t.Errorf("got %v, want the -32001 error, rejected with 403 Forbidden", err)
		}
		if got := catcher.at(http.StatusForbidden); len(got) != 1 || got[0] != challenge {
			t.Errorf("WWW-Authenticate with the 403: %q, want %q", got, challenge)
		}
	}
	t.Run("recorded", func(t *testing.T) {
		call(t, vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.Record)).URL())
	})
	stop() // the replay answers alone
	t.Run("replayed", func(t *testing.T) {
		call(t, vcr.NewHTTP(t, path, up.URL+"/mcp", vcr.WithMode(vcr.ReplayOnly)).URL())
	})
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := script.FromTape(tape)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fault: http-403", `Www-Authenticate: '` + challenge + `'`, "code: -32001"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the exported script lacks %s:\n%s", want, out)
		}
	}
}
