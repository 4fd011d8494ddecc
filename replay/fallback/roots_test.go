package fallback_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/lint"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
	"github.com/mcptape/mcptape/store"
)

// recordingFallback replays gosdkCassette, as a .db, with a fallback to
// the server at rawURL that records into it.
func recordingFallback(t *testing.T, rawURL string) (db string, fb *fallback.Source, mock *mocktest.Server) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	db = cassetteDB(t, "gosdk.db", gosdkCassette)
	fb = newFallback(t, fallback.Options{URL: u, Record: db})
	return db, fb, mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db), fb})
}

// recorded ends the live client's session, mcpmock and the fallback,
// and returns the session the fallback recorded last into db.
func recorded(t *testing.T, cs *mcp.ClientSession, mock *mocktest.Server, fb *fallback.Source, db string) store.TapeSession {
	t.Helper()
	cs.Close()
	mock.Close()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	all := sessions(t, db)
	return all[len(all)-1]
}

// A client's notifications/roots/list_changed reaches the server the
// fallback started (go-sdk's, over Streamable HTTP), so that a server
// that asks for the roots again sees the client's new ones.
func TestFallback_PassesRootsChanged(t *testing.T) {
	seen := make(chan struct{}, 1)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("gosdk") }, nil)
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"notifications/roots/list_changed"`)) {
				select {
				case seen <- struct{}{}:
				default:
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer real.Close()
	_, _, srv := recordingFallback(t, real.URL)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sdk := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	//lint:ignore SA1019 handshake-era servers still ask for roots
	sdk.AddRoots(&mcp.Root{URI: "file:///work/a", Name: "a"})
	cs, err := sdk.Connect(ctx, srv.Transport(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A call the cassette cannot answer starts the server.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 handshake-era servers still ask for roots
	sdk.AddRoots(&mcp.Root{URI: "file:///work/b", Name: "b"})
	select {
	case <-seen:
	case <-time.After(15 * time.Second):
		t.Fatal("the client's notifications/roots/list_changed never reached the server")
	}
}

// holdServer is go-sdk's test server with a tool "hold" that hands the
// test the server session it was called in, so that the test can have
// the server ask the client something once the call is answered.
func holdServer() (srv *mcp.Server, held <-chan *mcp.ServerSession) {
	sessions := make(chan *mcp.ServerSession, 1)
	srv = gosdk.NewServer("gosdk")
	mcp.AddTool(srv, &mcp.Tool{Name: "hold", InputSchema: &jsonschema.Schema{Type: "object"}}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case sessions <- req.Session:
		default: // the test has one already
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held"}}}, nil, nil
	})
	return srv, sessions
}

// rootsClient connects a go-sdk client with one root over tr; each time
// it is asked for its roots, asked gets a value.
func rootsClient(ctx context.Context, t *testing.T, tr mcp.Transport, asked chan<- string) (*mcp.Client, *mcp.ClientSession) {
	t.Helper()
	sdk := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1.0.0"}, nil)
	sdk.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				asked <- method
			}
			return next(ctx, method, req)
		}
	})
	//lint:ignore SA1019 handshake-era servers still ask for roots
	sdk.AddRoots(&mcp.Root{URI: "file:///work/a", Name: "a"})
	cs, err := sdk.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sdk, cs
}

// A server request the fallback's server makes while no request of the
// live client's is being answered (server-everything asks for roots
// 350 ms after initialized) is not the client's to answer when its
// session began with mcpmock's own handshake: the client did not cause
// it, and had its own handshake answered from the recording. The server
// gets an error instead (server-everything then asks again during the
// next call that needs the roots), and stderr says so. After the client
// said its roots changed, the server's asking again is passed on.
// go-sdk's server over Streamable HTTP, asked by the test, stands in for
// server-everything's timer, so that nothing depends on timing.
func TestFallback_UnpromptedServerRequestNotAsked(t *testing.T) {
	changed := make(chan struct{}, 1)
	srv, sessions := holdServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"notifications/roots/list_changed"`)) {
				defer func() { changed <- struct{}{} }() // once the server has it
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer real.Close()
	u, _ := url.Parse(real.URL)
	var log syncbuf.Buffer
	fb := newFallback(t, fallback.Options{URL: u, Log: &log})
	mock := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, cassetteDB(t, "gosdk.db", gosdkCassette)), fb})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asked := make(chan string, 10)
	sdk, cs := rootsClient(ctx, t, mock.Transport(), asked)
	defer cs.Close()
	// A call the cassette cannot answer starts the server, with
	// mcpmock's handshake; once it is answered, nothing is in flight.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	ss := <-sessions
	//lint:ignore SA1019 handshake-era servers still ask for roots
	if _, err := ss.ListRoots(ctx, nil); err == nil || !strings.Contains(err.Error(), "not asked of the client") {
		t.Errorf("the server's roots/list: %v; want mcpmock's error", err)
	}
	if len(asked) > 0 {
		t.Errorf("the client was asked for its roots")
	}
	if !strings.Contains(log.String(), "roots/list, which "+fb.Target()+" sent while no request of the client's was being answered, is not asked of the client") {
		t.Errorf("stderr: %q", log.String())
	}

	//lint:ignore SA1019 handshake-era servers still ask for roots
	sdk.AddRoots(&mcp.Root{URI: "file:///work/b", Name: "b"})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("the client's notifications/roots/list_changed never reached the server")
	}
	//lint:ignore SA1019 handshake-era servers still ask for roots
	roots, err := ss.ListRoots(ctx, nil)
	if err != nil || len(roots.Roots) != 2 || len(asked) != 1 {
		t.Errorf("the server's roots/list after the client's change: %+v, %v, the client asked %d times; want its two roots, asked once", roots, err, len(asked))
	}
}

// The server request the fallback did not ask its client (as above) is
// recorded, with mcpmock's error answer, which is noted so; a replay of
// the grown cassette leaves both out. Else it would ask its client for
// its roots after the call they followed, and wait for the answer: a
// question the client had never been asked when the session was
// recorded. go-sdk's server over Streamable HTTP records; a go-sdk
// client with roots replays. The replay would ask on a goroutine of its
// own, perhaps after the client has gone: the recording's note is what
// this test holds for sure (TestCassette_NotAskedLeftOut, in replay, that
// a note leaves the question out).
func TestFallback_RequestNotAskedIsNotReplayed(t *testing.T) {
	srv, held := holdServer()
	real := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer real.Close()
	db, fb, mock := recordingFallback(t, real.URL)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asked := make(chan string, 10)
	// Two calls the recording lacks; after the first, the server asks.
	calls := func(cs *mcp.ClientSession, between func()) {
		t.Helper()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		between()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(res.StructuredContent); string(got) != `{"sum":3}` {
			t.Errorf("add: %s", got)
		}
	}
	_, cs := rootsClient(ctx, t, mock.Transport(), asked)
	calls(cs, func() {
		//lint:ignore SA1019 handshake-era servers still ask for roots
		if _, err := (<-held).ListRoots(ctx, nil); err == nil || !strings.Contains(err.Error(), "not asked of the client") {
			t.Errorf("the server's roots/list: %v; want mcpmock's error", err)
		}
	})
	var got []string
	for _, m := range recorded(t, cs, mock, fb, db).Messages {
		sum := jsonrpc.Classify(m.Frame)
		line := fmt.Sprintf("%s %s", m.Dir, cmp.Or(sum.Method, sum.Kind.String()))
		if m.HTTP != nil && m.HTTP.Status == http.StatusAccepted {
			line += " 202" // the recording client's amend keeps the note
		}
		if m.Note != "" {
			line += " note=" + m.Note
		}
		got = append(got, line)
	}
	want := []string{
		"c2s initialize", "s2c response", "c2s notifications/initialized 202", "c2s ping", "s2c response",
		"c2s tools/call", "s2c response",
		"s2c roots/list", "c2s error 202 note=" + replay.NoteNotAsked,
		"c2s tools/call", "s2c response",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The grown cassette alone: both calls are answered from it, and the
	// client is not asked for its roots, then or later.
	mock2 := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db)})
	_, cs2 := rootsClient(ctx, t, mock2.Transport(), asked)
	calls(cs2, func() {})
	cs2.Close()
	mock2.Close()
	if len(asked) > 0 {
		t.Errorf("the replay asked the client for its roots %d times", len(asked))
	}
	if r := mock2.Report(); len(r.Unmatched) != 0 || len(r.Skipped) != 0 || len(r.Undelivered) != 0 || len(r.Unused) != 1 {
		t.Errorf("report %+v; want only the recording's echo unused", r)
	}
}

// server-everything over stdio, whose own roots/list 350 ms after
// initialized the fallback does not ask its client (after mcpmock's
// handshake; the test waits for stderr to say so): the grown cassette
// keeps it, with mcpmock's answer noted, and its replay asks the client
// for its roots only during get-roots-list, as the server did.
func TestFallback_EverythingRootsNotAskedNotReplayed(t *testing.T) {
	db := copyCassette(t, "everything-stdio.db")
	var log syncbuf.Buffer
	fb := newFallback(t, fallback.Options{Command: peertest.ServerEverything(t, "stdio"), Stderr: io.Discard, Record: db, Log: &log})
	mock := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db), fb})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	asked := make(chan string, 10)
	call := func(cs *mcp.ClientSession, name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("%s: %+v, %v", name, res, err)
		}
		text, _ := res.Content[0].(*mcp.TextContent)
		return text.Text
	}
	_, cs := rootsClient(ctx, t, mock.Transport(), asked)
	call(cs, "get-sum", map[string]any{"a": 5, "b": 7}) // not recorded: starts the server
	for !strings.Contains(log.String(), "roots/list, which") {
		select {
		case <-ctx.Done():
			t.Fatalf("server-everything's roots/list never came; stderr: %q", log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	roots := call(cs, "get-roots-list", map[string]any{})
	cs.Close()
	mock.Close()
	if err := fb.Close(); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || !strings.Contains(roots, "file:///work/a") {
		t.Fatalf("asked %d times, get-roots-list %q; want once, during the call", len(asked), roots)
	}
	<-asked
	all := sessions(t, db)
	var notes []string
	for _, m := range all[len(all)-1].Messages {
		if m.Dir == store.C2S && jsonrpc.Classify(m.Frame).Kind != jsonrpc.Request {
			notes = append(notes, fmt.Sprintf("%s %q", jsonrpc.Classify(m.Frame).Kind, m.Note))
		}
	}
	want := []string{`notification ""`, fmt.Sprintf("error %q", replay.NoteNotAsked), `response ""`}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("the client's messages that are no request, recorded: %q; want %q", notes, want)
	}

	mock2 := mocktest.New(t, []replay.Source{mocktest.LoadCassette(t, db)})
	_, cs2 := rootsClient(ctx, t, mock2.Transport(), asked)
	call(cs2, "get-sum", map[string]any{"a": 5, "b": 7})
	if got := call(cs2, "get-roots-list", map[string]any{}); got != roots {
		t.Errorf("replayed get-roots-list: %q, want %q", got, roots)
	}
	cs2.Close()
	mock2.Close()
	if len(asked) != 1 {
		t.Errorf("the replay asked the client for its roots %d times; want once", len(asked))
	}
	if r := mock2.Report(); len(r.Unmatched) != 0 || len(r.Skipped) != 0 {
		t.Errorf("report %+v", r)
	}
}

// mcpspy lint reads the fallback's note: the server request the fallback
// did not ask its client and mcpmock's answer to it are no finding (the
// request was answered, by mcpmock), and a server that refuses the POST
// of that answer is reported as refusing mcpmock's answer, with its body,
// not a message of the client's. go-sdk's server over Streamable HTTP,
// behind a handler that answers 503 to that POST in the second case.
func TestFallback_NotAskedLints(t *testing.T) {
	for _, tt := range []struct {
		name   string
		refuse bool
		want   []string
	}{
		{"accepted", false, nil},
		{"refused", true, []string{"warning http-status: the POST of mcpmock's own answer to the server's roots/list 1 (its client was not asked it) " +
			"was answered 503 Service Unavailable, with no JSON-RPC answer; its body answers no request: busy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, held := holdServer()
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
			refused := make(chan struct{})
			real := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost && tt.refuse {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					if bytes.Contains(body, []byte("not asked of the client")) {
						http.Error(w, "busy", http.StatusServiceUnavailable)
						close(refused)
						return
					}
				}
				h.ServeHTTP(w, r)
			}))
			defer real.Close()
			db, fb, mock := recordingFallback(t, real.URL)

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, cs := rootsClient(ctx, t, mock.Transport(), make(chan string, 10))
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			ask, stop := context.WithCancel(ctx)
			if tt.refuse {
				// The server never gets its answer: it stops waiting once
				// the refusal is sent.
				go func() {
					select {
					case <-refused:
					case <-ctx.Done():
					}
					stop()
				}()
			}
			//lint:ignore SA1019 handshake-era servers still ask for roots
			_, err := (<-held).ListRoots(ask, nil)
			stop()
			if err == nil {
				t.Fatal("the server's roots/list was answered; want mcpmock's error, or no answer")
			}
			if tt.refuse {
				waitRefusalRecorded(t, db)
			}
			last := recorded(t, cs, mock, fb, db)
			var got []string
			for _, f := range lint.Session(&last, lint.Options{}) {
				got = append(got, fmt.Sprintf("%s %s: %s", f.Severity, f.Rule, f.Message))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("lint:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// waitRefusalRecorded waits until the cassette at db holds mcpmock's own
// answer to a server request with the 503 its POST got. The server's
// handler says it refused before its response is on the wire, and the
// fallback records the status only once the response arrives: closing
// the fallback before then would leave it out.
func waitRefusalRecorded(t *testing.T, db string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, s := range sessions(t, db) {
			for _, m := range s.Messages {
				if m.Dir == store.C2S && strings.HasPrefix(m.Note, replay.NoteNotAsked) && m.HTTP != nil && m.HTTP.Status == http.StatusServiceUnavailable {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the refused POST of mcpmock's own answer was not recorded within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
