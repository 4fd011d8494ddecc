package recorder_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// upstreamToken is the only bearer token protectedServer accepts. It is
// distinctive so that a search of the cassette's bytes cannot miss it.
const upstreamToken = "tok-9f3a-never-in-the-cassette"

// protectedServer serves h behind go-sdk's own bearer-token middleware,
// the way a remote MCP server with OAuth answers: 401 with a
// WWW-Authenticate header naming its protected-resource metadata (RFC
// 9728, served too, with the authorization server's metadata beside it),
// unless the request carries upstreamToken. It returns the server's URL
// and the Authorization headers that reached h.
func protectedServer(tb testing.TB, h http.Handler) (string, func() []string) {
	tb.Helper()
	var mu sync.Mutex
	var seen []string
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != upstreamToken {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(
		&oauthex.ProtectedResourceMetadata{Resource: base + "/mcp", AuthorizationServers: []string{base}}))
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,`+
			`"response_types_supported":["code"],"code_challenge_methods_supported":["S256"]}`,
			base, base+"/authorize", base+"/token")
	})
	mux.Handle("/", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp",
	})(inner))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return base, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// cassetteHolds reports whether the cassette file's bytes contain s
// anywhere: in messages, headers or session info.
func cassetteHolds(tb testing.TB, path, s string) bool {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Contains(b, []byte(s))
}

// A client without credentials records a server that wants a token when
// mcpspy is given the token (--header): the go-sdk client, talking to a
// go-sdk server behind go-sdk's bearer-token middleware, connects and
// calls a tool through the proxy. The token reaches the server on every
// request, replacing one the client sent, and is nowhere in the cassette.
func TestHTTPProxy_HeaderGivesCredentials(t *testing.T) {
	tests := []struct {
		name         string
		clientHeader string // an Authorization header the client sends itself
	}{
		{name: "client sends none"},
		{name: "client sends its own, which the proxy's replaces", clientHeader: "Bearer the-clients-own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := goSDKServer()
			up, seen := protectedServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			var log syncbuf.Buffer
			px := startHTTPProxy(t, up+"/mcp", func(p *recorder.HTTPProxy) {
				p.Header = http.Header{"Authorization": {"Bearer " + upstreamToken}}
				p.Log = &log
			})

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			hc := http.DefaultClient
			if tt.clientHeader != "" {
				hc = &http.Client{Transport: peertest.HeaderTransport{Name: "Authorization", Value: tt.clientHeader}}
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "client-go", Version: "0.1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp", HTTPClient: hc}, nil)
			if err != nil {
				t.Fatalf("connect through the proxy: %v", err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "let in"}})
			if err != nil {
				t.Fatalf("echo: %v", err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "let in" {
				t.Errorf("echo = %q", got)
			}
			_ = cs.Close()
			px.Stop()

			auths := seen()
			if len(auths) == 0 {
				t.Fatal("no request reached the server")
			}
			for i, a := range auths {
				if a != "Bearer "+upstreamToken {
					t.Errorf("request %d reached the server with Authorization %q", i+1, a)
				}
			}
			if cassetteHolds(t, px.Cassette, upstreamToken) {
				t.Error("the proxy's token is in the cassette")
			}
			var calls int
			for _, s := range readCassette(t, px.Cassette) {
				for _, m := range s.msgs {
					if m.Dir != store.C2S {
						continue
					}
					calls++
					// What the client sent is what is kept (redacted).
					want := ""
					if tt.clientHeader != "" {
						want = store.Redacted
					}
					if got := m.HTTP.RequestHeader.Get("Authorization"); got != want {
						t.Errorf("seq %d: recorded Authorization %q, want %q", m.Seq, got, want)
					}
				}
			}
			if calls == 0 {
				t.Error("nothing the client sent was recorded")
			}
			if log.String() != "" {
				t.Errorf("the proxy logged %q; with a token it has nothing to say", log.String())
			}
		})
	}
}

// Without a token, the client meets the server's 401 as it would without
// the proxy, and the user is told once (not per request) what to do.
func TestHTTPProxy_UnauthorizedHintsOnce(t *testing.T) {
	srv := goSDKServer()
	up, _ := protectedServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	var log syncbuf.Buffer
	px := startHTTPProxy(t, up+"/mcp", func(p *recorder.HTTPProxy) { p.Log = &log })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 2 {
		client := mcp.NewClient(&mcp.Implementation{Name: "client-go", Version: "0.1"}, nil)
		_, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp"}, nil)
		if err == nil {
			t.Fatal("connected to a server that wants a token, without one")
		}
		if !strings.Contains(err.Error(), "Unauthorized") && !strings.Contains(err.Error(), "401") {
			t.Errorf("connect error %q does not say unauthorized", err)
		}
	}
	px.Stop()
	got := log.String()
	if n := strings.Count(got, "answered 401"); n != 1 {
		t.Fatalf("the proxy told of the 401 %d times, want once:\n%s", n, got)
	}
	for _, want := range []string{up + "/mcp", "RFC 9728", "--header 'Authorization: Bearer …'"} {
		if !strings.Contains(got, want) {
			t.Errorf("the hint %q does not name %q", got, want)
		}
	}
}

// The WebSocket proxy puts its headers on the upstream handshake: the
// TS SDK's transport cannot set headers at all, so this is the only way
// it reaches a server that wants a token.
func TestWSProxy_HeaderGivesCredentials(t *testing.T) {
	codes := make(chan int, 4)
	up, seen := protectedServer(t, gosdk.WebSocketHandler(goSDKServer(), codes))
	upURL, _ := url.Parse("ws" + strings.TrimPrefix(up, "http") + "/ws")
	for _, withToken := range []bool{true, false} {
		t.Run(map[bool]string{true: "with --header", false: "without"}[withToken], func(t *testing.T) {
			cassette, w := testWriter(t, "ws.db")
			var log syncbuf.Buffer
			p := &recorder.WSProxy{Upstream: upURL, Writer: w, Redact: recorder.NewHTTPRedactor(nil), Log: &log,
				Info: store.SessionInfo{Upstream: upURL.String(), Recorder: "test"}}
			if withToken {
				p.Header = http.Header{"Authorization": {"Bearer " + upstreamToken}}
			}
			addr, stop := runProxy(t, p.Serve, w)
			before := len(seen())

			d := websocket.Dialer{Subprotocols: []string{"mcp"}}
			conn, resp, err := d.Dial("ws://"+addr+"/ws", nil)
			if !withToken {
				if err == nil {
					conn.Close()
					t.Fatal("the handshake passed without a token")
				}
				if resp == nil || resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("handshake without a token: %v (response %v), want the server's 401", err, resp)
				}
				stop()
				if !strings.Contains(log.String(), "answered 401") {
					t.Errorf("no hint logged for the 401: %q", log.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("dial through the proxy: %v", err)
			}
			req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ws","version":"1"}}}`
			if err := conn.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, answer, err := conn.ReadMessage()
			if err != nil || !bytes.Contains(answer, []byte(`"serverInfo"`)) {
				t.Fatalf("initialize answer %q, %v", answer, err)
			}
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					var ce *websocket.CloseError
					if !errors.As(err, &ce) {
						t.Logf("after close: %v", err)
					}
					break
				}
			}
			conn.Close()
			stop()
			if got := seen()[before:]; len(got) != 1 || got[0] != "Bearer "+upstreamToken {
				t.Errorf("the upstream handshake carried Authorization %q, want the proxy's token once", got)
			}
			if cassetteHolds(t, cassette, upstreamToken) {
				t.Error("the proxy's token is in the cassette")
			}
			if readCassette(t, cassette)[0].msgs == nil {
				t.Error("nothing recorded")
			}
		})
	}
}

// Why the proxy needs a token of its own: the TypeScript SDK will not log
// in through it. Asked for a token directly, the SDK client goes as far
// as sending its user to the authorization server, for the server's URL.
// Through the proxy it gives up before that: the protected-resource
// metadata names the upstream's URL, not the address the client was
// given, and the SDK refuses a resource that is not its server's (RFC
// 9728 section 3.3). Given the token, the proxy lets the same SDK, with
// no credentials of its own, record the server.
func TestHTTPProxy_OAuthThroughTheProxy_TSClient(t *testing.T) {
	srv := goSDKServer()
	up, _ := protectedServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	var log syncbuf.Buffer
	px := startHTTPProxy(t, up+"/mcp", func(p *recorder.HTTPProxy) { p.Log = &log })

	direct := runOAuthClient(t, up+"/mcp")
	authorize, err := url.Parse(direct.Authorize)
	if direct.Authorize == "" || err != nil {
		t.Fatalf("directly, the SDK did not get to the authorization server: %+v", direct)
	}
	if got := authorize.Query().Get("resource"); got != up+"/mcp" {
		t.Errorf("directly, the SDK asks a token for resource %q, want %q", got, up+"/mcp")
	}

	proxied := runOAuthClient(t, px.URL+"/mcp")
	if proxied.Authorize != "" || !strings.Contains(proxied.Error, "does not match expected") {
		t.Errorf("through the proxy the SDK got %+v; want it to refuse the upstream's resource metadata", proxied)
	}
	if !strings.Contains(log.String(), "RFC 9728") {
		t.Errorf("the proxy did not tell the user why: %q", log.String())
	}

	tokened := startHTTPProxy(t, up+"/mcp", func(p *recorder.HTTPProxy) {
		p.Header = http.Header{"Authorization": {"Bearer " + upstreamToken}}
	})
	got := runTSClient(t, "streamable", tokened.URL+"/mcp", "echo", `{"text":"in"}`)
	if got.Echo != "in" || got.Server != "upstream-go" {
		t.Errorf("the TS client through a proxy with the token got %+v", got)
	}
	tokened.Stop()
	if cassetteHolds(t, tokened.Cassette, upstreamToken) {
		t.Error("the proxy's token is in the cassette")
	}
}

// oauthOut is what testdata/npm/oauth-client.mjs prints.
type oauthOut struct {
	Authorize string `json:"authorize"`
	Error     string `json:"error"`
}

func runOAuthClient(tb testing.TB, serverURL string) oauthOut {
	tb.Helper()
	argv := peertest.NodeScript(tb, "oauth-client.mjs", serverURL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("oauth client: %v\nstderr:\n%s", err, stderr.String())
	}
	var o oauthOut
	if err := json.Unmarshal(bytes.TrimSpace(out), &o); err != nil {
		tb.Fatalf("oauth client printed %q: %v\nstderr:\n%s", out, err, stderr.String())
	}
	return o
}
