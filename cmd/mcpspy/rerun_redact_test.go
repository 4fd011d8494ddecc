package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The secrets of TestMcpspy_RerunRedacts' server, each as it would be
// stored if nothing hid it.
const (
	rerunToken  = "tok-live-4711"                 // the Authorization --header gives
	rerunCookie = "cookie-val-9"                  // a Set-Cookie the server answers with
	rerunTenant = "acme-tenant-5"                 // an X-Tenant header it answers with
	rerunAcct   = "acct-42"                       // a member "account" of its answers
	rerunAPIKey = "sk-ABCDEFGHIJ0123456789abcdef" // a key inside an answer's text
)

// rerunAuthServer is a go-sdk Streamable HTTP server behind a Bearer
// check, whose answers carry secrets in headers and in their frames.
func rerunAuthServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "vault", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: rerunAPIKey}},
				StructuredContent: map[string]any{"account": rerunAcct},
			}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+rerunToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Set-Cookie", "sid="+rerunCookie)
		w.Header().Set("X-Tenant", rerunTenant)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// mcpspy rerun -o stores the new server's answers as record would: the
// --header credentials never, the credentials in response headers
// redacted by default, and what --redact names and --redact-value
// matches blanked in headers and frames; --no-redact stores the
// response headers as they are.
func TestMcpspy_RerunRedacts(t *testing.T) {
	srv := rerunAuthServer(t)
	export := `{"session":"s1","info":{"transport":"streamable-http","upstream":"http://127.0.0.1:1/mcp","start":"2026-11-21T10:00:00Z"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-11-21T10:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-11-21T10:00:00.1Z","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"vault","version":"1.0.0"}}}}
{"session":"s1","seq":3,"dir":"c2s","time":"2026-11-21T10:00:00.2Z","message":{"jsonrpc":"2.0","method":"notifications/initialized"}}
{"session":"s1","seq":4,"dir":"c2s","time":"2026-11-21T10:00:00.3Z","message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}}
{"session":"s1","seq":5,"dir":"s2c","time":"2026-11-21T10:00:00.4Z","message":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[redacted]"}],"structuredContent":{"account":"[redacted]"}}}}
`
	source := filepath.Join(t.TempDir(), "vault.jsonl")
	if err := os.WriteFile(source, []byte(export), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		flags      []string
		kept, gone []string // what the stored session holds, and what it must not
	}{
		{"default", nil, []string{rerunTenant, rerunAcct, rerunAPIKey}, []string{rerunToken, rerunCookie}},
		{"--redact and --redact-value", []string{"--redact", "X-Tenant", "--redact", "account", "--redact-value", `sk-[A-Za-z0-9]{20,}`},
			nil, []string{rerunToken, rerunCookie, rerunTenant, rerunAcct, rerunAPIKey}},
		{"--no-redact", []string{"--no-redact"}, []string{rerunCookie, rerunTenant}, []string{rerunToken}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "rerun.db")
			args := append([]string{"rerun", "-o", out, "--header", "Authorization: Bearer " + rerunToken}, tt.flags...)
			args = append(args, source, "--upstream", srv.URL+"/mcp")
			if code, stdout, stderr := runCaptured(args...); code != 0 {
				t.Fatalf("rerun: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			code, stored, stderr := runCaptured("export", out)
			if code != 0 || !strings.Contains(stored, `"whoami"`) || !strings.Contains(stored, "Set-Cookie") {
				t.Fatalf("export: exit %d, stdout:\n%s\nstderr:\n%s", code, stored, stderr)
			}
			for _, s := range tt.kept {
				if !strings.Contains(stored, s) {
					t.Errorf("the stored rerun lacks %q:\n%s", s, stored)
				}
			}
			for _, s := range tt.gone {
				if strings.Contains(stored, s) {
					t.Errorf("the stored rerun holds %q:\n%s", s, stored)
				}
			}
		})
	}
}

// The redaction flags say what -o stores; where nothing is stored, or
// they contradict each other, they are a usage error that says so.
func TestMcpspy_RerunRedactUsage(t *testing.T) {
	source := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(source, []byte(`{"session":"s1","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.db")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"--redact without -o", []string{"--redact", "X-Tenant", source, "--upstream", "http://127.0.0.1:1/mcp"},
			"rerun: --redact is for what -o CASSETTE stores, and there is no -o"},
		{"--redact-value without -o", []string{"--redact-value", "sk-.*", source, "--", "cat"},
			"rerun: --redact-value is for what -o CASSETTE stores, and there is no -o"},
		{"--no-redact for stdio", []string{"-o", out, "--no-redact", source, "--", "cat"},
			"rerun: --no-redact is for an HTTP or WebSocket server (--upstream URL), not a stdio server"},
		{"--no-redact and --redact", []string{"-o", out, "--no-redact", "--redact", "x", source, "--upstream", "http://127.0.0.1:1/mcp"},
			"rerun: --redact and --no-redact contradict each other"},
		{"a bad --redact-value", []string{"-o", out, "--redact-value", "(", source, "--", "cat"},
			"rerun: --redact-value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCaptured(append([]string{"rerun"}, tt.args...)...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused rerun made %s", out)
			}
		})
	}
}
