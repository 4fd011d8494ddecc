// Package mocktest runs mcpmock inside a Go test, in the style of
// net/http/httptest: load a cassette (or any replay.Source), start a fake
// server as stdio pipes, as an HTTP URL or in process for the Go SDK's
// transports, and check at the end that everything recorded was used.
//
// Everything it starts is stopped by the test's Cleanup; failures are
// reported through the testing.TB, never by panicking.
package mocktest

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/replay"
)

// Server is a fake MCP server for one test.
type Server struct {
	*replay.Server
	tb  testing.TB
	log *syncBuffer

	wg sync.WaitGroup
}

// Option changes the replay.Options a Server starts with.
type Option func(*replay.Options)

// WithMatch sets the matching mode (see replay.Options.Match).
func WithMatch(mode string) Option { return func(o *replay.Options) { o.Match = mode } }

// WithLog sends mcpmock's warnings to w as well as to the test log.
func WithLog(w io.Writer) Option { return func(o *replay.Options) { o.Log = w } }

// Load reads cassettes (.db or .jsonl), failing the test on error.
func Load(tb testing.TB, paths ...string) []replay.Source {
	tb.Helper()
	var out []replay.Source
	for _, p := range paths {
		c, err := replay.LoadCassette(p)
		if err != nil {
			tb.Fatalf("mocktest: %v", err)
		}
		out = append(out, c)
	}
	return out
}

// New makes a server answering from sources; it is closed when the test
// ends.
func New(tb testing.TB, sources []replay.Source, opts ...Option) *Server {
	tb.Helper()
	s := &Server{tb: tb, log: &syncBuffer{}}
	o := replay.Options{}
	for _, f := range opts {
		f(&o)
	}
	var logTo io.Writer = s.log
	if o.Log != nil {
		logTo = io.MultiWriter(s.log, o.Log)
	}
	o.Log = logTo
	srv, err := replay.NewServer(sources, o)
	if err != nil {
		tb.Fatalf("mocktest: %v", err)
	}
	s.Server = srv
	tb.Cleanup(func() {
		srv.Close()
		s.wg.Wait()
	})
	return s
}

// NewFromCassette is Load and New in one.
func NewFromCassette(tb testing.TB, path string, opts ...Option) *Server {
	tb.Helper()
	return New(tb, Load(tb, path), opts...)
}

// Pipes starts a stdio session: write requests to in, read answers from
// out, one JSON message per line. Closing in ends the session.
func (s *Server) Pipes() (in io.WriteCloser, out io.ReadCloser) {
	cr, cw := io.Pipe() // client → server
	sr, sw := io.Pipe() // server → client
	ctx, cancel := context.WithCancel(context.Background())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.ServeStdio(ctx, cr, sw)
		sw.Close()
	}()
	s.tb.Cleanup(func() {
		cancel()
		cw.Close()
		sr.Close()
	})
	return cw, sr
}

// Transport returns an in-process transport for a Go SDK client:
// client.Connect(ctx, srv.Transport(), nil). Each call starts a new session.
func (s *Server) Transport() mcp.Transport {
	in, out := s.Pipes()
	return &mcp.IOTransport{Reader: out, Writer: in}
}

// URL starts an HTTP server on 127.0.0.1 and returns its Streamable HTTP
// endpoint (".../mcp"); legacy HTTP+SSE is at ".../sse".
func (s *Server) URL() string {
	hs := httptest.NewServer(s.Handler())
	s.tb.Cleanup(func() { s.Server.Close(); hs.Close() })
	return hs.URL + "/mcp"
}

// WebSocketURL starts a WebSocket server on 127.0.0.1 and returns its
// ws:// URL.
func (s *Server) WebSocketURL() string {
	hs := httptest.NewServer(s.WebSocketHandler())
	s.tb.Cleanup(func() { s.Server.Close(); hs.Close() })
	return "ws" + strings.TrimPrefix(hs.URL, "http") + "/mcp"
}

// Warnings returns what the server wrote to its log so far.
func (s *Server) Warnings() string { return s.log.String() }

// AssertAllUsed fails the test if a request went unmatched or a recorded
// request was never asked for.
func (s *Server) AssertAllUsed() {
	s.tb.Helper()
	r := s.Report()
	for _, u := range r.Unmatched {
		s.tb.Errorf("mocktest: unmatched %s %s; nearest: %s\n%s", u.Method, u.Params, u.Nearest, u.Diff)
	}
	for _, u := range r.Unused {
		s.tb.Errorf("mocktest: recorded but never used: %s", u)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
