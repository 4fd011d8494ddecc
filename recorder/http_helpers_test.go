package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorded is one session read back from a cassette.
type recorded struct {
	info store.SessionInfo
	msgs []*store.Message
}

func readCassette(tb testing.TB, path string) []recorded {
	tb.Helper()
	var out []recorded
	err := store.View(path, func(r *store.Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		for _, info := range infos {
			rs := recorded{info: info}
			if err := r.Messages(info.ID, 1, func(m *store.Message) error { rs.msgs = append(rs.msgs, m); return nil }); err != nil {
				return err
			}
			out = append(out, rs)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("read cassette: %v", err)
	}
	return out
}

// methods lists "dir kind method/id" of each message, for readable diffs.
func methods(msgs []*store.Message) []string {
	var out []string
	for _, m := range msgs {
		s := jsonrpc.Classify(m.Frame)
		what := s.Method
		if what == "" {
			what = "id=" + s.ID
		}
		out = append(out, fmt.Sprintf("%s %s %s", m.Dir, s.Kind, what))
	}
	return out
}

// checkAcceptedPosts checks that each client notification and response
// in msgs has the 202 Accepted its POST was answered with (a bodiless
// answer, recorded on the message it answered), with the answer's
// headers, and returns how many there were.
func checkAcceptedPosts(tb testing.TB, msgs []*store.Message) int {
	tb.Helper()
	n := 0
	for _, m := range msgs {
		if k := jsonrpc.Classify(m.Frame).Kind; m.Dir != store.C2S || k != jsonrpc.Notification && k != jsonrpc.Response {
			continue
		}
		n++
		if m.HTTP == nil || m.HTTP.Status != http.StatusAccepted || len(m.HTTP.ResponseHeader) == 0 {
			tb.Errorf("seq %d (%.60s): http %+v, want status 202 and the answer's headers", m.Seq, m.Frame, m.HTTP)
		}
	}
	return n
}

// proxyRun is an HTTPProxy serving on 127.0.0.1 for one test.
type proxyRun struct {
	URL      string // http://127.0.0.1:port
	Cassette string
	Proxy    *recorder.HTTPProxy
	stop     func()
}

// Stop ends the proxy (as SIGINT would) and waits for it; safe to repeat.
func (r *proxyRun) Stop() { r.stop() }

func startHTTPProxy(tb testing.TB, upstream string, configure ...func(*recorder.HTTPProxy)) *proxyRun {
	tb.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		tb.Fatal(err)
	}
	cassette, w := testWriter(tb, "c.db")
	p := &recorder.HTTPProxy{
		Upstream: u, Writer: w, Redact: recorder.NewHTTPRedactor(nil),
		Info: store.SessionInfo{Upstream: upstream, Recorder: "test"},
	}
	for _, c := range configure {
		c(p)
	}
	addr, stop := runProxy(tb, p.Serve, w)
	return &proxyRun{URL: "http://" + addr, Cassette: cassette, Proxy: p, stop: stop}
}

// testWriter opens a new cassette in the test's temp dir, as mcpspy
// record does (handshakes noted), without fsync.
func testWriter(tb testing.TB, name string) (path string, w *store.Writer) {
	tb.Helper()
	path = filepath.Join(tb.TempDir(), name)
	w, err := store.NewWriter(path, store.WriterOptions{Observe: store.ObserveHandshake, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	return path, w
}

// runProxy serves a proxy on 127.0.0.1 until stop is called or the test
// ends, then closes its cassette. stop waits for Serve; it is safe to
// call again.
func runProxy(tb testing.TB, serve func(context.Context, net.Listener) error, w *store.Writer) (addr string, stop func()) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				tb.Errorf("proxy Serve: %v", err)
			}
			if err := w.Close(); err != nil {
				tb.Errorf("close cassette: %v", err)
			}
		})
	}
	tb.Cleanup(stop)
	return ln.Addr().String(), stop
}

// serveHTTP serves h on 127.0.0.1 until the test ends and returns its URL.
func serveHTTP(tb testing.TB, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// goSDKServer is a real go-sdk MCP server (echo, progress and more; see
// package gosdk), named "upstream-go".
func goSDKServer() *mcp.Server { return gosdk.NewServer("upstream-go") }

// bodyLog remembers every POST body a server received, in order, and the
// session ids it issued.
type bodyLog struct {
	mu     sync.Mutex
	bodies [][]byte
	sids   []string
}

func (l *bodyLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			l.mu.Lock()
			l.bodies = append(l.bodies, b)
			l.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(&sidSpy{ResponseWriter: w, l: l}, r)
	})
}

func (l *bodyLog) snapshot() ([][]byte, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.bodies...), append([]string(nil), l.sids...)
}

type sidSpy struct {
	http.ResponseWriter
	l    *bodyLog
	done bool
}

func (s *sidSpy) WriteHeader(code int) {
	if !s.done {
		s.done = true
		if sid := s.Header().Get("Mcp-Session-Id"); sid != "" {
			s.l.mu.Lock()
			s.l.sids = append(s.l.sids, sid)
			s.l.mu.Unlock()
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sidSpy) Write(b []byte) (int, error) {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

func (s *sidSpy) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *sidSpy) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
