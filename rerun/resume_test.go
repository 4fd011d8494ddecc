package rerun_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/peertest/gosdk"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// slowSession is a 2025-11-25 session that calls go-sdk's slow tool,
// which reports progress three times before it answers.
func slowSession() *store.TapeSession {
	return sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"resume-go","version":"1.0.0"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p1"}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":3,"message":"step 1"}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":2,"total":3,"message":"step 2"}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":3,"total":3,"message":"step 3"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}`,
	)
}

func goSDKHandler(store mcp.EventStore) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("resume-go") },
		&mcp.StreamableHTTPOptions{EventStore: store})
}

// The POST answer stream of a slow call breaks after its first progress
// notification; go-sdk's server, with an event store, gave every event an
// id, so the rerun resumes with GET and Last-Event-ID, gets the rest
// (two more progress notifications and the answer), and finds what an
// unbroken rerun finds.
func TestRun_ResumesABrokenStream(t *testing.T) {
	recorded := slowSession()
	direct := httptest.NewServer(goSDKHandler(mcp.NewMemoryEventStore(nil)))
	defer direct.Close()
	du, _ := url.Parse(direct.URL + "/mcp")
	unbroken := runOK(t, recorded, rerun.Options{URL: du})

	proxy := peertest.NewCutProxy(t, goSDKHandler(mcp.NewMemoryEventStore(nil)))
	broken := runOK(t, recorded, rerun.Options{URL: proxy.URL})
	if !proxy.Cut() {
		t.Fatal("the proxy cut no stream")
	}
	if got, want := differences(recorded, &broken.Session), differences(recorded, &unbroken.Session); !slices.Equal(got, want) || len(broken.Unanswered) > 0 {
		t.Errorf("broken: differences %q, unanswered %q\nunbroken: differences %q", got, broken.Unanswered, want)
	}
	// The resume named the last event the rerun saw on the POST stream:
	// the first progress notification.
	var lastOnPost string
	var resumedAnswer, progress int
	for _, m := range broken.Session.Messages {
		if m.Dir != store.S2C || m.HTTP == nil {
			continue
		}
		s := jsonrpc.Classify(m.Frame)
		if m.HTTP.Stream == "post-sse" && s.Method == "notifications/progress" {
			lastOnPost = m.HTTP.EventID
		}
		if s.Method == "notifications/progress" {
			progress++
		}
		if s.ID == "2" && m.HTTP.Stream == "get-sse" && m.HTTP.RequestHeader.Get("Last-Event-ID") == lastOnPost && m.HTTP.EventID != "" {
			resumedAnswer++
		}
	}
	if r := proxy.Resumed(); len(r) != 1 || r[0] != lastOnPost || lastOnPost == "" {
		t.Errorf("resumed from %q, the last event on the POST stream was %q", r, lastOnPost)
	}
	if resumedAnswer != 1 || progress != 3 {
		t.Errorf("answers on the resumed stream %d, progress notifications %d; want 1 and 3:\n%v", resumedAnswer, progress, broken.Session.Messages)
	}
}

// Without an event store go-sdk's server gives no event ids: nothing to
// resume from. The call fails at once, saying so, and no GET is tried.
func TestRun_BrokenStreamWithoutEventIDs(t *testing.T) {
	proxy := peertest.NewCutProxy(t, goSDKHandler(nil))
	res := runOK(t, slowSession(), rerun.Options{URL: proxy.URL, Timeout: time.Minute})
	want := "tools/call (id 2): its SSE answer stream broke (unexpected EOF) before the answer, and the server gave no event id to resume it from"
	if len(res.Unanswered) != 1 || res.Unanswered[0] != want {
		t.Errorf("unanswered %q\nwant %q", res.Unanswered, want)
	}
	if !proxy.Cut() || len(proxy.Resumed()) > 0 {
		t.Errorf("cut %v, resumes %q; want a cut and no resume", proxy.Cut(), proxy.Resumed())
	}
}

// A 2026-07-28 stream is never resumed: that revision has no resumption,
// and closing a stream cancels its request. go-sdk gives such streams no
// event ids even with an event store; the test server after it does, and
// is not asked either.
func TestRun_NoResumeIn2026(t *testing.T) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return gosdk.NewServer("stateless-go") },
		&mcp.StreamableHTTPOptions{Stateless: true, EventStore: mcp.NewMemoryEventStore(nil)})
	proxy := peertest.NewCutProxy(t, h)
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p1",`+strings.TrimSuffix(strings.TrimPrefix(meta2026, `"_meta":{`), "}")+`}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}`,
	)
	res := runOK(t, recorded, rerun.Options{URL: proxy.URL, Timeout: time.Minute})
	want := "tools/call (id 2): its SSE answer stream broke (unexpected EOF) before the answer, and 2026-07-28 streams cannot be resumed"
	if len(res.Unanswered) != 1 || res.Unanswered[0] != want {
		t.Errorf("unanswered %q\nwant %q", res.Unanswered, want)
	}
	if !proxy.Cut() || len(proxy.Resumed()) > 0 {
		t.Errorf("cut %v, resumes %q; want a cut and no resume", proxy.Cut(), proxy.Resumed())
	}

	f := newFlakyServer(t, "1", answerEvent)
	res = runOK(t, recorded, rerun.Options{URL: f.url, Timeout: time.Minute})
	if gets, _ := f.resumes(); len(res.Unanswered) != 1 || res.Unanswered[0] != want || len(gets) > 0 {
		t.Errorf("with event ids: unanswered %q, %d resumes\nwant %q and none", res.Unanswered, len(gets), want)
	}
}

// flakyServer answers a POSTed call with an event (id "a1", the given
// retry) and then drops the connection; each GET with Last-Event-ID is
// answered by get, and its arrival time kept.
type flakyServer struct {
	url  *url.URL
	mu   sync.Mutex
	cut  time.Time
	gets []time.Time
}

func newFlakyServer(t *testing.T, retry string, get func(w http.ResponseWriter, n int)) *flakyServer {
	t.Helper()
	f := &flakyServer{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		switch {
		case r.Method == http.MethodPost:
			fmt.Fprintf(w, "id: a1\nretry: %s\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n", retry)
			w.(http.Flusher).Flush()
			f.mu.Lock()
			f.cut = time.Now()
			f.mu.Unlock()
			panic(http.ErrAbortHandler) // drop the connection, mid-stream
		case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "a1":
			f.mu.Lock()
			f.gets = append(f.gets, time.Now())
			n := len(f.gets)
			f.mu.Unlock()
			get(w, n)
		default:
			http.Error(w, "no", http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(ts.Close)
	f.url, _ = url.Parse(ts.URL + "/mcp")
	return f
}

func (f *flakyServer) resumes() ([]time.Time, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.gets), f.cut
}

var oneCall = sessionOf(
	`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}`,
)

func answerEvent(w http.ResponseWriter, _ int) {
	fmt.Fprint(w, "id: a2\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n")
}

// The server's retry: is honoured before the resume, up to a quarter of
// the rerun's Timeout (an hour's retry is not waited for); resumes that bring nothing
// new are bounded; a resume the server refuses is not tried again.
func TestRun_ResumeRetryAndLimits(t *testing.T) {
	t.Run("retry honoured", func(t *testing.T) {
		f := newFlakyServer(t, "300", answerEvent)
		res := runOK(t, oneCall, rerun.Options{URL: f.url})
		gets, cut := f.resumes()
		if len(res.Unanswered) > 0 || len(gets) != 1 {
			t.Fatalf("unanswered %q, %d resumes", res.Unanswered, len(gets))
		}
		if waited := gets[0].Sub(cut); waited < 300*time.Millisecond {
			t.Errorf("resumed %s after the break, before the server's retry of 300ms", waited)
		}
	})
	t.Run("retry capped at a quarter of the timeout", func(t *testing.T) {
		f := newFlakyServer(t, "3600000", answerEvent)
		res := runOK(t, oneCall, rerun.Options{URL: f.url, Timeout: 2 * time.Second})
		gets, cut := f.resumes()
		if len(res.Unanswered) > 0 || len(gets) != 1 || answerTo(&res.Session, "2") == "" {
			t.Fatalf("unanswered %q, %d resumes", res.Unanswered, len(gets))
		}
		if waited := gets[0].Sub(cut); waited < 500*time.Millisecond {
			t.Errorf("resumed %s after the break, before a quarter of the timeout", waited)
		}
	})
	t.Run("resumes that bring nothing", func(t *testing.T) {
		f := newFlakyServer(t, "1", func(http.ResponseWriter, int) {}) // an empty stream, ended
		res := runOK(t, oneCall, rerun.Options{URL: f.url, Timeout: time.Minute})
		gets, _ := f.resumes()
		want := `tools/call (id 2): its SSE answer stream ended; 5 resumes from event "a1" brought nothing new (last: EOF)`
		if len(res.Unanswered) != 1 || res.Unanswered[0] != want || len(gets) != 5 {
			t.Errorf("unanswered %q, %d resumes\nwant %q after 5", res.Unanswered, len(gets), want)
		}
	})
	t.Run("a stream still busy", func(t *testing.T) {
		f := newFlakyServer(t, "1", func(w http.ResponseWriter, n int) {
			if n == 1 { // as go-sdk does until it sees the broken connection go
				http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
				return
			}
			answerEvent(w, n)
		})
		res := runOK(t, oneCall, rerun.Options{URL: f.url, Timeout: time.Minute})
		if gets, _ := f.resumes(); len(res.Unanswered) > 0 || len(gets) != 2 || answerTo(&res.Session, "2") == "" {
			t.Errorf("unanswered %q, %d resumes; want the answer after 2", res.Unanswered, len(gets))
		}
	})
	t.Run("a refused resume", func(t *testing.T) {
		f := newFlakyServer(t, "1", func(w http.ResponseWriter, _ int) {
			w.Header().Set("Content-Type", "text/plain")
			http.Error(w, "unknown event id", http.StatusBadRequest)
		})
		res := runOK(t, oneCall, rerun.Options{URL: f.url, Timeout: time.Minute})
		gets, _ := f.resumes()
		want := `tools/call (id 2): its SSE answer stream broke (unexpected EOF); resuming from event "a1": refused: HTTP 400: unknown event id`
		if len(res.Unanswered) != 1 || res.Unanswered[0] != want || len(gets) != 1 {
			t.Errorf("unanswered %q, %d resumes\nwant %q after 1", res.Unanswered, len(gets), want)
		}
	})
}

// The session's GET stream breaks after its priming event; the rerun
// resumes it with Last-Event-ID and gets what the server sent meanwhile:
// a ping, which it answers.
func TestRun_ResumesTheGETStream(t *testing.T) {
	recorded := sessionOf(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	)
	const ping = `{"jsonrpc":"2.0","id":"q1","method":"ping"}`
	replied := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch s := jsonrpc.Classify(body); {
		case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "g1":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: g2\ndata: %s\n\n", ping)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // a GET stream lasts as long as the session
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: g1\ndata:\n\n") // priming, then the connection drops
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case r.Method == http.MethodDelete:
		case s.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
		case s.Kind == jsonrpc.Request:
			select { // answer once the ping from the resumed stream is answered
			case <-replied:
			case <-r.Context().Done():
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, s.ID)
		case s.Kind == jsonrpc.Response && s.ID == `"q1"`:
			once.Do(func() { close(replied) })
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/mcp")
	res := runOK(t, recorded, rerun.Options{URL: u, Timeout: 30 * time.Second})
	var got bool
	for _, m := range res.Session.Messages {
		got = got || string(m.Frame) == ping && m.HTTP.Stream == "get-sse" && m.HTTP.RequestHeader.Get("Last-Event-ID") == "g1" && m.HTTP.EventID == "g2"
	}
	if !got || len(res.Notes) > 0 || len(res.Unanswered) > 0 || answerTo(&res.Session, "2") == "" {
		t.Errorf("ping on the resumed stream %v, notes %q, unanswered %q; session:\n%v", got, res.Notes, res.Unanswered, res.Session.Messages)
	}
}
