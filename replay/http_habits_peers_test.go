package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// TestReplay_ServerWithoutSessions records the TypeScript SDK client
// against a server without sessions (the handshake era: that client
// sends initialize, and gets no Mcp-Session-Id) through mcpspy, then
// replays the recording, and the script export --script makes of it, to
// the same client, again through mcpspy: the client sees the same, gets
// no session id from mcpmock either, and every HTTP exchange is alike in
// the recordings. The servers: go-sdk's stateless handler, the
// TypeScript SDK's transport without a session id generator, and
// mcp-go's stateless server.
func TestReplay_ServerWithoutSessions(t *testing.T) {
	t.Parallel()
	servers := []struct {
		name, ready string
		argv        []string
		// emptyGetStream: the server answers GET with an event stream
		// that carries nothing (the TypeScript SDK's does), which
		// mcpspy keeps in the session of its connection; mcpmock
		// replaying the recording does alike, and serving the script
		// (which says only sessions: false) answers it 405, as go-sdk
		// does. Either way the client goes on without one.
		emptyGetStream bool
	}{
		{"go-sdk", "gosdkserver: listening on ", []string{goServer(t), "-http", "127.0.0.1:0", "-stateless"}, false},
		{"TypeScript SDK", "stateless-server: listening on ", peertest.NodeScript(t, "stateless-server.mjs"), true},
		{"mcp-go", "mcpgoserver: listening on ", []string{mcpgoServer(t), "-http", "127.0.0.1:0", "-stateless"}, true},
	}
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			srv := peertest.Start(t, "", nil, nil, nil, sv.argv...)
			url := srv.WaitLine(t, sv.ready, 20*time.Second)
			live, liveDB := tsClientThroughSpy(t, strings.TrimSuffix(strings.TrimSuffix(url, "/"), "/mcp"), `{"text":"hi"}`)
			srv.Stop(t, 15*time.Second)
			if !strings.Contains(live, `"sessionId":null`) || !strings.Contains(live, `"echo":"hi"`) {
				t.Fatalf("live: %s; want the echo, and no session id from a server without sessions", live)
			}
			const refusedGet, emptyGet = "bare GET → 405 allow=POST", "bare GET → 200"
			liveShape := httpShape(t, liveDB)
			if slices.Contains(liveShape, refusedGet) == sv.emptyGetStream || slices.Contains(liveShape, emptyGet) != sv.emptyGetStream {
				t.Errorf("live recording %q; want its GET refused with 405: %v, or an empty stream: %v", liveShape, !sv.emptyGetStream, sv.emptyGetStream)
			}
			exported := exportScript(t, liveDB)
			if b, _ := os.ReadFile(exported); !strings.Contains(string(b), "sessions: false") {
				t.Errorf("the exported script does not say the server has no sessions:\n%s", b)
			}
			for _, source := range []string{liveDB, exported} {
				t.Run(filepath.Ext(source), func(t *testing.T) {
					mock := peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpmock"), "serve", "--http", "127.0.0.1:0", source)
					murl := mock.WaitLine(t, "mcpmock: listening on ", 20*time.Second)
					replayed, replayDB := tsClientThroughSpy(t, strings.TrimSuffix(murl, "/mcp"), `{"text":"hi"}`)
					// The script speaks 2026-07-28 too (every version,
					// unless it says): go-sdk's client takes it, and
					// sends no GET.
					var get string // go-sdk's client falls back to initialize, and GETs, only from the recording
					switch {
					case source != liveDB:
					case sv.emptyGetStream:
						get = `GET 200 session=""`
					default:
						get = `GET 405 session=""`
					}
					goSDKWithoutSession(t, murl, get)
					mock.Stop(t, 15*time.Second)
					if replayed != live {
						t.Errorf("the client saw\n%s\nreplayed, and live\n%s", replayed, live)
					}
					if !strings.Contains(mock.Stderr(), "without sessions") {
						t.Errorf("mcpmock's stderr does not say it serves without sessions:\n%s", mock.Stderr())
					}
					replayShape, wantShape := httpShape(t, replayDB), liveShape
					if sv.emptyGetStream && source == exported { // the script's server refuses it: compared apart
						replayShape = slices.DeleteFunc(replayShape, func(l string) bool { return l == refusedGet })
						wantShape = slices.DeleteFunc(slices.Clone(liveShape), func(l string) bool { return l == emptyGet })
					}
					if d := cmp.Diff(wantShape, replayShape); d != "" {
						t.Errorf("HTTP exchanges differ (-live +replay):\n%s", d)
					}
				})
			}
		})
	}
}

// goSDKWithoutSession has go-sdk's client (which tries 2026-07-28 first,
// and falls back to initialize) call the recorded echo: it gets the
// answer, and never a session id. wantGet, unless "": it falls back (the
// server speaks no 2026-07-28), and so sends a GET, answered so.
func goSDKWithoutSession(t *testing.T, url string, wantGet string) {
	t.Helper()
	var seen []string
	var mu sync.Mutex
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s %d session=%q", r.Method, resp.StatusCode, resp.Header.Get("Mcp-Session-Id")))
			mu.Unlock()
		}
		return resp, err
	})}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	cs.Close()
	if err != nil || resultText(res) != "hi" {
		t.Errorf("go-sdk client's echo: %v, %v; want hi", resultText(res), err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range seen {
		if !strings.HasSuffix(l, `session=""`) {
			t.Errorf("go-sdk client got a session id: %q", seen)
			break
		}
	}
	if wantGet != "" && !slices.Contains(seen, wantGet) {
		t.Errorf("go-sdk client's requests %q; want %s", seen, wantGet)
	}
}

// tsClientThroughSpy runs testdata/npm/http-client.mjs over Streamable
// HTTP through mcpspy record in front of upstream, and returns what the
// client printed and the cassette.
func tsClientThroughSpy(t *testing.T, upstream, echoArgs string) (out, db string) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "traffic.db")
	spy := peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpspy"), "record", "-o", db, "--upstream", upstream)
	url := gateCallsOnGET(t, spy.WaitLine(t, "mcpspy: listening on ", 20*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := peertest.NodeScript(t, "http-client.mjs", "streamable", url+"/mcp", "echo", echoArgs)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = peertest.NPMDir(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	spy.Stop(t, 15*time.Second)
	if err != nil {
		t.Fatalf("http-client.mjs: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(stdout)), db
}

// gateCallsOnGET puts a proxy before target (mcpspy) that holds the
// client's tools/call until the GET it opens after initialized has been
// answered, and returns the proxy's URL. The TypeScript SDK client opens
// that GET without waiting for it, and closes at the end of its short
// scenario: under load it once closed before the GET went out, and the
// recording had none to compare or replay. A GET that never comes fails
// the test after a while.
func gateCallsOnGET(t *testing.T, target string) string {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{})
	var once sync.Once
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(to) },
		FlushInterval: -1, // SSE, event by event
		ModifyResponse: func(r *http.Response) error {
			if r.Request.Method == http.MethodGet {
				once.Do(func() { close(answered) })
			}
			return nil
		},
	}
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body) // what could not be read, the proxy does not send either
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				select {
				case <-answered:
				case <-time.After(45 * time.Second):
					t.Errorf("the client's GET stream was not answered within 45 s of its tools/call")
				}
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	return gate.URL
}

// httpShape is what a recording's HTTP exchanges say of sessions, one
// line per message and per bare exchange: direction and method, HTTP
// method and status, whether the request sent an Mcp-Session-Id and the
// answer gave one, and a 405's Allow. Sorted: a client's requests travel
// on several connections, and which shares one with which varies.
func httpShape(t *testing.T, db string) []string {
	t.Helper()
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	line := func(what string, m *store.HTTPMeta) {
		l := fmt.Sprintf("%s %s", what, m.Method)
		if m.Status != 0 {
			l += fmt.Sprintf(" → %d", m.Status)
		}
		if http.Header(m.RequestHeader).Get("Mcp-Session-Id") != "" {
			l += " sends session"
		}
		if http.Header(m.ResponseHeader).Get("Mcp-Session-Id") != "" {
			l += " gets session"
		}
		if m.Status == http.StatusMethodNotAllowed {
			l += " allow=" + http.Header(m.ResponseHeader).Get("Allow")
		}
		lines = append(lines, l)
	}
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			if m.HTTP != nil {
				line(strings.TrimSpace(fmt.Sprintf("%s %s", m.Dir, jsonrpc.Classify(m.Frame).Method)), m.HTTP)
			}
		}
		for _, b := range s.Info.Bare {
			line("bare", &b.HTTP)
		}
	}
	slices.Sort(lines)
	return lines
}

// A server with sessions may refuse GET with 405 (it offers no stream of
// its own) and DELETE with 405 (clients may not end their sessions);
// mcp-go's does so when told (-no-get-stream: WithDisableStreaming,
// -no-delete: a session id manager that refuses termination). The
// TypeScript SDK client records against it through mcpspy, then against
// mcpmock replaying the recording: the client sees the same, and mcpmock
// refuses what the server refused and serves the rest, adding the Allow
// header mcp-go leaves out (HTTP requires one on a 405).
func TestReplay_ServerRefusingGetAndDelete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		flags     []string
		wantAllow string
		stderr    []string
	}{
		{"GET and DELETE refused", []string{"-no-get-stream", "-no-delete"}, "POST", []string{"GET gets 405", "DELETE gets 405"}},
		{"GET refused", []string{"-no-get-stream"}, "POST, DELETE", []string{"GET gets 405"}},
		{"DELETE refused", []string{"-no-delete"}, "GET, POST", []string{"DELETE gets 405"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := peertest.Start(t, "", nil, nil, nil, append([]string{mcpgoServer(t), "-http", "127.0.0.1:0"}, tt.flags...)...)
			url := srv.WaitLine(t, "mcpgoserver: listening on ", 20*time.Second)
			live, liveDB := tsClientThroughSpy(t, strings.TrimSuffix(strings.TrimSuffix(url, "/"), "/mcp"), `{"text":"hi"}`)
			srv.Stop(t, 15*time.Second)
			mock := peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpmock"), "serve", "--http", "127.0.0.1:0", liveDB)
			murl := mock.WaitLine(t, "mcpmock: listening on ", 20*time.Second)
			replayed, replayDB := tsClientThroughSpy(t, strings.TrimSuffix(murl, "/mcp"), `{"text":"hi"}`)
			mock.Stop(t, 15*time.Second)
			sessionID := regexp.MustCompile(`"sessionId":"[^"]*"`)
			if !sessionID.MatchString(live) || !strings.Contains(live, `"echo":"hi"`) {
				t.Fatalf("live: %s; want the echo in a session", live)
			}
			if sessionID.ReplaceAllString(replayed, "") != sessionID.ReplaceAllString(live, "") {
				t.Errorf("the client saw\n%s\nreplayed, and live\n%s", replayed, live)
			}
			for _, l := range tt.stderr {
				if !strings.Contains(mock.Stderr(), l) {
					t.Errorf("mcpmock's stderr does not say %q:\n%s", l, mock.Stderr())
				}
			}
			// mcp-go sends no Allow with its 405; mcpmock's names what it serves.
			allow := regexp.MustCompile(` allow=.*`)
			liveShape, replayShape := httpShape(t, liveDB), httpShape(t, replayDB)
			refusals := 0
			for i, l := range replayShape {
				if strings.Contains(l, "→ 405") {
					refusals++
					if !strings.HasSuffix(l, " allow="+tt.wantAllow) {
						t.Errorf("replayed %q; want Allow: %s", l, tt.wantAllow)
					}
				}
				replayShape[i] = allow.ReplaceAllString(l, "")
			}
			for i, l := range liveShape {
				liveShape[i] = allow.ReplaceAllString(l, "")
			}
			if refusals != len(tt.stderr) {
				t.Errorf("replayed HTTP exchanges %q; want %d refused with 405", replayShape, len(tt.stderr))
			}
			// mcpspy show --http prints the refusals, which are no
			// messages, among the lines of the live recording.
			shown, err := exec.Command(peertest.Binary(t, "mcpspy"), "show", "--http", liveDB).CombinedOutput()
			if n := strings.Count(string(shown), " → 405 · at "); err != nil || n != len(tt.stderr) {
				t.Errorf("show --http: %v, %d refusals shown; want %d:\n%s", err, n, len(tt.stderr), shown)
			}
			if d := cmp.Diff(liveShape, replayShape); d != "" {
				t.Errorf("HTTP exchanges differ (-live +replay):\n%s", d)
			}
		})
	}
}

// --http-sessions off replays a recording of a server with sessions
// (server-everything's, shipped) as a server without them, and on
// replays one without (go-sdk's stateless handler's) with them: the
// TypeScript SDK client sees the same answers either way, with or
// without a session id, and its GET is served or refused to match.
func TestReplay_HTTPSessionsFlag(t *testing.T) {
	t.Parallel()
	srv := peertest.Start(t, "", nil, nil, nil, goServer(t), "-http", "127.0.0.1:0", "-stateless")
	url := srv.WaitLine(t, "gosdkserver: listening on ", 20*time.Second)
	_, stateless := tsClientThroughSpy(t, strings.TrimSuffix(url, "/"), `{"text":"hi"}`)
	srv.Stop(t, 15*time.Second)

	tests := []struct {
		name, source, sessions, args string
		wantSession                  bool
	}{
		{"server-everything without sessions", peertest.CopyShipped(t, "everything-http.db"), "off", `{"message":"hello from mcptape"}`, false},
		{"go-sdk's stateless server with sessions", stateless, "on", `{"text":"hi"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serve := func(sessions string) (string, []string) {
				mock := peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpmock"), "serve", "--http", "127.0.0.1:0", "--http-sessions", sessions, tt.source)
				murl := mock.WaitLine(t, "mcpmock: listening on ", 20*time.Second)
				out, db := tsClientThroughSpy(t, strings.TrimSuffix(murl, "/mcp"), tt.args)
				mock.Stop(t, 15*time.Second)
				return out, httpShape(t, db)
			}
			asRecorded, _ := serve("auto")
			out, shape := serve(tt.sessions)
			if got := !strings.Contains(out, `"sessionId":null`); got != tt.wantSession {
				t.Errorf("--http-sessions %s: the client saw %s; want a session id: %v", tt.sessions, out, tt.wantSession)
			}
			if strip := func(s string) string { return regexp.MustCompile(`"sessionId":[^,]*,`).ReplaceAllString(s, "") }; strip(out) != strip(asRecorded) {
				t.Errorf("--http-sessions %s: the client saw\n%s\nand as recorded\n%s", tt.sessions, out, asRecorded)
			}
			withSession := slices.ContainsFunc(shape, func(l string) bool { return strings.Contains(l, "gets session") })
			refused := slices.ContainsFunc(shape, func(l string) bool { return strings.HasPrefix(l, "bare GET → 405") })
			if withSession != tt.wantSession || refused == tt.wantSession {
				t.Errorf("--http-sessions %s: HTTP exchanges %q; want session ids: %v, the GET refused: %v", tt.sessions, shape, tt.wantSession, !tt.wantSession)
			}
		})
	}
}

// A GET or DELETE of 2026-07-28 (no session, no stream of the server's
// own) gets 405 and Allow: POST from go-sdk v1.8's stateless handler and
// from mcpmock alike, whatever mcpmock replays: a 2026-07-28 call, or a
// handshake-era server with sessions.
func TestHTTP_StatelessEraGetAndDeleteMatchGoSDK(t *testing.T) {
	sdkURL, mock := echoServers(t)
	withSessions, err := replay.NewServer([]replay.Source{mustCassette(t, habitTape(t, 0, 0))}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	peers := []struct{ name, url string }{{"go-sdk", sdkURL}, {"mcpmock", mock}, {"mcpmock replaying sessions", newHTTPServer(t, withSessions)}}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		for _, peer := range peers {
			req, _ := http.NewRequest(method, peer.url, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow POST", peer.name, method, resp.StatusCode, resp.Header.Get("Allow"))
			}
		}
	}
}
