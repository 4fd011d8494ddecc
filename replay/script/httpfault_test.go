package script_test

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
)

// The faults http-NNN and expire-session (script-faults.yaml's tools
// unavailable, unauthorized and expire), as go-sdk v1.8's client and a
// plain HTTP client meet them.

// connectSSE connects a go-sdk client over the legacy HTTP+SSE transport,
// asking for version ("": go-sdk's newest, 2026-07-28, which it speaks
// over this transport too).
func connectSSE(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctxT(t), &mcp.SSEClientTransport{Endpoint: url + "/sse"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestGoSDK_StatusFaults: over HTTP the client sees the status, and no
// JSON-RPC error; over stdio it gets the JSON-RPC error that names it.
// Then it calls again: go-sdk's Streamable HTTP client keeps going after
// a 503 (it counts 500, 502, 503, 504 and 429 as transient), and gives up
// its connection after a 401, as its legacy SSE client does after any.
func TestGoSDK_StatusFaults(t *testing.T) {
	const stdioMsg = "HTTP 503 Service Unavailable (fault http-503; this transport has no HTTP status)"
	tests := []struct {
		name, transport, version, tool string
		wantErr                        string // in the error's text
		rpcCode                        int64  // 0: not a JSON-RPC error
		afterErr                       string // "": the next call gets its answer
	}{
		{"stdio/2025-11-25", "stdio", "2025-11-25", "unavailable", stdioMsg, -32603, ""},
		{"stdio/2026-07-28", "stdio", "", "unavailable", stdioMsg, -32603, ""},
		{"http/2025-11-25", "http", "2025-11-25", "unavailable", "Service Unavailable", 0, ""},
		{"http/2026-07-28", "http", "", "unavailable", "Service Unavailable", 0, ""},
		{"http/2025-11-25 401", "http", "2025-11-25", "unauthorized", "Unauthorized", 0, "connection closed"},
		{"http/2026-07-28 401", "http", "", "unauthorized", "Unauthorized", 0, "connection closed"},
		// go-sdk speaks 2026-07-28 over legacy SSE too, unless asked for
		// a handshake-era version.
		{"sse/2025-11-25", "sse", "2025-11-25", "unavailable", "failed to write: 503 Service Unavailable", 0, "connection closed"},
		{"sse/2026-07-28", "sse", "", "unavailable", "failed to write: 503 Service Unavailable", 0, "connection closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs *mcp.ClientSession
			if tt.transport == "sse" {
				srv := serve(t, "script-faults.yaml")
				hs := httptest.NewServer(srv.Handler())
				t.Cleanup(func() { srv.Close(); hs.Close() })
				cs = connectSSE(t, hs.URL, tt.version)
			} else {
				cs = connect(t, transportCase{tt.name, tt.version, tt.transport == "http"}, "script-faults.yaml", nil)
			}
			// The case's name says the version it runs in.
			if got, want := cs.InitializeResult().ProtocolVersion, cmp.Or(tt.version, "2026-07-28"); got != want {
				t.Fatalf("the client speaks %s, want %s", got, want)
			}
			_, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: tt.tool})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error with %q", err, tt.wantErr)
			}
			var rpc *jsonrpc.Error
			switch isRPC := errors.As(err, &rpc); {
			case tt.rpcCode == 0 && isRPC && strings.Contains(rpc.Message, "fault http-"):
				// go-sdk's own "rejected by transport" is one too.
				t.Errorf("got mcpmock's JSON-RPC error %v, want the HTTP status alone", rpc)
			case tt.rpcCode != 0 && (!isRPC || rpc.Code != tt.rpcCode || rpc.Message != tt.wantErr || string(rpc.Data) != unavailableData):
				t.Errorf("got %#v, want JSON-RPC error %d %q with data %s", err, tt.rpcCode, tt.wantErr, unavailableData)
			}
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "ok"})
			switch {
			case tt.afterErr == "" && (err != nil || text(t, res) != "fine"):
				t.Errorf("the call after the fault: %v, want its answer", err)
			case tt.afterErr != "" && (err == nil || !strings.Contains(err.Error(), tt.afterErr)):
				t.Errorf("the call after the fault: %v, want an error with %q", err, tt.afterErr)
			}
		})
	}
}

// TestGoSDK_ErrorWithStatus: http-NNN with an error answers the POST with
// the status and the call's JSON-RPC error as its body. go-sdk v1.8's
// client gives the call that error (its code and message), wrapped as
// rejected by the transport with the status text, and goes on: unlike a
// bare 403 or 401, an answer with an id does not end its connection.
// Over stdio there is no status: the error alone.
func TestGoSDK_ErrorWithStatus(t *testing.T) {
	const msg = "this call needs the admin scope"
	tests := []struct {
		name, transport, version string
		rejected                 bool // go-sdk says the transport rejected it (the status)
	}{
		{"stdio/2025-11-25", "stdio", "2025-11-25", false},
		{"http/2025-11-25", "http", "2025-11-25", true},
		{"http/2026-07-28", "http", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := connect(t, transportCase{tt.name, tt.version, tt.transport == "http"}, "script-faults.yaml", nil)
			_, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "forbidden"})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != -32001 || rpc.Message != msg {
				t.Fatalf("got %#v, want JSON-RPC error -32001 %q", err, msg)
			}
			if got := strings.Contains(err.Error(), "rejected by transport: Forbidden"); got != tt.rejected {
				t.Errorf("error %q: rejected by transport with the status %v, want %v", err, got, tt.rejected)
			}
			if res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "ok"}); err != nil || text(t, res) != "fine" {
				t.Errorf("the call after it: %v, want its answer", err)
			}
		})
	}
}

// TestGoSDK_ExpireSession: go-sdk's Streamable HTTP client reads the 404
// as the end of its session (mcp.ErrSessionMissing) and does not
// initialize again by itself: its session is over. A new one, which
// initializes, is served. Over stdio the connection is the session, so
// it closes. In the stateless era there is no session to expire, over
// HTTP or stdio: the call gets a JSON-RPC error and the next one, on the
// same connection, its answer.
func TestGoSDK_ExpireSession(t *testing.T) {
	const statelessMsg = "HTTP 404 Not Found (fault expire-session; 2026-07-28 has no session to expire)"
	t.Run("http/2025-11-25", func(t *testing.T) {
		srv := serve(t, "script-faults.yaml")
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { srv.Close(); hs.Close() })
		c := mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, nil)
		opts := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
		cs, err := c.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		old := cs.ID()
		if _, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "expire"}); !errors.Is(err, mcp.ErrSessionMissing) {
			t.Fatalf("got %v, want mcp.ErrSessionMissing", err)
		}
		if _, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "ok"}); err == nil {
			t.Errorf("the expired session's client answered again")
		}
		// The session is gone for any client that holds its id.
		if code, body := post(t, hs.URL+"/mcp", old, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ok"}}`); code != http.StatusNotFound {
			t.Errorf("a request of the expired session got %d %s, want 404", code, body)
		}
		again, err := c.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, opts)
		if err != nil {
			t.Fatalf("initialize again: %v", err)
		}
		defer again.Close()
		if again.ID() == old || again.ID() == "" {
			t.Errorf("new session id %q, old %q", again.ID(), old)
		}
		if res, err := again.CallTool(ctxT(t), &mcp.CallToolParams{Name: "ok"}); err != nil || text(t, res) != "fine" {
			t.Errorf("after initializing again: %v", err)
		}
	})
	for _, tc := range []transportCase{{"http/2026-07-28", "", true}, {"stdio/2026-07-28", "", false}, {"sse/2026-07-28", "", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var cs *mcp.ClientSession
			if strings.HasPrefix(tc.name, "sse/") {
				srv := serve(t, "script-faults.yaml")
				hs := httptest.NewServer(srv.Handler())
				t.Cleanup(func() { srv.Close(); hs.Close() })
				cs = connectSSE(t, hs.URL, tc.version)
			} else {
				cs = connect(t, tc, "script-faults.yaml", nil)
			}
			_, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "expire"})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != -32603 || rpc.Message != statelessMsg || string(rpc.Data) != `{"httpStatus":404}` {
				t.Fatalf("got %v, want the JSON-RPC error %q", err, statelessMsg)
			}
			if res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "ok"}); err != nil || text(t, res) != "fine" {
				t.Errorf("the call after: %v", err)
			}
		})
	}
	// A server without sessions has none to expire in the handshake era
	// either: the error, saying so, and the client goes on.
	t.Run("http without sessions/2025-11-25", func(t *testing.T) {
		srv := serveWith(t, "script-faults.yaml", replay.Options{HTTPSessions: "off"})
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { srv.Close(); hs.Close() })
		c := mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		const want = "HTTP 404 Not Found (fault expire-session; this server runs without sessions)"
		_, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "expire"})
		if rpc := (*jsonrpc.Error)(nil); !errors.As(err, &rpc) || rpc.Code != -32603 || rpc.Message != want {
			t.Fatalf("got %v, want the JSON-RPC error %q", err, want)
		}
		if res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "ok"}); err != nil || text(t, res) != "fine" {
			t.Errorf("the call after: %v", err)
		}
	})
	t.Run("stdio/2025-11-25", func(t *testing.T) {
		srv := serve(t, "script-faults.yaml")
		ctx := ctxT(t)
		toServer, fromServer, done := servePipes(ctx, srv)
		defer toServer.Close()
		c := mcp.NewClient(&mcp.Implementation{Name: "script-test", Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: fromServer, Writer: toServer}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "expire"}); err == nil {
			t.Fatal("the call that expired the session got an answer")
		}
		// The server ends the connection, as a stdio server whose session
		// is over exits.
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ok"}); err == nil {
			t.Errorf("the expired session's client answered again")
		}
	})
	t.Run("sse/2025-11-25", func(t *testing.T) {
		srv := serve(t, "script-faults.yaml")
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { srv.Close(); hs.Close() })
		cs := connectSSE(t, hs.URL, "2025-11-25")
		// The client sees its stream end or its POST refused, whichever
		// it reads first.
		if _, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "expire"}); err == nil {
			t.Fatal("the call that expired the session got an answer")
		}
		if _, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "ok"}); err == nil {
			t.Errorf("the expired session's client answered again")
		}
		again := connectSSE(t, hs.URL, "2025-11-25")
		if res, err := again.CallTool(ctxT(t), &mcp.CallToolParams{Name: "ok"}); err != nil || text(t, res) != "fine" {
			t.Errorf("on a new connection: %v", err)
		}
	})
}

// post sends one Streamable HTTP POST in session sid ("": none) and
// returns the status and body.
func post(t *testing.T, url, sid, body string) (int, string) {
	t.Helper()
	resp := postResp(t, url, sid, body)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

func postResp(t *testing.T, url, sid, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestHTTPFault_Wire: what the faults put on the wire over Streamable
// HTTP, for a plain HTTP client: the status and a line of text; after
// expire-session, 404 for the session's every request until the client
// initializes again, which gives it a new session that works.
func TestHTTPFault_Wire(t *testing.T) {
	srv := serve(t, "script-faults.yaml")
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	url := hs.URL + "/mcp"
	initialize := func() string {
		t.Helper()
		resp := postResp(t, url, "", initializeBody)
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
		}
		if code, _ := post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
			t.Fatalf("initialized: %d", code)
		}
		return sid
	}
	sid := initialize()
	call := func(id, tool string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `"}}`
	}
	tests := []struct {
		name, tool  string
		status      int
		body        string
		contentType string
		keepsHeader bool   // the answer names the session
		header      string // the fault's headers: NAME: VALUE
	}{
		{"503", "unavailable", 503, "Service Unavailable (mcpmock fault http-503)\n", "text/plain", true, "Retry-After: 30"},
		{"401 with its body", "unauthorized", 401, `{"error":"invalid_token","error_description":"the access token expired"}`, "application/json", true, `Www-Authenticate: Bearer realm="faults-demo", error="invalid_token"`},
		{"error with its status", "forbidden", 403, `{"jsonrpc":"2.0","id":4,"error":{"code":-32001,"message":"this call needs the admin scope"}}`, "application/json", true, `Www-Authenticate: Bearer error="insufficient_scope", scope="admin"`},
		{"still served", "ok", 200, "", "", true, ""},
		{"expire-session", "expire", 404, "Not Found: session expired (mcpmock fault expire-session)\n", "text/plain", false, ""},
		{"expired", "ok", 404, "Not Found: no such session (it ended, expired, or was never issued)\n", "text/plain", false, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postResp(t, url, sid, call(strconv.Itoa(i+2), tt.tool))
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, b, tt.status)
			}
			if tt.body != "" && (string(b) != tt.body || !strings.HasPrefix(resp.Header.Get("Content-Type"), tt.contentType)) {
				t.Errorf("body %q (%s), want %q as %s", b, resp.Header.Get("Content-Type"), tt.body, tt.contentType)
			}
			if got := resp.Header.Get("Mcp-Session-Id") != ""; got != tt.keepsHeader {
				t.Errorf("Mcp-Session-Id %q", resp.Header.Get("Mcp-Session-Id"))
			}
			var got []string
			for _, k := range []string{"Retry-After", "Www-Authenticate"} {
				for _, v := range resp.Header.Values(k) {
					got = append(got, k+": "+v)
				}
			}
			if h := strings.Join(got, "\n"); h != tt.header {
				t.Errorf("headers %q, want %q", h, tt.header)
			}
		})
	}
	// GET and DELETE find the session gone too.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequestWithContext(ctxT(t), method, url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s of the expired session: %d, want 404", method, resp.StatusCode)
		}
	}
	fresh := initialize()
	if fresh == sid {
		t.Fatalf("initialize again gave the expired session id %q", sid)
	}
	if code, body := post(t, url, fresh, call("20", "ok")); code != http.StatusOK || !strings.Contains(body, `"text":"fine"`) {
		t.Errorf("after initializing again: %d %s", code, body)
	}
}

// TestHTTPFault_LegacyWire: over legacy HTTP+SSE the POST carries the
// status; expire-session answers 404, ends the SSE stream, and the
// session's endpoint answers 404 after.
func TestHTTPFault_LegacyWire(t *testing.T) {
	srv := serve(t, "script-faults.yaml")
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, hs.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	var endpoint string
	for endpoint == "" && events.Scan() {
		if d, ok := strings.CutPrefix(events.Text(), "data: "); ok {
			endpoint = d
		}
	}
	if endpoint == "" {
		t.Fatalf("no endpoint event: %v", events.Err())
	}
	send := func(body string) (int, string) {
		t.Helper()
		return post(t, hs.URL+endpoint, "", body)
	}
	if code, _ := send(initializeBody); code != http.StatusAccepted {
		t.Fatalf("initialize: %d", code)
	}
	tests := []struct {
		name, body string
		status     int
		text       string
	}{
		{"503", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"unavailable"}}`, 503, "Service Unavailable (mcpmock fault http-503)\n"},
		{"still served", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ok"}}`, 202, ""},
		{"expire-session", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"expire"}}`, 404, "Not Found: session expired (mcpmock fault expire-session)\n"},
		{"expired", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ok"}}`, 404, "Not Found: no such session\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, text := send(tt.body); code != tt.status || text != tt.text {
				t.Errorf("got %d %q, want %d %q", code, text, tt.status, tt.text)
			}
		})
	}
	// The stream carried the initialize answer and ok's, then ended.
	var got []string
	for events.Scan() {
		if d, ok := strings.CutPrefix(events.Text(), "data: "); ok {
			got = append(got, d)
		}
	}
	if len(got) != 2 || !strings.Contains(got[0], `"id":1`) || !strings.Contains(got[1], `"text":"fine"`) {
		t.Errorf("the stream carried %q, want the answers to initialize and ok", got)
	}
}

// TestHTTPFault_Late: a status fault that comes once its POST has been
// answered in part (progress went out on an event stream) or whole (a
// legacy POST gets 202 at once, and the delay outlasts it) reaches the
// client as the JSON-RPC error, on the stream, saying why.
func TestHTTPFault_Late(t *testing.T) {
	path := filepath.Join(t.TempDir(), "late.yaml")
	script := `server: {name: late, version: "1"}
tools:
  - name: progressing
    answers: [{progress: [{progress: 1, total: 2}], fault: http-503}]
  - name: delayed
    answers: [{delay: 300ms, fault: http-503}]
`
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, path)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); hs.Close() })

	t.Run("streamable", func(t *testing.T) {
		resp := postResp(t, hs.URL+"/mcp", "", initializeBody)
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		code, body := post(t, hs.URL+"/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progressing","_meta":{"progressToken":"p"}}}`)
		want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"HTTP 503 Service Unavailable (fault http-503; the response had begun before the fault)","data":{"httpStatus":503}}}`
		if code != http.StatusOK || !strings.Contains(body, `"method":"notifications/progress"`) || !strings.Contains(body, "data: "+want+"\n") {
			t.Errorf("got %d:\n%s\nwant progress, then %s", code, body, want)
		}
	})
	t.Run("legacy", func(t *testing.T) {
		req, _ := http.NewRequestWithContext(ctxT(t), http.MethodGet, hs.URL+"/sse", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		events := bufio.NewScanner(resp.Body)
		next := func() string {
			t.Helper()
			for events.Scan() {
				if d, ok := strings.CutPrefix(events.Text(), "data: "); ok {
					return d
				}
			}
			t.Fatalf("stream ended: %v", events.Err())
			return ""
		}
		endpoint := next()
		if code, _ := post(t, hs.URL+endpoint, "", initializeBody); code != http.StatusAccepted {
			t.Fatalf("initialize: %d", code)
		}
		if got := next(); !strings.Contains(got, `"id":1,"result"`) {
			t.Fatalf("initialize answered %s", got)
		}
		if code, text := post(t, hs.URL+endpoint, "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delayed"}}`); code != http.StatusAccepted {
			t.Fatalf("tools/call: %d %s, want 202 (the fault comes after the delay)", code, text)
		}
		want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"HTTP 503 Service Unavailable (fault http-503; the POST had been answered 202 Accepted before the fault)","data":{"httpStatus":503}}}`
		if got := next(); got != want {
			t.Errorf("the stream carried\n%s\nwant\n%s", got, want)
		}
	})
}

// TestTSClient_Faults: the TypeScript SDK client (script-client.mjs)
// against the mcpmock binary. Over Streamable HTTP its error carries the
// status as its code, and its next call works, after a 401 too (it has
// no auth provider); a JSON-RPC error answered with 403 is no more than
// the body in its message: it does not read the error; after a 404 it keeps sending the dead session id and
// gets 404 again: only a new client, which initializes, is served. Over
// stdio it gets the JSON-RPC error, and expire-session closes the
// connection. The close fault breaks off the POST's connection (fetch
// fails) and the session goes on; over stdio the client learns at once
// that the connection closed, not at its request timeout.
func TestTSClient_Faults(t *testing.T) {
	mock := peertest.Binary(t, "mcpmock")
	root := peertest.ModuleRoot()
	script := filepath.Join(root, "cassettes", "script-faults.yaml")
	fine := `{"text":"fine"}`
	tests := []struct {
		transport, scenario string
		want                string // JSON the client prints, minus protocolVersion
	}{
		{"http", "status", `{"server":"faults-demo",
			"unavailable":{"code":503,"message":"Streamable HTTP error: Error POSTing to endpoint: Service Unavailable (mcpmock fault http-503)\n","data":null},
			"afterUnavailable":` + fine + `,
			"unauthorized":{"code":401,"message":"Streamable HTTP error: Error POSTing to endpoint: {\"error\":\"invalid_token\",\"error_description\":\"the access token expired\"}","data":null},
			"afterUnauthorized":` + fine + `,
			"forbidden":{"code":403,"message":"Streamable HTTP error: Error POSTing to endpoint: {\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32001,\"message\":\"this call needs the admin scope\"}}","data":null},
			"afterForbidden":` + fine + `}`},
		{"http", "expire", `{"server":"faults-demo",
			"expire":{"code":404,"message":"Streamable HTTP error: Error POSTing to endpoint: Not Found: session expired (mcpmock fault expire-session)\n","data":null},
			"sameSession":{"code":404,"message":"Streamable HTTP error: Error POSTing to endpoint: Not Found: no such session (it ended, expired, or was never issued)\n","data":null},
			"newSessionId":true,"again":` + fine + `}`},
		{"stdio", "status", `{"server":"faults-demo",
			"unavailable":{"code":-32603,"message":"MCP error -32603: HTTP 503 Service Unavailable (fault http-503; this transport has no HTTP status)","data":` + unavailableData + `},
			"afterUnavailable":` + fine + `,
			"unauthorized":{"code":-32603,"message":"MCP error -32603: HTTP 401 Unauthorized (fault http-401; this transport has no HTTP status)","data":{"httpStatus":401,"headers":{"WWW-Authenticate":"Bearer realm=\"faults-demo\", error=\"invalid_token\""}}},
			"afterUnauthorized":` + fine + `,
			"forbidden":{"code":-32001,"message":"MCP error -32001: this call needs the admin scope","data":null},
			"afterForbidden":` + fine + `}`},
		{"http", "close", `{"server":"faults-demo",
			"close":{"code":null,"message":"fetch failed","data":null},
			"afterClose":` + fine + `}`},
		{"stdio", "close", `{"server":"faults-demo",
			"close":{"code":-32000,"message":"MCP error -32000: Connection closed","data":null},
			"afterClose":{"code":null,"message":"Not connected","data":null}}`},
		// The TypeScript SDK client pairs an answer by Number(id), so an
		// answer to 2 that came as "2" resolved the call (the spec makes
		// them two ids); the fault's "2-wrong" answers nothing.
		{"stdio", "wrong-id", `{"server":"faults-demo","wrongId":{"code":-32001,"message":"MCP error -32001: Request timed out","data":{"timeout":300}}}`},
		{"stdio", "expire", `{"server":"faults-demo",
			"expire":{"code":-32000,"message":"MCP error -32000: Connection closed","data":null},
			"sameSession":{"code":null,"message":"Not connected","data":null},
			"newSessionId":false,"again":` + fine + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.transport+"/"+tt.scenario, func(t *testing.T) {
			t.Parallel()
			args := []string{tt.scenario, "--", mock, "serve", script}
			journal := filepath.Join(t.TempDir(), "journal.jsonl")
			if tt.transport == "http" {
				p := peertest.Start(t, root, nil, nil, nil, mock, "serve", "--http", "127.0.0.1:0", "--journal", journal, script)
				url := strings.TrimSpace(p.WaitLine(t, "mcpmock: listening on ", 30*time.Second))
				args = []string{tt.scenario, "--url", url}
			}
			runTSClient(t, args, tt.want)
			if tt.transport == "http" && tt.scenario == "status" {
				// It tries nothing again: not after a 503 with
				// Retry-After (which it does not read), nor after a 401.
				if got, want := toolCalls(t, journal), "unavailable ok unauthorized ok forbidden ok"; got != want {
					t.Errorf("the client called %q, want %q: one call each", got, want)
				}
			}
		})
	}
}

// toolCalls is the names of the tools called in a mcpmock journal, in
// the order the calls came.
func toolCalls(t *testing.T, journal string) string {
	t.Helper()
	raw, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for line := range strings.Lines(string(raw)) {
		var e struct {
			Method string
			Params struct{ Name string }
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("journal line %q: %v", line, err)
		}
		if e.Method == "tools/call" {
			names = append(names, e.Params.Name)
		}
	}
	return strings.Join(names, " ")
}

// TestFaults_OverWebSocket: WebSocket has no HTTP status after the
// upgrade: http-NNN is the JSON-RPC error, and expire-session closes the
// connection, as on stdio; a 2026-07-28 request has no session to expire,
// so it gets the JSON-RPC error and the connection goes on.
func TestFaults_OverWebSocket(t *testing.T) {
	srv := serve(t, "script-faults.yaml")
	hs := httptest.NewServer(srv.WebSocketHandler())
	t.Cleanup(func() { srv.Close(); hs.Close() })
	const stateless = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	eras := []struct {
		name, meta string
		tests      []struct{ tool, want string } // want "": the connection closes
	}{
		{"handshake era", "", []struct{ tool, want string }{
			{"unavailable", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"HTTP 503 Service Unavailable (fault http-503; this transport has no HTTP status)","data":` + unavailableData + `}}`},
			{"ok", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"text":"fine","type":"text"}]}}`},
			{"expire", ""},
		}},
		{"2026-07-28", stateless, []struct{ tool, want string }{
			{"expire", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"HTTP 404 Not Found (fault expire-session; 2026-07-28 has no session to expire)","data":{"httpStatus":404}}}`},
			{"ok", `{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"faults-demo","version":"1.0.0"}},"content":[{"text":"fine","type":"text"}],"resultType":"complete"}}`},
		}},
	}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			d := websocket.Dialer{Subprotocols: []string{"mcp"}}
			conn, _, err := d.DialContext(ctxT(t), "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a bound, should it never close
			for i, tt := range era.tests {
				req := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"` + tt.tool + `"` + era.meta + `}}`
				if err := conn.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
					t.Fatal(err)
				}
				_, got, err := conn.ReadMessage()
				switch {
				case tt.want == "" && err == nil:
					t.Errorf("%s: got %s, want the connection closed", tt.tool, got)
				case tt.want != "" && (err != nil || string(got) != tt.want):
					t.Errorf("%s: got %s (%v), want %s", tt.tool, got, err, tt.want)
				}
			}
		})
	}
}

// unavailableData is the data of the JSON-RPC error that stands for
// script-faults' http-503 where there is no status to give: the status,
// and the Retry-After it comes with.
const unavailableData = `{"httpStatus":503,"headers":{"Retry-After":"30"}}`

// TestHTTPFault_CloseDropsThePOST: over Streamable HTTP, fault: close
// breaks the POST's connection off with no status at all, as a server
// that died mid-request would, and the session lives on: it is the
// connection that drops, not the session (expire-session is for that),
// in a session with an id and without.
func TestHTTPFault_CloseDropsThePOST(t *testing.T) {
	for _, sessions := range []string{"on", "off"} {
		t.Run("sessions "+sessions, func(t *testing.T) {
			srv := serveWith(t, "script-faults.yaml", replay.Options{HTTPSessions: sessions})
			hs := httptest.NewServer(srv.Handler())
			t.Cleanup(func() { srv.Close(); hs.Close() })
			url := hs.URL + "/mcp"
			resp := postResp(t, url, "", initializeBody)
			resp.Body.Close()
			sid := resp.Header.Get("Mcp-Session-Id")
			if (sid != "") != (sessions == "on") {
				t.Fatalf("initialize gave session id %q with sessions %s", sid, sessions)
			}
			call := func(id, tool string) (*http.Response, error) {
				req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, strings.NewReader(
					`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"`+tool+`"}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				if sid != "" {
					req.Header.Set("Mcp-Session-Id", sid)
				}
				return http.DefaultClient.Do(req)
			}
			if resp, err := call("2", "close"); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Fatalf("close: got %d %s, want the connection broken off", resp.StatusCode, b)
			}
			resp, err := call("3", "ok")
			if err != nil {
				t.Fatalf("the call after close: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"text":"fine"`) {
				t.Errorf("the call after close: %d %s, want the session to answer", resp.StatusCode, b)
			}
		})
	}
}
