// Package fallback is the part of mcpmock that talks to a real MCP server:
// a replay.Source, layered after the cassettes and scripts, that passes the
// requests none of them answered to a real server (a child process over
// stdio, a Streamable HTTP URL, or a 2024-11-05 HTTP+SSE one) and records
// what it exchanged with it as a new session of a cassette, which later
// replays answer from (go-vcr's "replay with new episodes", WireMock's
// proxying).
//
// Package replay never talks to a real server; this package is the one
// place that does. It never answers initialize, server/discover or ping
// while anything is recorded: the session's lifecycle stays the
// recording's, and the real server is introduced to the live client's
// protocol version and capabilities by a handshake of the fallback's own.
// With nothing recorded (a cassette recorded from scratch), the engine
// passes the live client's own handshake to it (replay.LiveHandshaker).
//
// Each client session gets its own server session, started on the first
// request the fallback has to answer and ended when the client session
// ends: a child process is stopped in steps (stdin closed, SIGTERM,
// SIGKILL), an HTTP session gets a DELETE.
package fallback

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/store"
)

// Version is stamped into the sessions the fallback records, and names
// mcpmock in the handshake.
const Version = "0.1"

// Options say which real server to fall back to, and where its sessions
// go.
type Options struct {
	// Command is a stdio server: program and arguments. Or:
	Command []string
	// URL is a Streamable HTTP endpoint, or a 2024-11-05 HTTP+SSE one:
	// known by a path ending in /sse (recorder.IsLegacyURL), or found out
	// as the spec says (the POST of initialize refused with a 4xx, and a
	// GET that opens the legacy event stream). Or a WebSocket server
	// (ws://, wss://; subprotocol "mcp", as mcpspy record proxies). Its
	// user info (https://user:password@host/mcp) is sent as a Basic
	// Authorization header, unless Header has one.
	URL *url.URL
	// Header is added to every HTTP request (credentials); it is not
	// recorded.
	Header http.Header
	// HTTPClient reaches URL. Default: a client without automatic gzip.
	HTTPClient *http.Client
	// Record is the cassette (.db) the new sessions are added to; "" does
	// not record them.
	Record string
	// SessionName and Recorder name the new sessions and what recorded
	// them. Default: "fallback", and mcpmock's fallback with its Version.
	SessionName, Recorder string
	// Redact names what the new sessions store as "[redacted]", as mcpspy
	// record --redact does: message members (inside params, results and
	// errors) with these names, and query parameters of URL, besides the
	// credentials always hidden.
	Redact []string
	// RedactValues also stores as "[redacted]" what they match, as mcpspy
	// record --redact-value does: message members holding such a string
	// (or an array with one), query values and path segments of the
	// recorded paths, and the matching arguments of Command or parts of
	// URL in the sessions' upstream. Nil matches nothing.
	RedactValues *recorder.ValuePatterns
	// StartTimeout bounds the handshake with the real server. Default 30 s
	// (a first npx run downloads its package).
	StartTimeout time.Duration
	// Grace is how long each step of a child's shutdown waits. Default 5 s.
	Grace time.Duration
	// Stderr receives a stdio server's stderr. Default: discarded.
	Stderr io.Writer
	// Log receives warnings. Default: discarded.
	Log io.Writer
}

// Source falls back to a real server. Close it when the replay is over:
// it ends the server sessions still open and flushes the recording.
type Source struct {
	opts   Options
	target string // command line or URL, secrets redacted
	w      *store.Writer

	mu       sync.Mutex
	open     map[*upstream]bool
	answered int
	failed   []string
	recErr   error
	// started: a server session was started; startErr: why the first
	// that could not be, was not.
	started  bool
	startErr error
	closed   bool
	wg       sync.WaitGroup // upstreams not yet ended
	logMu    sync.Mutex
	// held are the methods of notifications held back so far (heldBack),
	// and, as "request METHOD", of requests not asked (notAsked).
	held sync.Map
}

// Stats say what the fallback did.
type Stats struct {
	// Answered counts the requests the real server answered (with a
	// result or a JSON-RPC error): recorded anew.
	Answered int
	// Failed describes the requests it could not pass on or get an answer
	// for (the server did not start, was unreachable, exited), one line
	// each: "tools/call {…}: …".
	Failed []string
	// NeverStarted says why the server command could not be started,
	// when it could not be any time it was tried and never was: nothing
	// could be recorded, and the command line is likely wrong. Nil
	// otherwise, and for a URL, which is not started but reached for
	// each request (Failed says how that went).
	NeverStarted error
}

// New checks opts and, when Record is set, the cassette for writing: a
// foreign or newer file, or a directory a missing one cannot be created
// in, fails here, not mid-run. A missing cassette is created when the
// first session is recorded: one the server was never asked into (or
// never answered) is not left behind, empty.
func New(opts Options) (*Source, error) {
	switch {
	case len(opts.Command) > 0 && opts.URL != nil:
		return nil, errors.New("fallback: give a command or a URL, not both")
	case len(opts.Command) == 0 && opts.URL == nil:
		return nil, errors.New("fallback: no server: give a command or a URL")
	case opts.URL != nil && !slices.Contains([]string{"http", "https", "ws", "wss"}, opts.URL.Scheme):
		return nil, fmt.Errorf("fallback: URL %s: want http://, https://, ws:// or wss://", opts.URL.Redacted())
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	target := opts.httpRedactor().CommandLine(opts.Command)
	if opts.URL != nil {
		target = opts.httpRedactor().URL(opts.URL)
		// The sessions name the URL as given (its password redacted); the
		// server gets its user info as Basic credentials, as mcpspy record
		// sends them: the WebSocket dialer refuses a URL that has some.
		opts.URL, opts.Header = recorder.UpstreamCredentials(opts.URL, opts.Header)
	}
	s := &Source{opts: opts, target: target, open: map[*upstream]bool{}}
	if opts.Record != "" {
		wo := store.WriterOptions{Observe: store.ObserveHandshake, Log: opts.Log, Rewrite: recorder.Rewriter(opts.Redact, opts.RedactValues),
			CreateLate: true}
		w, err := store.NewWriter(opts.Record, wo)
		if err != nil {
			return nil, fmt.Errorf("fallback: cassette for new sessions: %w", err)
		}
		s.w = w
	}
	return s, nil
}

// httpRedactor hides what Redact names and RedactValues match in the
// recorded paths and in the upstream (URL or command line), besides the
// credentials always hidden.
func (o Options) httpRedactor() *recorder.HTTPRedactor {
	r := recorder.NewHTTPRedactor(o.Redact)
	r.Values = o.RedactValues
	return r
}

// Name implements replay.Source.
func (s *Source) Name() string { return "fallback " + s.target }

// Target is the server's command line or URL as the recorded sessions
// name it, secrets hidden: for messages about it.
func (s *Source) Target() string { return s.target }

// Unused implements replay.Source: the fallback records nothing it could
// leave unused.
func (s *Source) Unused() []string { return nil }

// AnswersAnyMethod implements replay.AnyMethod: the real server may
// answer what nothing recorded.
func (s *Source) AnswersAnyMethod() bool { return true }

// Open implements replay.Source.
func (s *Source) Open() replay.SessionSource { return &session{src: s} }

// Stats returns what the fallback did so far.
func (s *Source) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Answered: s.answered, Failed: append([]string(nil), s.failed...)}
	if !s.started && s.startErr != nil {
		st.NeverStarted = fmt.Errorf("%s: %w", s.target, s.startErr)
	}
	return st
}

// Close ends the server sessions still open, waits for them, and commits
// the recording. It returns the first error recording met: new sessions
// that were answered but not kept must not pass unnoticed.
func (s *Source) Close() error {
	s.mu.Lock()
	s.closed = true
	var ups []*upstream
	for u := range s.open {
		ups = append(ups, u)
	}
	s.mu.Unlock()
	for _, u := range ups {
		u.close()
	}
	s.wg.Wait()
	if s.w != nil {
		if err := s.w.Close(); err != nil {
			s.noteRecErr(err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recErr != nil {
		return fmt.Errorf("fallback: recording into %s: %w", s.opts.Record, s.recErr)
	}
	return nil
}

func (s *Source) noteRecErr(err error) {
	s.mu.Lock()
	if s.recErr == nil {
		s.recErr = err
	}
	s.mu.Unlock()
}

func (s *Source) countAnswered() {
	s.mu.Lock()
	s.answered++
	s.mu.Unlock()
}

func (s *Source) addFailed(req *replay.Request, why string) {
	s.mu.Lock()
	s.failed = append(s.failed, describe(req)+": "+why)
	s.mu.Unlock()
}

// heldBack notes a notification the server sent in answer to mcpmock's
// own handshake, which the client is not sent (upstream.initialize);
// stderr says so once per method.
func (s *Source) heldBack(method string) {
	if _, said := s.held.LoadOrStore(method, true); !said {
		s.warnf("%s, which %s sent in answer to mcpmock's own handshake, is not passed on: the client did not cause it", method, s.target)
	}
}

// notAsked notes a server request the live client is not asked, as
// nothing it sent caused it (upstream.unprompted); stderr says so once per
// method.
func (s *Source) notAsked(method string) {
	if _, said := s.held.LoadOrStore("request "+method, true); !said {
		s.warnf("%s, which %s sent while no request of the client's was being answered, is not asked of the client: "+
			"nothing it sent caused it (its session began with mcpmock's own handshake); the server gets an error", method, s.target)
	}
}

// warnf writes one line to Options.Log.
func (s *Source) warnf(format string, a ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.opts.Log, "mcpmock: fallback: "+format+"\n", a...)
}

// describe shows a request in one short line, for reports.
func describe(req *replay.Request) string {
	p := string(req.Params)
	if len(p) > 160 {
		p = p[:160] + "…"
	}
	if p == "" {
		return req.Method
	}
	return req.Method + " " + p
}
