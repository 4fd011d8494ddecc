package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// spy is a running mcpspy binary.
type spy struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
	url    string
}

// startSpy runs mcpspy record with args and waits for its listening line.
func startSpy(t *testing.T, args ...string) *spy {
	t.Helper()
	bin := peertest.Binary(t, "mcpspy")
	cmd := exec.Command(bin, append([]string{"record"}, args...)...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	s := &spy{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	go func() { err := cmd.Wait(); pw.Close(); s.done <- err }()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.After(30 * time.Second)
	for s.url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("mcpspy ended before listening")
			}
			if rest, ok := strings.CutPrefix(l, "mcpspy: listening on "); ok {
				s.url = rest
			}
		case <-deadline:
			t.Fatal("mcpspy did not print its listening line in 30s")
		}
	}
	go func() {
		for range lines {
		}
	}()
	return s
}

// stop interrupts mcpspy and returns its exit error; safe to repeat.
func (s *spy) stop(t *testing.T) error {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return nil
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-s.done:
		return err
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Errorf("mcpspy did not stop within 15s of SIGINT")
		return errors.New("killed")
	}
}

// tcpServer accepts on 127.0.0.1 until the test ends and hands each
// connection to handle, on its own goroutine; it returns the address.
// httpUpstream serves h on 127.0.0.1 until the test ends and returns its
// address.
func httpUpstream(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := &http.Server{Handler: h}
	go up.Serve(ln)
	t.Cleanup(func() { up.Close() })
	return ln.Addr().String()
}

// postPing POSTs a ping to url with the client's own Authorization and
// returns the status.
func postPing(t *testing.T, url, authorization string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", authorization)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func tcpServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}

// Bad input: one clear line on stderr and a non-zero exit.
func TestRecordNet_BadInput(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	// A server that answers in something other than HTTP.
	notHTTP := tcpServer(t, func(c net.Conn) {
		c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
		c.Close()
	})
	// One that reads the request and hangs up without a word.
	closer := tcpServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		c.Close()
	})
	// One that takes the connection and never answers.
	silenced := make(chan struct{})
	defer close(silenced)
	silent := tcpServer(t, func(c net.Conn) {
		<-silenced
		c.Close()
	})
	// An HTTPS server whose certificate nobody signed.
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	defer untrusted.Close()
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String() + "/mcp"
	dead.Close()

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantMsg  string
	}{
		{"unknown scheme", []string{"--upstream", "ftp://127.0.0.1/x"}, 2, `unknown scheme "ftp"`},
		{"no host", []string{"--upstream", "http:///mcp"}, 2, "has no host"},
		{"listen address in use", []string{"--listen", busy.Addr().String(), "--upstream", deadURL}, 1, "address already in use"},
		{"listen address without a port", []string{"--listen", "bogus", "--upstream", deadURL}, 2, "listen on bogus: missing port in address (want HOST:PORT, such as 127.0.0.1:0)"},
		{"non-HTTP upstream", []string{"--upstream", "http://" + notHTTP + "/mcp"}, 1, "does not speak HTTP"},
		{"redact with no-redact", []string{"--no-redact", "--redact", "x", "--upstream", deadURL}, 2, "contradict"},
		{"redact-value with no-redact", []string{"--no-redact", "--redact-value", "sk-", "--upstream", deadURL}, 2, "--redact-value and --no-redact contradict"},
		{"not a URL", []string{"--upstream", "http://[::1"}, 2, "is not a URL"},
		{"upstream hangs up", []string{"--upstream", "http://" + closer + "/mcp"}, 1, "closed the connection without a response"},
		{"upstream silent", []string{"--upstream", "http://" + silent + "/mcp"}, 1, "no response within 5s"},
		{"certificate not trusted", []string{"--upstream", untrusted.URL + "/mcp"}, 1, "certificate not trusted"},
		{"https to a server that is not TLS", []string{"--upstream", "https://" + notHTTP + "/mcp"}, 1, "does not speak HTTP"},
		// The line names the upstream as the cassette would (it may go to
		// a CI log), --no-redact or not.
		{"non-HTTP upstream with credentials", []string{"--upstream", "http://u:s3cret@" + notHTTP + "/mcp?api_key=s3cret"}, 1,
			"upstream http://u:%5Bredacted%5D@" + notHTTP + "/mcp?api_key=[redacted] does not speak HTTP"},
		{"non-HTTP ws upstream with a token, --no-redact", []string{"--no-redact", "--upstream", "ws://" + notHTTP + "/mcp?token=s3cret"}, 1,
			"upstream ws://" + notHTTP + "/mcp?token=[redacted] does not speak HTTP"},
	}
	bin := peertest.Binary(t, "mcpspy")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cassette := filepath.Join(t.TempDir(), "c.db")
			args := append([]string{"record", "-o", cassette}, tt.args...)
			cmd := exec.Command(bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			go func() { <-ctx.Done(); _ = cmd.Process.Kill() }()
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.wantCode {
				t.Fatalf("exit %v, want code %d; stderr:\n%s", err, tt.wantCode, stderr.String())
			}
			out := strings.TrimRight(stderr.String(), "\n")
			if strings.Count(out, "\n") != 0 || !strings.Contains(out, tt.wantMsg) || !strings.HasPrefix(out, "mcpspy: ") || strings.Contains(out, "s3cret") {
				t.Errorf("stderr %q: want one line containing %q", out, tt.wantMsg)
			}
			// It failed before any session began: no new file is left.
			if _, err := os.Stat(cassette); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("stat %s: %v; want no cassette made", cassette, err)
			}
		})
	}
}

// End to end through the binary: server-everything over Streamable HTTP,
// the TS SDK client, SIGINT, and a cassette with one ended session whose
// upstream is stored with its secret query parameter redacted.
func TestRecordNet_ServerEverythingThroughBinary(t *testing.T) {
	t.Parallel()
	env, port := peertest.FreePortEnv(t)
	se := peertest.Start(t, peertest.NPMDir(t), []string{env}, nil, nil, peertest.ServerEverything(t, "streamableHttp")...)
	se.WaitLine(t, "MCP Streamable HTTP Server listening on port", 30*time.Second)
	cassette := filepath.Join(t.TempDir(), "c.db")
	up := fmt.Sprintf("http://127.0.0.1:%d/mcp?api_key=hush", port)
	s := startSpy(t, "-o", cassette, "--session", "e2e", "--upstream", up)
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") {
		t.Fatalf("listening on %q, want loopback by default", s.url)
	}
	argv := peertest.NodeScript(t, "http-client.mjs", "streamable", s.url+"/mcp", "echo", `{"message":"e2e"}`)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = peertest.NPMDir(t)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("Echo: e2e")) {
		t.Fatalf("client: %v\n%s", err, out)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("mcpspy exit: %v", err)
	}
	var infos []store.SessionInfo
	if err := store.View(cassette, func(r *store.Reader) error { infos, err = r.Sessions(); return err }); err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 {
		t.Fatalf("sessions %+v", infos)
	}
	in := infos[0]
	if in.Name != "e2e" || in.End == nil || strings.Contains(in.Upstream, "hush") || !strings.Contains(in.Upstream, "api_key=") {
		t.Errorf("session info %+v", in)
	}
}

// A ws:// upstream: the listening line says ws://, frames pass one to one.
func TestRecordNet_WebSocketThroughBinary(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := websocket.Upgrader{Subprotocols: []string{"mcp"}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			mt, b, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(mt, bytes.Replace(b, []byte(`"method":"ping"`), []byte(`"result":{}`), 1)); err != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	cassette := filepath.Join(t.TempDir(), "ws.db")
	s := startSpy(t, "-o", cassette, "--upstream", "ws://"+ln.Addr().String())
	if !strings.HasPrefix(s.url, "ws://127.0.0.1:") {
		t.Fatalf("listening on %q, want ws://", s.url)
	}
	c, _, err := (&websocket.Dialer{Subprotocols: []string{"mcp"}}).Dial(s.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if _, b, err := c.ReadMessage(); err != nil || string(b) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("read %s, %v", b, err)
	}
	c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	c.ReadMessage()
	c.Close()
	if err := s.stop(t); err != nil {
		t.Fatalf("mcpspy exit: %v", err)
	}
	n := 0
	err = store.View(cassette, func(r *store.Reader) error {
		infos, err := r.Sessions()
		if err != nil || len(infos) != 1 {
			return fmt.Errorf("sessions %v %v", infos, err)
		}
		n = r.Count(infos[0].ID)
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("cassette: %v, %d messages, want 2", err, n)
	}
}

// --allow-origin lets one more browser origin through; any other foreign
// origin gets 403 and never reaches the upstream.
func TestRecordNet_AllowOrigin(t *testing.T) {
	var hits []string
	var mu sync.Mutex
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost { // not mcpspy's start-up probe
			mu.Lock()
			hits = append(hits, r.Header.Get("Origin"))
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s := startSpy(t, "-o", filepath.Join(t.TempDir(), "c.db"), "--allow-origin", "https://app.example", "--upstream", "http://"+ln.Addr().String()+"/mcp")
	for _, tt := range []struct {
		origin string
		status int
	}{
		{"https://app.example", 200},
		{"https://evil.example", 403},
		{"http://127.0.0.1:9", 200}, // loopback origins always pass
	} {
		req, _ := http.NewRequest("POST", s.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Origin", tt.origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("Origin %s: status %d, want %d", tt.origin, resp.StatusCode, tt.status)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(hits, " ") != "https://app.example http://127.0.0.1:9" {
		t.Errorf("upstream saw origins %q, want only the allowed ones", hits)
	}
}

// With HTTP_PROXY set, a plain-http upstream is reached through that
// proxy, as Go's HTTP client would reach it; mcpspy's own per-connection
// way upstream dials directly, so it must step aside.
func TestRecordNet_HTTPProxyFromEnvironment(t *testing.T) {
	var hits []string
	var mu sync.Mutex
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fwd := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.Method+" "+r.URL.String()) // absolute form: a proxy request
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"via":"proxy"}}`)
	})}
	go fwd.Serve(ln)
	t.Cleanup(func() { fwd.Close() })
	for _, k := range []string{"HTTP_PROXY", "http_proxy"} {
		t.Setenv(k, "http://"+ln.Addr().String())
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		t.Setenv(k, "")
	}
	// .invalid never resolves (RFC 2606): only the proxy can answer.
	s := startSpy(t, "-o", filepath.Join(t.TempDir(), "c.db"), "--upstream", "http://mcp.invalid/mcp")
	resp, err := http.Post(s.url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"via":"proxy"`) {
		t.Fatalf("status %d, body %s; want the proxy's answer", resp.StatusCode, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hits) != 1 || hits[0] != "POST http://mcp.invalid/mcp" {
		t.Errorf("proxy saw %q, want one POST for http://mcp.invalid/mcp", hits)
	}
}

// The user info of an --upstream URL reaches the upstream as Basic
// credentials, in place of the client's own, as Go's HTTP client would
// send it, over plain HTTP and WebSocket alike (the WebSocket dialer
// refuses a URL with user info); the cassette keeps the user, never the
// password.
func TestRecordNet_UpstreamUserInfoReachesUpstream(t *testing.T) {
	const user, password = "alice", "pw-7d3f-only-upstream"
	for _, scheme := range []string{"http", "ws"} {
		t.Run(scheme, func(t *testing.T) {
			seen := make(chan string, 4)
			addr := httpUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodOptions {
					return // mcpspy's probe at start
				}
				u, p, _ := r.BasicAuth()
				seen <- u + ":" + p
				if u != user || p != password {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				if scheme == "ws" {
					c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
					if err == nil {
						c.Close()
					}
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
			}))
			cassette := filepath.Join(t.TempDir(), "c.db")
			s := startSpy(t, "-o", cassette, "--upstream", scheme+"://"+user+":"+password+"@"+addr+"/mcp")
			if scheme == "ws" {
				c, _, err := websocket.DefaultDialer.Dial(strings.Replace(s.url, "http://", "ws://", 1)+"/mcp", nil)
				if err != nil {
					t.Fatalf("WebSocket through mcpspy: %v\n%s", err, s.stderr)
				}
				c.Close()
			} else {
				if status := postPing(t, s.url+"/mcp", "Bearer the-clients-own"); status != http.StatusOK {
					t.Errorf("status %d through mcpspy, want 200", status)
				}
			}
			if got := <-seen; got != user+":"+password {
				t.Errorf("upstream got Basic credentials %q, want %q", got, user+":"+password)
			}
			if err := s.stop(t); err != nil {
				t.Fatalf("mcpspy: %v\n%s", err, s.stderr)
			}
			raw, err := os.ReadFile(cassette)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte(password)) || !bytes.Contains(raw, []byte(user)) {
				t.Errorf("the cassette holds the password %v, the user %v; want only the user",
					bytes.Contains(raw, []byte(password)), bytes.Contains(raw, []byte(user)))
			}
		})
	}
}

// --header reaches the upstream on every request, in place of the
// client's own, and never the cassette.
func TestRecordNet_HeaderReachesUpstream(t *testing.T) {
	const token = "Bearer tok-5c1e-only-upstream"
	var mu sync.Mutex
	var seen []string
	addr := httpUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			return // mcpspy's probe at start: its own request, not the client's
		}
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Tenant")+"|"+r.Host)
		mu.Unlock()
		if r.Header.Get("Authorization") != token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	cassette := filepath.Join(t.TempDir(), "c.db")
	s := startSpy(t, "-o", cassette, "--header", "Authorization: "+token, "--header", "X-Tenant: blue", "--header", "Host: mcp.example",
		"--upstream", "http://"+addr+"/mcp")
	if status := postPing(t, s.url+"/mcp", "Bearer the-clients-own"); status != http.StatusOK {
		t.Errorf("status %d through mcpspy --header, want 200", status)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("mcpspy: %v\n%s", err, s.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != token+"|blue|mcp.example" {
		t.Errorf("upstream saw %q, want the --header values once", seen)
	}
	raw, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("tok-5c1e")) {
		t.Error("the --header token is in the cassette")
	}
}

// Bound to every interface (--listen 0.0.0.0:0, as in a container), the
// one listening line gives a URL a client on this machine reaches, not
// http://[::]:PORT, which Go prints for the unspecified address.
func TestRecordNet_ListeningLineOfEveryInterface(t *testing.T) {
	addr := httpUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	s := startSpy(t, "-o", filepath.Join(t.TempDir(), "c.db"), "--listen", "0.0.0.0:0", "--upstream", "http://"+addr+"/mcp")
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") {
		t.Fatalf("listening on %q, want http://127.0.0.1:PORT", s.url)
	}
	if status := postPing(t, s.url+"/mcp", ""); status != http.StatusOK {
		t.Errorf("status %d at the URL the line gives, want 200", status)
	}
}
