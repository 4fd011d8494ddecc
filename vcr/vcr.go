// Package vcr gives Go tests of MCP hosts go-vcr's record-once mode. The
// first run starts the real server (a stdio command), records what passes
// between it and the host into a cassette through mcpspy's stdio recorder,
// in process; every later run replays the cassette with mcpmock and never
// starts the server. Commit the cassette beside the test: CI then needs
// neither the server nor its credentials.
//
//	srv := vcr.New(t, "testdata/weather.db", []string{"npx", "weather-server"})
//	cs, err := client.Connect(ctx, srv.Transport(), nil)
//
// A host that takes a Streamable HTTP URL connects to srv.URL() instead,
// in every mode: while recording, mcpmock serves it on 127.0.0.1 and runs
// the command for each client session behind it (as mcpmock serve --http
// CASSETTE -- COMMAND does), so that the cassette holds what Transport
// would have recorded. A host that speaks MCP over WebSocket connects to
// srv.WebSocketURL() the same way.
//
// NewHTTP does the same for a server reached over Streamable HTTP (or
// legacy HTTP+SSE), a remote one perhaps: the recording goes through
// mcpspy's HTTP proxy, credentials redacted, so the cassette can be
// committed. NewHTTPFunc takes a func that starts the server and returns
// its URL, called only in a run that reaches the server: a test server on
// a port of its own is started to record, and never in a run that only
// replays.
//
//	srv := vcr.NewHTTPFunc(t, "testdata/search.db", func(tb testing.TB) string {
//		ts := httptest.NewServer(searchHandler)
//		tb.Cleanup(ts.Close)
//		return ts.URL + "/mcp"
//	})
//
// ReplayWithNew (MCPTAPE_VCR=new) is go-vcr's "replay with new
// episodes": the cassette replays, and a request it cannot answer goes to
// the real server (package fallback), the exchange being added to the
// cassette as a new session, so that the next run replays it too. A test
// that grows by one call needs no full recording again.
//
// It must never start or reach the server while the cassette exists
// (unless told to record again, or to record new episodes, and then only
// for what the cassette cannot answer), and never leave a half-made
// cassette: a recording, or a copy of the cassette that new episodes are
// added to, is a temporary file put in place only when the test passes.
// An unchanged cassette is never rewritten.
package vcr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/plural"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/internal/testpath"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// recorderName is stamped into the sessions it records.
const recorderName = "mcptape/vcr"

// shutdownGrace is how long each step of a recorded server's shutdown
// (stdin closed, SIGTERM, SIGKILL) waits: short, as tests wait for it.
const shutdownGrace = 2 * time.Second

// Mode says whether a Server records or replays.
type Mode int

// Modes, as go-vcr names them.
const (
	// RecordOnce replays the cassette when it exists and records it when
	// it does not. The default.
	RecordOnce Mode = iota
	// ReplayOnly replays; a missing cassette fails the test. For CI, where
	// the real server must not run.
	ReplayOnly
	// Record records again, replacing the cassette when the test passes.
	Record
	// ReplayWithNew replays the cassette when it exists and passes the
	// requests it cannot answer to the real server (started only if one
	// comes), adding what that server answered to the cassette as a new
	// session when the test passes. NewRequests says how many there were.
	// Without a cassette it records one, as RecordOnce does. Over HTTP
	// the real server must speak Streamable HTTP (not legacy HTTP+SSE),
	// and the host's own headers reach only the replay: give the real
	// server its credentials with WithHeader. Two tests adding to one
	// cassette at the same time keep only the last one's additions.
	ReplayWithNew
)

// EnvMode is the environment variable that overrides the mode of every
// Server in a test run: "once", "replay", "record" or "new"
// (MCPTAPE_VCR=record go test ./... records everything again;
// MCPTAPE_VCR=new adds to each cassette what it lacks).
const EnvMode = "MCPTAPE_VCR"

func (m Mode) String() string {
	switch m {
	case ReplayOnly:
		return "replay"
	case Record:
		return "record"
	case ReplayWithNew:
		return "new"
	}
	return "once"
}

func parseMode(s string) (Mode, error) {
	for _, m := range []Mode{RecordOnce, ReplayOnly, Record, ReplayWithNew} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("%s=%q: want once, replay, record or new", EnvMode, s)
}

type config struct {
	mode        Mode
	mockOpts    []mocktest.Option
	ignore      []string
	redact      []string
	redactValue []string
	header      http.Header
}

// Option changes how New works.
type Option func(*config)

// WithMode sets the mode; the environment variable MCPTAPE_VCR, when set,
// wins, so that one command can record a whole suite again.
func WithMode(m Mode) Option { return func(c *config) { c.mode = m } }

// WithRedact names what to store as "[redacted]" when recording, as
// mcpspy record --redact does: message members (inside params, results and
// errors) with these names, and over HTTP headers and query parameters,
// besides the credentials always hidden. It applies as well to the new
// episodes ReplayWithNew records. Replay matches a redacted value with any
// value, so the test still passes with its own secret.
func WithRedact(names ...string) Option {
	return func(c *config) { c.redact = append(c.redact, names...) }
}

// WithRedactValue gives Go regular expressions for secrets found by what
// they look like rather than by name (sk-[A-Za-z0-9]{20,}), as mcpspy
// record --redact-value does: wherever WithRedact applies, a message
// member whose string value a pattern matches (or that holds an array
// with such a string) is stored as "[redacted]", and so are the matching
// header values, query values and path segments over HTTP, and arguments
// of the server command. Replay matches a redacted value with any value.
// An empty pattern, or one that does not compile, fails the test, in
// every mode.
func WithRedactValue(patterns ...string) Option {
	return func(c *config) { c.redactValue = append(c.redactValue, patterns...) }
}

// WithHeader sets a header on every request to a real server reached over
// HTTP (NewHTTP): a credential, in place of the host's. It is never
// recorded. While recording it replaces the host's value of that header;
// in ReplayWithNew the host talks to the replay, whose fallback to the
// real server sends only these headers.
func WithHeader(key, value string) Option {
	return func(c *config) {
		if c.header == nil {
			c.header = http.Header{}
		}
		c.header.Add(key, value)
	}
}

// WithIgnore leaves request members with these names out of matching when
// replaying (replay.Ignore): values the host makes up afresh each run,
// such as timestamps or request ids.
func WithIgnore(names ...string) Option {
	return func(c *config) { c.ignore = append(c.ignore, names...) }
}

// WithMatcher lets fn decide, when replaying, whether a recorded request
// may answer a live one that the normal match found no answer for
// (mocktest.WithMatcher, replay.MatchFunc): a tool argument holding a
// fresh timestamp, a number within a tolerance. In ReplayWithNew, a
// request fn lets the cassette answer does not reach the real server.
func WithMatcher(fn replay.MatchFunc) Option {
	return WithReplay(mocktest.WithMatcher(fn))
}

// WithReplay passes options to the replaying mocktest.Server (a match
// mode, a log).
func WithReplay(opts ...mocktest.Option) Option {
	return func(c *config) { c.mockOpts = append(c.mockOpts, opts...) }
}

// Server is, for one test, either the real server being recorded or its
// cassette being replayed (in ReplayWithNew, with the real server behind
// it). Each Transport or Pipes call is one session:
// while recording, one run of the server command.
type Server struct {
	tb       testing.TB
	path     string
	cfg      config
	command  []string                // stdio
	upstream *url.URL                // HTTP
	overHTTP bool                    // made by NewHTTP or NewHTTPFunc
	values   *recorder.ValuePatterns // WithRedactValue's patterns, compiled

	mock *mocktest.Server // replaying
	fb   *fallback.Source // ReplayWithNew: the real server behind the replay

	// recording
	writer    *store.Writer
	tmp       string // the recording, or in ReplayWithNew the cassette's copy
	mu        sync.Mutex
	runs      []serverRun
	wg        sync.WaitGroup
	stderr    syncbuf.Buffer // the server's stderr, shown if the test fails
	proxy     string         // HTTP: the recording proxy's endpoint
	stopProxy func()         // HTTP: stops it and waits
	// received is what the host sent while recording, as the store saw
	// it (Received); sessions numbers the cassette's sessions from 1.
	received []replay.Received
	sessions map[string]int
	// answers counts what the server said (messages, refusals, HTTP
	// statuses): a recording without any would replay a server that
	// never answers.
	answers int
	ends    []store.EndInfo // how each run of the server command ended

	// A stdio server recorded over HTTP or WebSocket (URL,
	// WebSocketURL): mcpmock in front of a fallback that runs the command
	// for each client session, recording into the same file. Started at
	// the first URL or WebSocketURL call.
	frontMu sync.Mutex
	front   *mocktest.Server
	frontFB *fallback.Source
}

// serverRun is one session's run of the server command.
type serverRun struct {
	hangUp func()             // the client's side of the pipes closes
	cancel context.CancelFunc // the recorder stops at once
}

// New returns a Server for the cassette at path (a .db): it replays the
// cassette or, depending on the mode, records command (the real server's
// program and arguments) into it, or in ReplayWithNew has command answer
// what the cassette lacks. A JSONL export (.jsonl) or a .har that exists
// is replayed; another name than .db fails a run that would write it.
// Failures fail the test; everything it starts is stopped, and a
// recording saved, when the test ends.
func New(tb testing.TB, path string, command []string, opts ...Option) *Server {
	tb.Helper()
	s, cfg, replaying := newServer(tb, path, opts)
	s.command = command
	switch {
	case replaying && cfg.mode == ReplayWithNew && len(command) == 0:
		tb.Fatalf("vcr: mode %s passes what cassette %s lacks to the real server, but there is no server command", cfg.mode, path)
	case replaying:
		s.startReplay(cfg)
	case len(command) == 0:
		tb.Fatalf("vcr: cassette %s does not exist%s and there is no server command to record it from; give New the command, or record it with mcpspy record -o %s -- SERVER [ARG...]", path, testpath.Where(path), absPath(path))
	default:
		s.startRecording(cfg)
	}
	return s
}

// absPath is path made absolute, for a command typed in another
// directory than the test's; path itself if there is no working directory.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// NewHTTP is New for a server at upstream, an http(s) URL (Streamable
// HTTP; legacy HTTP+SSE under the same base). Connect the host to URL, or
// a Go SDK client to Transport.
func NewHTTP(tb testing.TB, path, upstream string, opts ...Option) *Server {
	tb.Helper()
	return newHTTP(tb, path, func(testing.TB) string { return upstream }, "NewHTTP", opts)
}

// NewHTTPFunc is NewHTTP for a server whose URL is known only once it
// runs, on a port of its own: upstream starts it (stopping it with
// tb.Cleanup) and returns its URL. It is called once, with tb, and only
// when the server is to be reached: while recording, and in
// ReplayWithNew; a run that only replays (CI) never starts the server.
func NewHTTPFunc(tb testing.TB, path string, upstream func(tb testing.TB) string, opts ...Option) *Server {
	tb.Helper()
	if upstream == nil {
		tb.Fatalf("vcr: NewHTTPFunc: the upstream func is nil")
	}
	return newHTTP(tb, path, upstream, "NewHTTPFunc", opts)
}

// newHTTP makes NewHTTP's and NewHTTPFunc's Server, asking for the
// upstream URL only when it will be reached.
func newHTTP(tb testing.TB, path string, upstream func(testing.TB) string, caller string, opts []Option) *Server {
	tb.Helper()
	s, cfg, replaying := newServer(tb, path, opts)
	s.overHTTP = true
	if !replaying || cfg.mode == ReplayWithNew { // the upstream will be reached
		// Asked before anything of the Server's registers a cleanup: a
		// server upstream starts stops after the recording is saved.
		raw := upstream(tb)
		up, err := url.Parse(raw)
		if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
			tb.Fatalf("vcr: %s: upstream %q: want an http:// or https:// URL", caller, raw)
		}
		s.upstream = up
	}
	if replaying {
		s.startReplay(cfg)
		return s
	}
	s.startRecording(cfg)
	s.startProxy(cfg)
	return s
}

// newServer reads the options and the environment, and says whether the
// cassette is to be replayed.
func newServer(tb testing.TB, path string, opts []Option) (*Server, config, bool) {
	tb.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	// Checked in every mode, so that a bad pattern fails in replay too,
	// not first in the run that records.
	values, err := recorder.NewValuePatterns(cfg.redactValue)
	if err != nil {
		tb.Fatalf("vcr: %v", recorder.OptionError("WithRedactValue", err))
	}
	if slices.Contains(cfg.redact, "") {
		tb.Fatalf("vcr: WithRedact \"\": an empty name hides nothing")
	}
	if env := os.Getenv(EnvMode); env != "" {
		m, err := parseMode(env)
		if err != nil {
			tb.Fatalf("vcr: %v", err)
		}
		cfg.mode = m
	}
	s := &Server{tb: tb, path: path, cfg: cfg, values: values}
	_, statErr := os.Stat(path)
	exists := statErr == nil
	switch {
	case statErr != nil && !errors.Is(statErr, os.ErrNotExist):
		tb.Fatalf("vcr: cassette %s: %v", path, statErr)
	case cfg.mode == ReplayOnly && !exists:
		tb.Fatalf("vcr: cassette %s does not exist%s, and this run only replays; record it with %s=once", path, testpath.Where(path), EnvMode)
	}
	replaying := exists && cfg.mode != Record
	// What vcr writes is a .db, whatever the name: under another name it
	// would be saved, then fail to load on the next run. An export (.jsonl,
	// .har) that exists is replayed, as mcpmock replays it.
	if !strings.EqualFold(filepath.Ext(path), ".db") && (!replaying || cfg.mode == ReplayWithNew) {
		what := "this run would record it"
		if replaying {
			what = "mode " + cfg.mode.String() + " would add to it"
		}
		tb.Fatalf("vcr: cassette %s: %s, and a recording is a .db: name it .db (an existing .jsonl or .har export only replays; mcpspy import makes a .db of one)", path, what)
	}
	return s, cfg, replaying
}

// startReplay replays the cassette; in ReplayWithNew with the real server
// behind it.
func (s *Server) startReplay(cfg config) {
	tb := s.tb
	tb.Helper()
	sources := []replay.Source{mocktest.LoadCassette(tb, s.path, replay.Ignore(cfg.ignore...))}
	if cfg.mode == ReplayWithNew {
		sources = append(sources, s.startFallback(cfg))
	}
	s.mock = mocktest.New(tb, sources, cfg.mockOpts...)
}

// startFallback makes the source that passes what the cassette cannot
// answer to the real server. It records into a copy of the cassette, as
// the fallback writes into a .db as it goes: the copy replaces the
// cassette only if the test passes and the real server answered something.
func (s *Server) startFallback(cfg config) *fallback.Source {
	tb := s.tb
	tb.Helper()
	tmp, err := copyBeside(s.path)
	if err != nil {
		tb.Fatalf("vcr: %v", err)
	}
	o := fallback.Options{Record: tmp, Redact: cfg.redact, RedactValues: s.values, Grace: shutdownGrace, Stderr: &s.stderr, Log: &s.stderr}
	if s.upstream != nil {
		o.URL, o.Header = s.upstream, cfg.header
	} else {
		o.Command = s.command
	}
	fb, err := fallback.New(o)
	if err != nil {
		os.Remove(tmp)
		tb.Fatalf("vcr: %v", err)
	}
	s.fb, s.tmp = fb, tmp
	// Registered before mocktest.New registers the replay's Close, so it
	// runs after it: every client session, and with it every server
	// session, has ended.
	tb.Cleanup(s.finishNew)
	return fb
}

// copyBeside copies the cassette at path to a temporary file in its
// directory (so that a rename can put it in place), with its mode.
func copyBeside(path string) (_ string, err error) {
	src, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("copy cassette: %w", err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return "", fmt.Errorf("copy cassette: %w", err)
	}
	dst, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".recording-*")
	if err != nil {
		return "", fmt.Errorf("copy cassette: %w", err)
	}
	defer func() {
		if err != nil {
			dst.Close()
			os.Remove(dst.Name())
			err = fmt.Errorf("copy cassette %s to %s: %w", path, dst.Name(), err)
		}
	}()
	if err = dst.Chmod(fi.Mode().Perm()); err != nil {
		return "", err
	}
	if _, err = io.Copy(dst, src); err != nil {
		return "", err
	}
	if err = dst.Sync(); err != nil {
		return "", err
	}
	if err = dst.Close(); err != nil {
		return "", err
	}
	return dst.Name(), nil
}

// Recording reports whether the real server is being recorded (and not
// the cassette replayed). In ReplayWithNew with a cassette it is false:
// see NewRequests.
func (s *Server) Recording() bool { return s.mock == nil }

// NewRequests is how many requests the cassette could not answer and the
// real server did (with a result or a JSON-RPC error), in ReplayWithNew:
// the new episodes, added to the cassette if the test passes. It is 0 in
// the other modes; while recording, every request goes to the server.
func (s *Server) NewRequests() int {
	if s.fb == nil {
		return 0
	}
	return s.fb.Stats().Answered
}

// Mock is the replaying server, for its Report or Warnings; nil while
// recording. AssertNoUnmatched, AssertAllUsed and Check are on Server
// itself, and need no check that it replays.
func (s *Server) Mock() *mocktest.Server { return s.mock }

// Check returns, while replaying, an error listing the requests nothing
// in the cassette answered and the recorded requests never asked for, as
// mocktest.Server.Check does, or nil. While recording it returns nil:
// every request went to the real server, so none is unmatched, and
// everything recorded was asked for.
func (s *Server) Check() error {
	if s.mock == nil {
		return nil
	}
	return s.mock.Check()
}

// AssertAllUsed fails the test, while replaying, if a request went
// unmatched or a recorded request was never asked for
// (mocktest.Server.AssertAllUsed). While recording it does nothing, as
// there is nothing to hold the requests to: each went to the real server.
func (s *Server) AssertAllUsed() {
	s.tb.Helper()
	if s.mock != nil {
		s.mock.AssertAllUsed()
	}
}

// AssertNoUnmatched fails the test, while replaying, if a request went
// unmatched, naming it and the nearest recorded request
// (mocktest.Server.AssertNoUnmatched): a host may swallow the JSON-RPC
// error such a request gets and pass a test that checks only its output.
// Recorded requests may go unasked. While recording it does nothing: every
// request went to the real server, so none is unmatched.
func (s *Server) AssertNoUnmatched() {
	s.tb.Helper()
	if s.mock != nil {
		s.mock.AssertNoUnmatched()
	}
}

// Received returns every request and notification the host has sent so
// far, in order, as the host sent them, replaying or recording alike
// (mocktest.Server.Received): values WithRedact and WithRedactValue blank
// in the cassette read as they were, so a test's checks hold in every mode.
func (s *Server) Received() []replay.Received {
	if s.mock != nil {
		return s.mock.Received()
	}
	if err := s.writer.Flush(); err != nil { // Observe sees what is committed
		s.tb.Errorf("vcr: %v", err)
	}
	s.mu.Lock()
	own := slices.Clone(s.received)
	s.mu.Unlock()
	if front, _ := s.recordedFront(); front != nil {
		return mergeReceived(own, front.Received())
	}
	return own
}

// mergeReceived puts what the host sent over pipes and over HTTP while
// recording in one list, in the order it arrived, the sessions numbered
// anew from 1 in the order they first sent something.
func mergeReceived(pipes, overHTTP []replay.Received) []replay.Received {
	if len(pipes) == 0 {
		return overHTTP
	}
	type key struct {
		overHTTP bool
		n        int
	}
	numbers := map[key]int{}
	out := make([]replay.Received, 0, len(pipes)+len(overHTTP))
	take := func(r replay.Received, overHTTP bool) {
		k := key{overHTTP, r.Session}
		if numbers[k] == 0 {
			numbers[k] = len(numbers) + 1
		}
		r.Session = numbers[k]
		out = append(out, r)
	}
	for len(pipes) > 0 || len(overHTTP) > 0 {
		if len(overHTTP) == 0 || len(pipes) > 0 && !overHTTP[0].Time.Before(pipes[0].Time) {
			take(pipes[0], false)
			pipes = pipes[1:]
		} else {
			take(overHTTP[0], true)
			overHTTP = overHTTP[1:]
		}
	}
	return out
}

// ToolCalls returns the arguments of each call the host made to the tool
// name, in order, replaying or recording alike.
func (s *Server) ToolCalls(name string) []json.RawMessage {
	return replay.ToolCalls(s.Received(), name)
}

// noteReceived keeps a client request or notification for Received. It
// runs on the store's commit goroutine.
func (s *Server) noteReceived(m *store.Message, sum *store.Summary) {
	if m.Dir != store.C2S || (sum.Kind != jsonrpc.Request && sum.Kind != jsonrpc.Notification) {
		return
	}
	var f struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(m.Frame, &f)
	r := replay.Received{Time: m.Time, Method: sum.Method, Params: f.Params}
	if sum.ID != "" {
		r.ID = json.RawMessage(sum.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions == nil {
		s.sessions = map[string]int{}
	}
	if s.sessions[m.Session] == 0 {
		s.sessions[m.Session] = len(s.sessions) + 1
	}
	r.Session = s.sessions[m.Session]
	s.received = append(s.received, r)
}

// Transport returns a transport for a Go SDK client:
// client.Connect(ctx, srv.Transport(), nil). For a Server made by NewHTTP
// or NewHTTPFunc it is Streamable HTTP to URL; otherwise in process, over
// stdio pipes.
func (s *Server) Transport() mcp.Transport {
	if s.overHTTP {
		return &mcp.StreamableClientTransport{Endpoint: s.URL()}
	}
	in, out := s.Pipes()
	return &mcp.IOTransport{Reader: out, Writer: in}
}

// Pipes starts a stdio session: write requests to in, read answers from
// out, one JSON message per line. Closing in ends the session (while
// recording, the server is then shut down in steps). A server recorded
// over HTTP has no pipes: use URL.
func (s *Server) Pipes() (in io.WriteCloser, out io.ReadCloser) {
	s.tb.Helper()
	switch {
	case s.mock != nil:
		return s.mock.Pipes()
	case s.upstream != nil:
		s.tb.Fatalf("vcr: %s is being recorded over HTTP; connect to URL(), not Pipes()", s.upstream.Redacted())
	}
	return s.recordSession()
}

// URL is the Streamable HTTP endpoint to connect the host to: the
// recording proxy's (mirroring the upstream's path), or the replay's
// (".../mcp"; legacy HTTP+SSE at ".../sse"). A stdio server being
// recorded is served over HTTP too, as mcpmock serve --http CASSETTE --
// COMMAND serves it: mcpmock's endpoint (".../mcp"), in front of a run of
// the command for each client session, recorded as Transport records it.
// Each server listens on 127.0.0.1, is started at the first call (every
// call returns the same URL) and is stopped when the test ends.
func (s *Server) URL() string {
	s.tb.Helper()
	switch {
	case s.mock != nil:
		// Not kept here: mocktest starts one HTTP server for every call,
		// and fails a call after the replay closed.
		return s.mock.URL()
	case s.upstream == nil:
		return s.recordingFront().URL()
	}
	return s.proxy
}

// WebSocketURL is the ws:// endpoint ("ws://127.0.0.1:PORT/mcp") for a
// host that speaks MCP over WebSocket (the TypeScript SDK's
// WebSocketClientTransport, subprotocol "mcp"): the replay's, or, while a
// stdio server is recorded, mcpmock's in front of a run of the command
// for each client session, as URL serves it over HTTP. A server recorded
// over HTTP (NewHTTP, NewHTTPFunc) has none while recording, as the
// recording proxy speaks HTTP alone: the test fails then. Started at the
// first call (every call returns the same URL), stopped when the test
// ends.
func (s *Server) WebSocketURL() string {
	s.tb.Helper()
	switch {
	case s.mock != nil:
		return s.mock.WebSocketURL()
	case s.upstream != nil:
		s.tb.Fatalf("vcr: %s is being recorded over HTTP; connect to URL(), not WebSocketURL()", s.upstream.Redacted())
		return ""
	}
	return s.recordingFront().WebSocketURL()
}

// recordingFront serves the recording of a stdio server over HTTP and
// WebSocket: mcpmock with nothing recorded to answer from, so that the
// fallback passes each client session, its handshake included, to a run
// of the command of its own, recording it into the file Pipes records
// into.
func (s *Server) recordingFront() *mocktest.Server {
	s.tb.Helper()
	s.frontMu.Lock()
	defer s.frontMu.Unlock()
	if s.front == nil {
		fb, err := fallback.New(fallback.Options{Command: s.command, Record: s.tmp, SessionName: s.tb.Name(), Recorder: recorderName,
			Redact: s.cfg.redact, RedactValues: s.values, Grace: shutdownGrace, Stderr: &s.stderr, Log: &s.stderr})
		if err != nil {
			s.tb.Fatalf("vcr: %v", err)
		}
		s.frontFB = fb
		// Its Close, a cleanup of the test's, runs before finish (a
		// cleanup registered earlier): every client session, and with it
		// every run of the command, has ended when finish closes fb.
		s.front = mocktest.New(s.tb, []replay.Source{fb}, s.cfg.mockOpts...)
	}
	return s.front
}

// recordedFront returns the front and its fallback, nil before URL or
// WebSocketURL.
func (s *Server) recordedFront() (*mocktest.Server, *fallback.Source) {
	s.frontMu.Lock()
	defer s.frontMu.Unlock()
	return s.front, s.frontFB
}

func (s *Server) startRecording(cfg config) {
	tb := s.tb
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		tb.Fatalf("vcr: %v", err)
	}
	f, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".recording-*")
	if err != nil {
		tb.Fatalf("vcr: %v", err)
	}
	f.Close()
	os.Remove(f.Name()) // the store creates the file itself
	s.tmp = f.Name()
	// Received is to read what the host sent, as a replay's does, so it
	// takes each message before redaction blanks it for the cassette.
	redact := recorder.Rewriter(cfg.redact, s.values)
	opts := store.WriterOptions{Observe: store.ObserveHandshake, Rewrite: func(m *store.Message) *store.Message {
		sum := store.Summarize(m)
		s.noteReceived(m, &sum)
		// The server said something: a message, a refusal's body (kept
		// as a server frame), or an HTTP status on the client's message.
		if m.Dir == store.S2C || m.HTTP != nil && m.HTTP.Status != 0 {
			s.mu.Lock()
			s.answers++
			s.mu.Unlock()
		}
		if redact == nil {
			return m
		}
		return redact(m)
	}}
	w, err := store.NewWriter(s.tmp, opts)
	if err != nil {
		tb.Fatalf("vcr: %v", err)
	}
	s.writer = w
	tb.Cleanup(s.finish)
}

// upstreamRedactor hides what WithRedact names and WithRedactValue
// matches, besides the credentials always hidden, in the recorded HTTP
// metadata and in the session's upstream: the URL, or the server's
// command line (--tenant X for WithRedact("tenant")).
func (s *Server) upstreamRedactor(cfg config) *recorder.HTTPRedactor {
	red := recorder.NewHTTPRedactor(cfg.redact)
	red.Values = s.values
	return red
}

// startProxy puts mcpspy's HTTP proxy on 127.0.0.1 in front of the
// upstream, recording into the writer.
func (s *Server) startProxy(cfg config) {
	red := s.upstreamRedactor(cfg)
	p := &recorder.HTTPProxy{
		Upstream:  s.upstream,
		Writer:    s.writer,
		Info:      store.SessionInfo{Name: s.tb.Name(), Upstream: red.URL(s.upstream), Recorder: recorderName},
		Redact:    red,
		Transport: recorder.NewUpstreamTransport(false),
		Log:       &s.stderr,
		Header:    cfg.header, // the host's own headers are what is recorded
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.tb.Fatalf("vcr: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	s.stopProxy = func() {
		cancel()
		if err := <-done; err != nil {
			s.tb.Errorf("vcr: recording proxy: %v", err)
		}
	}
	end := *s.upstream
	end.Scheme, end.Host, end.User = "http", ln.Addr().String(), nil
	s.proxy = end.String()
}

// recordSession runs the server command once behind the stdio recorder.
func (s *Server) recordSession() (io.WriteCloser, io.ReadCloser) {
	s.tb.Helper()
	sess, err := s.writer.NewSession(store.SessionInfo{
		Name:      s.tb.Name(),
		Transport: store.TransportStdio,
		Upstream:  s.upstreamRedactor(s.cfg).CommandLine(s.command),
		Recorder:  recorderName,
	})
	if err != nil {
		s.tb.Fatalf("vcr: %v", err)
	}
	cr, cw := io.Pipe() // client → server
	sr, sw := io.Pipe() // server → client
	ctx, cancel := context.WithCancel(context.Background())
	p := &recorder.StdioProxy{Command: s.command, Stdin: cr, Stdout: sw, Stderr: &s.stderr, Tap: sess, Grace: shutdownGrace}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res, err := p.Run(ctx)
		if err != nil {
			res.End = store.EndInfo{Reason: store.EndError, Error: err.Error()}
			s.tb.Errorf("vcr: %v", err)
		}
		if err := sess.End(res.End); err != nil {
			s.tb.Errorf("vcr: %v", err)
		}
		s.mu.Lock()
		s.ends = append(s.ends, res.End)
		s.mu.Unlock()
		sw.CloseWithError(io.EOF)
	}()
	s.mu.Lock()
	s.runs = append(s.runs, serverRun{hangUp: func() { cw.Close(); sr.Close() }, cancel: cancel})
	s.mu.Unlock()
	return cw, sr
}

// finish stops every server run, then saves the recording if the test
// passed and throws it away if not.
func (s *Server) finish() {
	s.mu.Lock()
	runs := s.runs
	s.runs = nil
	s.mu.Unlock()
	// Hanging up is a clean end: the recorder closes the server's stdin,
	// then signals it, each step waiting at most shutdownGrace.
	for _, r := range runs {
		r.hangUp()
	}
	s.wg.Wait()
	for _, r := range runs {
		r.cancel()
	}
	if s.stopProxy != nil {
		s.stopProxy()
	}
	var frontErr error
	var frontAnswers int
	if _, fb := s.recordedFront(); fb != nil {
		frontErr = fb.Close()
		st := fb.Stats()
		frontAnswers = st.Answered
		for _, f := range st.Failed {
			s.tb.Logf("vcr: the server did not answer %s", f)
		}
	}
	err := errors.Join(frontErr, s.writer.Close())
	s.mu.Lock()
	answers, ends := s.answers+frontAnswers, s.ends
	s.mu.Unlock()
	switch {
	case err != nil:
		s.tb.Errorf("vcr: cassette %s: %v", s.path, err)
		os.Remove(s.tmp)
	case s.tb.Failed():
		os.Remove(s.tmp)
		s.tb.Logf("vcr: the test failed, so %s was not written; the server's stderr (or the proxy's warnings):%s", s.path, s.stderrText())
	case answers == 0:
		// A test may pass by expecting the host to fail; its cassette
		// would have the next run wait for answers that never come.
		os.Remove(s.tmp)
		s.tb.Logf("vcr: the server answered nothing%s, so %s was not written; its stderr (or the proxy's warnings):%s", endsText(ends), s.path, s.stderrText())
	default:
		if err := os.Rename(s.tmp, s.path); err != nil {
			os.Remove(s.tmp)
			s.tb.Errorf("vcr: save cassette: %v", err)
			return
		}
		s.tb.Logf("vcr: recorded %s", s.path)
	}
}

// finishNew ends the fallback's sessions with the real server, then puts
// the cassette's copy in place if the test passed and the server answered
// something, and throws it away if not.
func (s *Server) finishNew() {
	err := s.fb.Close()
	st := s.fb.Stats()
	for _, f := range st.Failed {
		s.tb.Logf("vcr: the real server did not answer %s", f)
	}
	switch {
	case err != nil:
		os.Remove(s.tmp)
		s.tb.Errorf("vcr: cassette %s: the new episodes were not kept: %v", s.path, err)
	case st.Answered == 0:
		os.Remove(s.tmp) // nothing new: the cassette's bytes stay as they were
	case s.tb.Failed():
		os.Remove(s.tmp)
		s.tb.Logf("vcr: the test failed, so the %s the real server answered %s not added to %s; its stderr (or the fallback's warnings):%s",
			plural.Count(st.Answered, "request"), plural.Agree(st.Answered, "was", "were"), s.path, s.stderrText())
	default:
		if err := os.Rename(s.tmp, s.path); err != nil {
			os.Remove(s.tmp)
			s.tb.Errorf("vcr: save cassette: %v", err)
			return
		}
		s.tb.Logf("vcr: added %s the real server answered to %s", plural.Count(st.Answered, "request"), s.path)
	}
}

// stderrText is what the server wrote to stderr (or the proxy's warnings),
// for the end of a log line that names it.
func (s *Server) stderrText() string {
	if t := strings.TrimSpace(s.stderr.String()); t != "" {
		return "\n" + t
	}
	return " (it wrote nothing)"
}

// endsText says how the runs of the server command ended: " (it exited
// with code 3)"; "" over HTTP, or when no run ended.
func endsText(ends []store.EndInfo) string {
	var how []string
	for _, e := range ends {
		switch {
		case e.Signal != "":
			how = append(how, "signal "+e.Signal)
		case e.ExitCode != nil:
			how = append(how, fmt.Sprintf("exit code %d", *e.ExitCode))
		case e.Error != "":
			how = append(how, e.Error)
		}
	}
	if len(how) == 0 {
		return ""
	}
	return " (it ended with " + strings.Join(how, ", ") + ")"
}
