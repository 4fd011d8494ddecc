package replay_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/script"
)

// giveUpScript has a tool for each way an answer can be pending when
// the client goes: a long delay, progress steps with a long pause, a
// question to the client, a hang; and one that takes no time.
const giveUpScript = `
server: {name: s, version: "1"}
tools:
  - {name: slow, answers: [{text: done, delay: 1h}]}
  - {name: steps, answers: [{text: done, progress: [{progress: 1, delay: 1h}]}]}
  - {name: asks, elicit: {message: "Sure?", requestedSchema: {type: object, properties: {confirm: {type: boolean}}}}, answers: [{text: done}]}
  - {name: hang, answers: [{fault: hang}]}
  - {name: quick, answers: [{text: quick, progress: [{progress: 1}]}]}
`

// stdioRun serves lines (each a request) on stdio and then, if eof,
// closes stdin; if not, it cancels the context once the server has
// received every request. It returns what the client read and the
// report, failing if ServeStdio is still running after a minute (every
// pending answer here takes an hour).
func stdioRun(t *testing.T, eof bool, lines ...string) (string, replay.Report) {
	t.Helper()
	src, err := script.Parse("s.yaml", []byte(giveUpScript))
	if err != nil {
		t.Fatal(err)
	}
	return stdioRunOf(t, src, replay.Options{}, eof, lines...)
}

// stdioRunOf is stdioRun with src and opts.
func stdioRunOf(t *testing.T, src replay.Source, opts replay.Options, eof bool, lines ...string) (string, replay.Report) {
	t.Helper()
	received := make(chan struct{}, len(lines))
	opts.Journal = func(replay.Received) { received <- struct{}{} }
	srv, err := replay.NewServer([]replay.Source{src}, opts)
	if err != nil {
		t.Fatal(err)
	}
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	out := make(chan string, 1)
	go func() { b, _ := io.ReadAll(cr); out <- string(b) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, sr, sw); sw.Close() }()
	for _, l := range lines {
		if _, err := io.WriteString(cw, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if eof {
		cw.Close()
	} else {
		for range lines {
			<-received
		}
		cancel()
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("ServeStdio still waiting for an answer a minute after its client went")
	}
	return <-out, srv.Report()
}

const (
	giveUpInit   = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`
	giveUpInited = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func callLine(id int, tool string) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","_meta":{"progressToken":"p"}}}`
}

// TestServeStdio_EOFGivesUpWaitingAnswers: a client that closes stdin
// (the MCP stdio shutdown) while answers wait ends the server at once,
// not after the waits; each call given up is reported interrupted, not
// matched, and gets no answer. A hang, whose answer is never to come,
// counts as matched; an answer that takes no time is still given.
func TestServeStdio_EOFGivesUpWaitingAnswers(t *testing.T) {
	tests := []struct {
		name, tool string
		eof        bool
		want       string // interrupted's why; "" for none
		then       string // a line sent after the call
	}{
		{"delay, stdin closed", "slow", true, "the client closed stdin while it waited", ""},
		{"progress step, stdin closed", "steps", true, "the client closed stdin while it waited", ""},
		{"question to the client, stdin closed", "asks", true, "the client closed stdin while it waited", ""},
		{"delay, stopped", "slow", false, "the session ended while it waited", ""},
		{"question to the client, stopped", "asks", false, "the session ended while it waited", ""},
		{"hang, stdin closed", "hang", true, "", ""},
		{"hang, stopped", "hang", false, "", ""},
		{"no wait, stdin closed", "quick", true, "", ""},
		// Cancelled by the client: its doing, not an interruption.
		{"delay cancelled, stdin closed", "slow", true, "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := []string{giveUpInit, giveUpInited, callLine(1, tt.tool)}
			if tt.then != "" {
				lines = append(lines, tt.then)
			}
			out, r := stdioRun(t, tt.eof, lines...)
			answered := strings.Contains(out, `"id":1,"result"`)
			if tt.want == "" {
				if len(r.Interrupted) != 0 || r.Matched != 2 {
					t.Errorf("report %+v, want 2 matched and nothing interrupted", r)
				}
				if answered != (tt.tool == "quick") {
					t.Errorf("answered %v; client read:\n%s", answered, out)
				}
				return
			}
			want := []replay.Interrupted{{Method: "tools/call", Params: `{"name":"` + tt.tool + `"}`, Why: tt.want}}
			if r.Matched != 1 || len(r.Interrupted) != 1 || r.Interrupted[0] != want[0] {
				t.Errorf("report %+v, want 1 matched and interrupted %+v", r, want)
			}
			if answered {
				t.Errorf("a call given up was answered:\n%s", out)
			}
			if r.Clean() {
				t.Error("Clean() with a call interrupted")
			}
		})
	}
}

// TestServeStdio_EOFGivesUpRecordedTiming: a cassette replayed with
// --timing recorded, whose answer came an hour after its call, is given
// up at the end of stdin too.
func TestServeStdio_EOFGivesUpRecordedTiming(t *testing.T) {
	tape := tapeOf(t,
		`> `+giveUpInit,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"1"}}}`,
		`> `+giveUpInited,
		`> `+callLine(1, "slow"),
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	)
	msgs := tape.Sessions[0].Messages
	msgs[1].Time = msgs[0].Time // initialize answered at once
	msgs[4].Time = msgs[3].Time.Add(time.Hour)
	c, err := replay.NewCassette("slow.db", tape)
	if err != nil {
		t.Fatal(err)
	}
	out, r := stdioRunOf(t, c, replay.Options{Timing: "recorded"}, true, giveUpInit, giveUpInited, callLine(1, "slow"))
	want := replay.Interrupted{Method: "tools/call", Params: `{"name":"slow"}`, Why: "the client closed stdin while it waited"}
	if r.Matched != 1 || len(r.Interrupted) != 1 || r.Interrupted[0] != want {
		t.Errorf("report %+v, want 1 matched and interrupted %+v", r, want)
	}
	if strings.Contains(out, `"id":1,"result"`) {
		t.Errorf("a call given up was answered:\n%s", out)
	}
}

// TestHTTP_CallWaitingWhenClientLeavesOrServerStops: over Streamable
// HTTP a client that drops its POST mid-delay has cancelled the call,
// which ends at once and counts as matched, as a notifications/cancelled
// would; a server that stops (SIGTERM: Close) mid-delay gives the call
// up, reported interrupted.
func TestHTTP_CallWaitingWhenClientLeavesOrServerStops(t *testing.T) {
	tests := []struct {
		name    string
		stop    bool // the server stops; else the client leaves
		matched int
		wantWhy string
	}{
		{"client leaves", false, 1, ""},
		{"server stops", true, 0, "the session ended while it waited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := script.Parse("s.yaml", []byte(giveUpScript))
			if err != nil {
				t.Fatal(err)
			}
			received := make(chan struct{}, 1)
			srv, err := replay.NewServer([]replay.Source{playSignal{src, received}}, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			handled := make(chan struct{})
			h := srv.Handler()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r)
				close(handled)
			}))
			defer hs.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			postCtx, leave := context.WithCancel(ctx)
			defer leave()
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}}}`
			req, _ := http.NewRequestWithContext(postCtx, "POST", hs.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			setStatelessHeaders(req, "tools/call", "slow")
			posted := make(chan error, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				posted <- err
			}()
			select {
			case <-received:
			case <-ctx.Done():
				t.Fatal("the call's answer never began")
			}
			if tt.stop {
				srv.Close()
			} else {
				leave()
			}
			select {
			case <-handled:
			case <-ctx.Done():
				t.Fatal("the POST's handler still waits a minute on")
			}
			<-posted
			srv.Close()
			r := srv.Report()
			var want []replay.Interrupted
			if tt.wantWhy != "" {
				want = []replay.Interrupted{{Method: "tools/call", Params: `{"name":"slow"}`, Why: tt.wantWhy}}
			}
			if r.Matched != tt.matched || !slices.Equal(r.Interrupted, want) {
				t.Errorf("report %+v, want %d matched, interrupted %+v", r, tt.matched, want)
			}
		})
	}
}

// playSignal is a source that says on playing when an answer of its
// starts to play: the call is then in the engine's hands, waiting.
type playSignal struct {
	replay.Source
	playing chan<- struct{}
}

func (p playSignal) Open() replay.SessionSource { return playSignalSession{p.Source.Open(), p.playing} }

type playSignalSession struct {
	replay.SessionSource
	playing chan<- struct{}
}

func (s playSignalSession) Prepare(req *replay.Request) (*replay.Prepared, bool) {
	pr, ok := s.SessionSource.(replay.Preparer).Prepare(req)
	if !ok || pr.Play == nil {
		return pr, ok
	}
	play := pr.Play
	pr.Play = func(ctx context.Context, peer replay.Peer, req *replay.Request) replay.Reply {
		s.playing <- struct{}{}
		return play(ctx, peer, req)
	}
	return pr, true
}

// ctxWaiter is slowTool (example_sleep_test.go) with a Play that waits
// on its context alone, not through replay.Sleep, then answers.
type ctxWaiter struct{ slowTool }

func (ctxWaiter) Open() replay.SessionSource { return ctxWaiter{} }

func (ctxWaiter) Prepare(req *replay.Request) (*replay.Prepared, bool) {
	if req.Method != "tools/call" {
		return &replay.Prepared{Reply: replay.Reply{Result: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)}}, true
	}
	return &replay.Prepared{Play: func(ctx context.Context, _ replay.Peer, _ *replay.Request) replay.Reply {
		<-ctx.Done()
		return replay.Reply{Result: json.RawMessage(`{"content":[]}`)}
	}}, true
}

// TestServeStdio_StopGivesUpAPlayWaitingOnItsContext: a source's Play
// that waits on its context alone, cut short by the session's end
// (SIGTERM), is reported interrupted too, its late answer not written.
func TestServeStdio_StopGivesUpAPlayWaitingOnItsContext(t *testing.T) {
	out, r := stdioRunOf(t, ctxWaiter{}, replay.Options{}, false, giveUpInit, callLine(1, "slow"))
	want := replay.Interrupted{Method: "tools/call", Params: `{"name":"slow"}`, Why: "the session ended while it waited"}
	if r.Matched != 1 || len(r.Interrupted) != 1 || r.Interrupted[0] != want {
		t.Errorf("report %+v, want 1 matched and interrupted %+v", r, want)
	}
	if strings.Contains(out, `"id":1,"result"`) {
		t.Errorf("a call given up was answered:\n%s", out)
	}
}
