package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// export --redact and --redact-value reach the session's upstream too: a
// key and a value --redact names, given to the go-sdk server on its
// command line when it was recorded on stdio, are in no line of the export
// (a filtered or salvaged one too), and export counts them rather than
// saying nothing matched.
func TestMcpspy_ExportRedactStdioUpstream(t *testing.T) {
	const argKey = "sk-ARGUMENTARGUMENTARGUMENT"
	db := filepath.Join(t.TempDir(), "c.db")
	recordGoStdio(t, db, nil, []string{argKey, "tenant=acme"}, nil, func(ctx context.Context, cs *mcp.ClientSession) {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "nothing secret"}}); err != nil {
			t.Fatal(err)
		}
	})
	if plain, _ := runText(t, "export", db); !strings.Contains(string(plain), argKey) || !strings.Contains(string(plain), "tenant=acme") {
		t.Fatalf("the recording should hold the server's arguments as given:\n%s", plain)
	}

	tests := []struct {
		name       string
		flags      []string
		wantStderr string
		gone       []string
	}{
		{"--redact-value", []string{"--redact-value", keyPattern},
			"mcpspy: export: redacted 1 value in the info of 1 session\n", []string{argKey}},
		{"--redact", []string{"--redact", "tenant"},
			"mcpspy: export: redacted 1 value in the info of 1 session\n", []string{"acme"}},
		{"both", []string{"--redact", "tenant", "--redact-value", keyPattern},
			"mcpspy: export: redacted 2 values in the info of 1 session\n", []string{argKey, "acme"}},
		{"filtered", []string{"--filter", "tool:echo", "--redact-value", keyPattern},
			"mcpspy: export: redacted 1 value in the info of 1 session\n", []string{argKey}},
		{"salvaged", []string{"--salvage", "--redact-value", keyPattern},
			"mcpspy: export: redacted 1 value in the info of 1 session\n", []string{argKey}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr := runText(t, append(append([]string{"export"}, tt.flags...), db)...)
			if !strings.Contains(string(stderr), tt.wantStderr) || strings.Contains(string(stderr), "no value was redacted") {
				t.Errorf("stderr %q, want %q", stderr, tt.wantStderr)
			}
			for _, secret := range tt.gone {
				if strings.Contains(string(out), secret) {
					t.Errorf("the export holds %q:\n%s", secret, out)
				}
			}
			if !strings.Contains(string(out), `gosdkserver`) || !strings.Contains(string(out), "[redacted]") {
				t.Errorf("the upstream should still name the server, its arguments redacted:\n%s", out)
			}
		})
	}
}

// export --redact and --redact-value reach everything a Streamable HTTP
// session's info keeps from the recording: the upstream URL (a key as a
// path segment, a query parameter --redact names), the client's and the
// server's info and the server's instructions, in the JSONL, the HAR and
// the script alike. Recorded through the mcpspy binary between a go-sdk
// client and an in-process go-sdk server.
func TestMcpspy_ExportRedactHTTPInfo(t *testing.T) {
	t.Parallel()
	const (
		pathKey   = "sk-PATHPATHPATHPATHPATHPATH"
		clientKey = "sk-CLIENTCLIENTCLIENTCLIENT"
		serverKey = "sk-SERVERSERVERSERVERSERVER"
		instrKey  = "sk-INSTRUCTIONSINSTRUCTIONS"
	)
	server := mcp.NewServer(&mcp.Implementation{Name: "keyed", Version: "1.0.0+" + serverKey},
		&mcp.ServerOptions{Instructions: "call with the key " + instrKey})
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(up.Close)

	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	sp := startSpy(t, "-o", db, "--upstream", up.URL+"/mcp/"+pathKey+"?tenant=acme")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// "/" is the upstream URL itself, path and query.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: clientKey}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: sp.url + "/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "nothing secret"}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	if err := sp.stop(t); err != nil {
		t.Fatalf("mcpspy: %v\n%s", err, sp.stderr)
	}
	secrets := []string{pathKey, clientKey, serverKey, instrKey, "acme"}
	plain, _ := runText(t, "export", db)
	for _, s := range secrets {
		if !strings.Contains(string(plain), s) {
			t.Fatalf("the recording should hold %s:\n%s", s, plain)
		}
	}

	for _, form := range []struct {
		name  string
		flags []string
		out   string
	}{
		{"jsonl", nil, "shared.jsonl"},
		{"har", []string{"--har"}, "shared.har"},
		{"script", []string{"--script"}, "shared.yaml"},
	} {
		t.Run(form.name, func(t *testing.T) {
			out := filepath.Join(dir, form.out)
			args := append(append([]string{"export", "--redact", "tenant", "--redact-value", keyPattern, "-o", out}, form.flags...), db)
			_, stderr := runText(t, args...)
			if !strings.Contains(string(stderr), "mcpspy: export: redacted ") || !strings.Contains(string(stderr), " and the info of ") {
				t.Errorf("stderr %q, want it to count what it redacted in the messages and the sessions' info", stderr)
			}
			text, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets {
				if strings.Contains(string(text), s) {
					t.Errorf("the %s export holds %s:\n%s", form.name, s, text)
				}
			}
		})
	}
	// What is redacted is only what was secret: the upstream keeps its
	// shape, and the export still replays.
	out := filepath.Join(dir, "shared.jsonl")
	if text, _ := os.ReadFile(out); !strings.Contains(string(text), `"upstream":"`+up.URL+`/mcp/[redacted]?tenant=[redacted]"`) {
		t.Errorf("the upstream should keep all but its secrets:\n%s", text)
	}
	_, rcs, rctx := replayWithGoClient(t, out)
	if _, err := rcs.CallTool(rctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "nothing secret"}}); err != nil {
		t.Errorf("replaying the redacted export: %v", err)
	}
}

// What else a session's info and a message's metadata keep from the
// recording is redacted too: an end's error, notes, SSE event ids, the
// priming events' paths, the exchanges without messages, the handshake's
// capabilities, an upstream's password, and the Mcp-Session-Id when
// --redact names that header.
func TestMcpspy_ExportRedactInfoShapes(t *testing.T) {
	const key = "sk-AAAAAAAAAAAAAAAAAAAAAAAA"
	in := filepath.Join(t.TempDir(), "in.jsonl")
	lines := `{"session":"s1","info":{"transport":"streamable-http","upstream":"https://user:pw@127.0.0.1:1/mcp","start":"2026-11-21T10:00:00Z","http_session_id":"abc-123",` +
		`"end":{"time":"2026-11-21T10:00:05Z","reason":"error","error":"Post https://127.0.0.1:1/` + key + `: connection refused"},` +
		`"handshake":{"method":"initialize","protocol_version":"2025-11-25","client_info":{"name":"host","version":"1"},"server_info":{"name":"s","version":"1"},"capabilities":{"experimental":{"tenant":"acme","k":"` + key + `"}}},` +
		`"priming":[{"stream":"get-sse","stream_id":2,"path":"/mcp?tenant=acme","event_ids":["` + key + `","e2"]}],` +
		`"bare":[{"time":"2026-11-21T10:00:04Z","http":{"method":"DELETE","path":"/mcp?tenant=acme","status":403,"request_header":{"X-Tenant":["acme"]}},"note":"refused: ` + key + `"}]}}
{"session":"s1","seq":1,"dir":"s2c","time":"2026-11-21T10:00:01Z","message":{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},"http":{"method":"GET","path":"/mcp","status":200,"stream":"get-sse","stream_id":2,"event_id":"` + key + `","priming":["` + key + `"]},"note":"seen with ` + key + `"}
`
	if err := os.WriteFile(in, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr := runText(t, "export", "--redact", "tenant", "--redact", "Mcp-Session-Id", "--redact", "x-tenant", "--redact-value", keyPattern, in)
	got := string(out)
	for _, secret := range []string{key, "acme", "abc-123", ":pw@"} {
		if strings.Contains(got, secret) {
			t.Errorf("the export holds %q:\n%s", secret, got)
		}
	}
	for _, want := range []string{
		`"upstream":"https://user:[redacted]@127.0.0.1:1/mcp"`, `"http_session_id":"[redacted]"`, `"error":"[redacted]"`,
		`"capabilities":{"experimental":{"tenant":"[redacted]","k":"[redacted]"}}`, `"path":"/mcp?tenant=[redacted]"`,
		`"event_ids":["[redacted]","e2"]`, `"X-Tenant":["[redacted]"]`, `"note":"[redacted]"`, `"event_id":"[redacted]"`, `"priming":["[redacted]"]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the export lacks %s:\n%s", want, got)
		}
	}
	// The info: the password, the session id, the error, two
	// capabilities, the priming path and id, the bare exchange's path,
	// header and note; the message: its event id, priming id and note.
	if want := "mcpspy: export: redacted 13 values in 1 message and the info of 1 session\n"; string(stderr) != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}
