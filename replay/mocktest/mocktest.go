// Package mocktest runs mcpmock inside a Go test, in the style of
// net/http/httptest: load a cassette (or any replay.Source), start a fake
// server as stdio pipes, as an HTTP URL or in process for the Go SDK's
// transports, check what the host under test sent (Received, ToolCalls),
// and check at the end that nothing went unmatched (AssertNoUnmatched) or
// that, besides, everything recorded was used (AssertAllUsed).
//
// Everything it starts is stopped by the test's Cleanup; failures are
// reported through the testing.TB, never by panicking. A closed Server,
// like a closed httptest.Server, starts nothing more: Pipes, Transport,
// URL and WebSocketURL fail the test. (A Server made by Start, for an
// example or a program, has no testing.TB: Check returns what
// AssertAllUsed would report, and the Assert methods, misuses there, and
// a use of the closed Server panic saying so.)
package mocktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/internal/testpath"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/script"
	"github.com/mcptape/mcptape/store"
)

// Server is a fake MCP server for one test.
type Server struct {
	*replay.Server
	tb  testing.TB // nil when made by Start
	log *syncbuf.Buffer

	mu       sync.Mutex
	closed   bool // Close began: nothing may start any more
	closers  []func()
	received []replay.Received
	wg       sync.WaitGroup

	// urls holds the servers URL and WebSocketURL started, by kind.
	urlMu sync.Mutex
	urls  map[string]string
}

// Option changes the replay.Options a Server starts with.
type Option func(*replay.Options)

// WithMatch sets the matching mode (see replay.Options.Match). Any mode
// but "default" applies to cassettes: with scripts alone it fails New.
func WithMatch(mode string) Option { return func(o *replay.Options) { o.Match = mode } }

// WithHTTPSessions sets whether initialize over Streamable HTTP gets an
// Mcp-Session-Id: "auto" (as the sources say or show), "on" or "off" (a
// server without sessions). See replay.Options.HTTPSessions.
func WithHTTPSessions(mode string) Option {
	return func(o *replay.Options) { o.HTTPSessions = mode }
}

// WithTiming sets whether answers keep the recorded delays: "none" (the
// default) answers at once; "recorded" waits, before each message sent
// during a call and before its answer, as long as the recorded server did,
// as mcpmock serve --timing does (see replay.Options.Timing). Another
// value fails New (Start returns the error), and so does "recorded" with
// scripts alone, whose answers take the delay they give.
func WithTiming(mode string) Option { return func(o *replay.Options) { o.Timing = mode } }

// WithCallTimeout sets how long the server waits for the client's reply
// to a request it sends (roots/list, sampling, elicitation) before it
// gives up, tells the client so with notifications/cancelled and answers
// the call without it, as mcpmock serve --call-timeout does; the default
// is 10 s (see replay.Options.CallTimeout). A test of a host that never
// answers shortens the wait with it. d must be above 0: WithCallTimeout
// panics otherwise, as time.NewTicker does, rather than fall back to the
// default unseen.
func WithCallTimeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("mocktest: WithCallTimeout(%s): want a time above 0", d))
	}
	return func(o *replay.Options) { o.CallTimeout = d }
}

// WithMatcher lets fn decide whether a recorded request may answer a
// live one that the normal match found no answer for: a tool argument
// holding a fresh timestamp, a query that may differ in case. fn is asked
// only after a miss, in recorded order (see replay.MatchFunc); a panic in
// it leaves the request unmatched, with a warning naming it. Scripts do
// not ask it: with scripts alone it fails New.
func WithMatcher(fn replay.MatchFunc) Option {
	return func(o *replay.Options) { o.MatchFunc = fn }
}

// WithLog sends mcpmock's warnings to w too.
func WithLog(w io.Writer) Option { return func(o *replay.Options) { o.Log = w } }

// Load reads cassettes (.db, .jsonl, or the MCP traffic of a .har) and
// scripts (.yaml, .yml or .json), as mcpmock serve takes them, failing
// the test on error. A file that does not exist is named with where it
// was looked for and, for a cassette, the mcpspy command that makes one.
func Load(tb testing.TB, paths ...string) []replay.Source {
	tb.Helper()
	var out []replay.Source
	for _, p := range paths {
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			src, err := script.Load(p)
			if err != nil {
				tb.Fatalf("mocktest: %v%s", err, whereMissing(p, err))
			}
			out = append(out, src)
		default:
			out = append(out, LoadCassette(tb, p))
		}
	}
	return out
}

// LoadCassette reads one cassette with options (replay.Ignore,
// replay.Sessions), failing the test on error: for New's sources.
func LoadCassette(tb testing.TB, path string, opts ...replay.CassetteOption) *replay.Cassette {
	tb.Helper()
	c, err := replay.LoadCassette(path, opts...)
	if err != nil {
		tb.Fatalf("mocktest: %v%s", err, missingCassette(path, err))
	}
	return c
}

// whereMissing says where a relative path that does not exist was looked
// for (testpath.Where), and nothing for other errors.
func whereMissing(path string, err error) string {
	if isMissing(err) {
		return testpath.Where(path)
	}
	return ""
}

func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, store.ErrNotFound)
}

// missingCassette is whereMissing for a cassette, and says besides how to
// make the one that is missing: a first-time user has none yet. The path
// in the command is absolute, as a relative one would lead elsewhere from
// the directory the command is typed in.
func missingCassette(path string, err error) string {
	if !isMissing(err) {
		return ""
	}
	abs, absErr := filepath.Abs(path)
	if absErr != nil {
		abs = path
	}
	var how string
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		how = "mcpspy export -o " + abs + " CASSETTE.db makes one from a recording"
	case ".har":
		how = "mcpspy export --har -o " + abs + " CASSETTE.db makes one from a recording over HTTP"
	default:
		how = "record one with mcpspy record -o " + abs + " -- SERVER [ARG...], or have package vcr record it"
	}
	return testpath.Where(path) + "; " + how
}

// Start makes a server answering from sources, outside a test (examples,
// TestMain). Close it when done.
func Start(sources []replay.Source, opts ...Option) (*Server, error) {
	s := &Server{log: &syncbuf.Buffer{}}
	o := replay.Options{}
	for _, f := range opts {
		f(&o)
	}
	var logTo io.Writer = s.log
	if o.Log != nil {
		logTo = io.MultiWriter(s.log, o.Log)
	}
	o.Log = logTo
	o.Journal = func(r replay.Received) {
		s.mu.Lock()
		s.received = append(s.received, r)
		s.mu.Unlock()
	}
	srv, err := replay.NewServer(sources, o)
	if err != nil {
		return nil, err
	}
	s.Server = srv
	return s, nil
}

// New is Start for a test: a failure fails the test, and the server is
// closed when the test ends.
func New(tb testing.TB, sources []replay.Source, opts ...Option) *Server {
	tb.Helper()
	s, err := Start(sources, opts...)
	if err != nil {
		tb.Fatalf("mocktest: %v", err)
	}
	s.tb = tb
	tb.Cleanup(s.Close)
	return s
}

// NewFromCassette is Load and New in one, for one cassette (or script:
// Load reads either).
func NewFromCassette(tb testing.TB, path string, opts ...Option) *Server {
	tb.Helper()
	return New(tb, Load(tb, path), opts...)
}

// Close stops everything the server started and waits for it. Pipes,
// Transport, URL and WebSocketURL called afterwards fail the test (panic,
// for a Server made by Start): what they would return could not work.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
	s.Server.Close()
	s.wg.Wait()
}

// onClose has Close run fn; at once if Close already began, so that an
// HTTP server started as Close runs is stopped all the same.
func (s *Server) onClose(fn func()) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		fn()
		return
	}
	s.closers = append(s.closers, fn)
	s.mu.Unlock()
}

// isClosed says whether Close began.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// errClosed is what the pipes of a session asked for after Close give.
var errClosed = errors.New("mocktest: the server is closed")

// usedAfterClose fails the test, or panics for a Server made by Start,
// as httptest refuses a closed server: the session or URL method would
// give could never be answered.
func (s *Server) usedAfterClose(method string) {
	msg := fmt.Sprintf("mocktest: %s called after Close: the server has stopped and would answer nothing", method)
	if s.tb == nil {
		panic(msg)
	}
	s.tb.Helper()
	s.tb.Fatalf("%s", msg)
}

// Pipes starts a stdio session: write requests to in, read answers from
// out, one JSON message per line. Closing in ends the session. Called
// after Close it fails the test.
func (s *Server) Pipes() (in io.WriteCloser, out io.ReadCloser) {
	if s.tb != nil {
		s.tb.Helper()
	}
	return s.pipes("Pipes")
}

// pipes is Pipes for method, the name a use after Close reports.
func (s *Server) pipes(method string) (io.WriteCloser, io.ReadCloser) {
	if s.tb != nil {
		s.tb.Helper()
	}
	cr, cw := io.Pipe() // client → server
	sr, sw := io.Pipe() // server → client
	ctx, cancel := context.WithCancel(context.Background())
	// The check and wg.Add under one lock: Close, which sets closed
	// under it, then waits for every session it let start.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		cr.CloseWithError(errClosed) // writes to cw fail
		sw.CloseWithError(errClosed) // reads from sr fail
		s.usedAfterClose(method)
		return cw, sr // a TB whose Fatalf returns gets pipes that say why
	}
	s.wg.Add(1)
	s.closers = append(s.closers, func() {
		cancel()
		cw.Close()
		sr.Close()
	})
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		_ = s.ServeStdio(ctx, cr, sw)
		sw.Close()
	}()
	return cw, sr
}

// Transport returns an in-process transport for a Go SDK client:
// client.Connect(ctx, srv.Transport(), nil). Each call starts a new session.
// Called after Close it fails the test.
func (s *Server) Transport() mcp.Transport {
	if s.tb != nil {
		s.tb.Helper()
	}
	in, out := s.pipes("Transport")
	return &mcp.IOTransport{Reader: out, Writer: in}
}

// URL returns the Streamable HTTP endpoint (".../mcp") of an HTTP server
// on 127.0.0.1, started at the first call and stopped with the Server;
// every call returns the same URL, as httptest.Server's does. Legacy
// HTTP+SSE is at ".../sse". Called after Close it fails the test.
func (s *Server) URL() string {
	if s.tb != nil {
		s.tb.Helper()
	}
	return s.listen("URL", "http", func() string {
		hs := httptest.NewUnstartedServer(s.Handler())
		hs.Config.ConnState = s.ConnState // a closed connection ends its sessionless replay session
		hs.Start()
		s.onClose(func() { s.Server.Close(); hs.Close() })
		return hs.URL + "/mcp"
	})
}

// WebSocketURL returns the ws:// URL of a WebSocket server on 127.0.0.1,
// started at the first call and stopped with the Server; every call
// returns the same URL. Called after Close it fails the test.
func (s *Server) WebSocketURL() string {
	if s.tb != nil {
		s.tb.Helper()
	}
	return s.listen("WebSocketURL", "ws", func() string {
		hs := httptest.NewServer(s.WebSocketHandler())
		s.onClose(func() { s.Server.Close(); hs.Close() })
		return "ws" + strings.TrimPrefix(hs.URL, "http") + "/mcp"
	})
}

// listen starts a server of kind once and returns its URL; method
// names the caller, for a use after Close.
func (s *Server) listen(method, kind string, start func() string) string {
	if s.tb != nil {
		s.tb.Helper()
	}
	// A URL from before Close leads to a stopped server, and one started
	// now would be stopped at once (onClose).
	if s.isClosed() {
		s.usedAfterClose(method)
		return ""
	}
	s.urlMu.Lock()
	defer s.urlMu.Unlock()
	if u, ok := s.urls[kind]; ok {
		return u
	}
	if s.urls == nil {
		s.urls = map[string]string{}
	}
	s.urls[kind] = start()
	return s.urls[kind]
}

// Received returns every request and notification clients have sent so
// far, in the order they arrived: what a test checks its host did.
func (s *Server) Received() []replay.Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.received)
}

// Reset forgets what clients did so far, for a server shared by several
// tests (started in TestMain): Received and ToolCalls start empty, and
// the report (Check, AssertAllUsed, AssertNoUnmatched) starts afresh,
// every recorded request unused again, as replay.Server.ResetReport says.
// Answers do not change. Call it between tests, while no client talks.
func (s *Server) Reset() {
	s.mu.Lock()
	s.received = nil
	s.mu.Unlock()
	s.ResetReport()
}

// ToolCalls returns the arguments of every tools/call of the named tool
// clients have sent so far, in the order they arrived (nil arguments for
// a call that had none).
func (s *Server) ToolCalls(name string) []json.RawMessage {
	return replay.ToolCalls(s.Received(), name)
}

// Warnings returns what the server wrote to its log so far.
func (s *Server) Warnings() string { return s.log.String() }

// Check returns an error listing unmatched requests, recorded requests
// never asked for and calls given up unanswered when the server was
// closed or the client hung up (Report.Interrupted: the test never saw
// their answers), or nil: what --strict demands.
func (s *Server) Check() error {
	r := s.Report()
	errs := unmatchedErrors(r)
	for _, u := range r.Unused {
		errs = append(errs, fmt.Errorf("recorded but never used: %s", u))
	}
	for _, in := range r.Interrupted {
		what := in.Method
		if in.Params != "" {
			what += " " + in.Params
		}
		errs = append(errs, fmt.Errorf("interrupted before its answer: %s: %s", what, in.Why))
	}
	return errors.Join(errs...)
}

// unmatchedErrors says, for each request nothing answered, what it was
// and the nearest recorded request with how the two differ, that no
// source knows its method at all, or why the source that took it had no
// answer (a script none of whose answers to a tool matches).
func unmatchedErrors(r replay.Report) []error {
	var errs []error
	for _, u := range r.Unmatched {
		what := u.Method
		if u.Params != "" {
			what += " " + u.Params
		}
		switch {
		case u.Why != "":
			errs = append(errs, fmt.Errorf("unmatched %s: %s", what, u.Why))
		case u.Nearest == "":
			errs = append(errs, fmt.Errorf("unmatched %s: nothing recorded or scripted answers %s", what, u.Method))
		case u.Diff == "":
			errs = append(errs, fmt.Errorf("unmatched %s; nearest: %s", what, u.Nearest))
		default:
			errs = append(errs, fmt.Errorf("unmatched %s; nearest: %s\n%s", what, u.Nearest, u.Diff))
		}
	}
	return errs
}

// AssertAllUsed fails the test if a request went unmatched, a recorded
// request was never asked for, or a call was given up unanswered (see
// Check). It needs a Server made by New.
func (s *Server) AssertAllUsed() {
	if s.tb == nil {
		panic("mocktest: AssertAllUsed needs a Server made by New; use Check")
	}
	s.tb.Helper()
	if err := s.Check(); err != nil {
		s.tb.Errorf("mocktest: %v", err)
	}
}

// AssertNoUnmatched fails the test if a request went unmatched, naming
// it and the nearest recorded request. Unlike AssertAllUsed it lets
// recorded requests go unasked: for a test that drives only part of a
// cassette it shares with other tests. A host may swallow the JSON-RPC
// error an unmatched request gets, and pass a test that checks only its
// own output. It needs a Server made by New.
func (s *Server) AssertNoUnmatched() {
	if s.tb == nil {
		panic("mocktest: AssertNoUnmatched needs a Server made by New; use Report")
	}
	s.tb.Helper()
	if err := errors.Join(unmatchedErrors(s.Report())...); err != nil {
		s.tb.Errorf("mocktest: %v", err)
	}
}
