package replay_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

type sseEvent struct{ id, data string }

// sseStream reads whole events (id and data) from an event stream.
func sseStream(r io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var e sseEvent
		seen := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if seen {
					ch <- e
				}
				e, seen = sseEvent{}, false
			case strings.HasPrefix(line, "id: "):
				e.id, seen = strings.TrimPrefix(line, "id: "), true
			case strings.HasPrefix(line, "data:"):
				e.data, seen = strings.TrimSpace(strings.TrimPrefix(line, "data:")), true
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan sseEvent, what string) sseEvent {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no event within 10 s", what)
	}
	return sseEvent{}
}

func initSession(t *testing.T, url string) *peertest.RawHTTP {
	t.Helper()
	c := &peertest.RawHTTP{T: t, URL: url}
	r := c.Do("POST", initBody, nil)
	bodyOf(t, r)
	c.SessionID = r.Header.Get("Mcp-Session-Id")
	if c.SessionID == "" {
		t.Fatal("initialize: no session id")
	}
	return c
}

const growBody = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grow"}}`

// A GET stream dropped and resumed with Last-Event-ID gets exactly the
// events it missed, then the live ones.
func TestHTTP_ResumeGETStream(t *testing.T) {
	srv := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	c := initSession(t, srv.URL())
	v := map[string]string{"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-11-25"}

	get := c.Do("GET", "", v)
	events := sseStream(get.Body)
	if e := next(t, events, "priming event"); e.id != "0-0" || e.data != "" {
		t.Errorf("first event %+v, want a priming event with id 0-0 and no data", e)
	}
	bodyOf(t, c.Do("POST", growBody, nil))
	first := next(t, events, "first list_changed")
	if first.id != "0-1" || !strings.Contains(first.data, "list_changed") {
		t.Errorf("first event %+v", first)
	}
	get.Body.Close()
	bodyOf(t, c.Do("POST", growBody, nil))
	bodyOf(t, c.Do("POST", growBody, nil))

	v["Last-Event-ID"] = first.id
	resumed := c.Do("GET", "", v)
	defer resumed.Body.Close()
	if resumed.StatusCode != http.StatusOK {
		t.Fatalf("resume: %d", resumed.StatusCode)
	}
	events = sseStream(resumed.Body)
	bodyOf(t, c.Do("POST", growBody, nil)) // live, after the replayed ones
	var ids []string
	for range 3 {
		e := next(t, events, "resumed event")
		if !strings.Contains(e.data, "list_changed") {
			t.Errorf("resumed event %+v, want list_changed", e)
		}
		ids = append(ids, e.id)
	}
	if got := strings.Join(ids, " "); got != "0-2 0-3 0-4" {
		t.Errorf("resumed ids %s, want 0-2 0-3 0-4", got)
	}
}

// A POST's event-stream answer dropped mid-way is not a cancellation: the
// call goes on, and a GET with Last-Event-ID gets the rest of it, the
// answer included.
func TestHTTP_ResumePOSTStream(t *testing.T) {
	srv := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	c := initSession(t, srv.URL())
	r := c.Do("POST", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`, nil)
	events := sseStream(r.Body)
	first := next(t, events, "first progress")
	stream, n, _ := strings.Cut(first.id, "-")
	if n != "1" || !strings.Contains(first.data, `"progress":1`) {
		t.Fatalf("first event %+v", first)
	}
	r.Body.Close()

	resumed := c.Do("GET", "", map[string]string{"Accept": "text/event-stream", "Last-Event-ID": first.id})
	defer resumed.Body.Close()
	events = sseStream(resumed.Body)
	var got []string
	for e := range events {
		if !strings.HasPrefix(e.id, stream+"-") {
			t.Errorf("event %s is not on stream %s", e.id, stream)
		}
		got = append(got, e.data)
		if strings.Contains(e.data, `"method":"ping"`) {
			id := e.data[strings.Index(e.data, `"id":`)+5 : strings.Index(e.data, `,"method"`)]
			bodyOf(t, c.Do("POST", `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`, nil))
		}
	}
	if len(got) != 3 || !strings.Contains(got[0], `"progress":2`) || !strings.Contains(got[2], `"id":4`) {
		t.Errorf("resumed stream %q, want progress 2, ping, the answer", got)
	}
}

// A client that resumes a POST stream it already had whole (the TS SDK
// client does after an error answer) gets an open stream with nothing on
// it, as from the TS SDK's own server, until the session ends; ending it
// at once sends that client into reconnecting until it gives up.
func TestHTTP_ResumeFinishedPOSTStream(t *testing.T) {
	srv := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	c := initSession(t, srv.URL())
	r := c.Do("POST", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`, nil)
	var last sseEvent
	for e := range sseStream(r.Body) {
		if strings.Contains(e.data, `"method":"ping"`) {
			id := e.data[strings.Index(e.data, `"id":`)+5 : strings.Index(e.data, `,"method"`)]
			bodyOf(t, c.Do("POST", `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`, nil))
		}
		last = e
	}
	r.Body.Close()
	if !strings.Contains(last.data, `"id":4`) {
		t.Fatalf("the stream ended with %+v, want the answer", last)
	}

	resumed := c.Do("GET", "", map[string]string{"Accept": "text/event-stream", "Last-Event-ID": last.id})
	defer resumed.Body.Close()
	if resumed.StatusCode != http.StatusOK {
		t.Fatalf("resume: %s", resumed.Status)
	}
	events := sseStream(resumed.Body)
	// Another round trip on the session: by its end the resume has been
	// handled, and a stream ended at once would most likely be seen ended.
	bodyOf(t, c.Do("POST", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, nil))
	select {
	case e, ok := <-events:
		if ok {
			t.Fatalf("the resumed stream carried %+v, want nothing", e)
		}
		t.Fatal("the resumed stream ended while the session lives")
	default:
	}
	bodyOf(t, c.Do("DELETE", "", nil))
	select {
	case e, ok := <-events:
		if ok {
			t.Fatalf("the resumed stream carried %+v, want nothing", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed stream outlived its session by 10 s")
	}
}

func TestHTTP_ResumeBadEventID(t *testing.T) {
	srv := mocktest.New(t, []replay.Source{cassetteOf(t, basicTape...)})
	c := initSession(t, srv.URL())
	tests := []struct{ name, id string }{
		{"malformed", "abc"},
		{"negative", "0--1"},
		{"stream never opened", "7-1"},
		{"event not sent yet", "0-9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Do("GET", "", map[string]string{"Accept": "text/event-stream", "Last-Event-ID": tt.id})
			body := bodyOf(t, r)
			if r.StatusCode != http.StatusBadRequest || !strings.Contains(body, "cannot resume") {
				t.Errorf("Last-Event-ID %q: %d %q, want 400", tt.id, r.StatusCode, body)
			}
		})
	}
	if !strings.Contains(srv.Warnings(), "cannot resume") {
		t.Errorf("no warning on stderr; log:\n%s", srv.Warnings())
	}
}

// dropFirstGET cuts a session's first GET stream when mcpmock writes its
// second message to it: the client has seen one, the next is lost.
type dropFirstGET struct {
	next    http.Handler
	dropped atomic.Bool
	resumed atomic.Value // the Last-Event-ID a GET came back with
}

func (d *dropFirstGET) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get("Last-Event-ID"); r.Method == http.MethodGet && id != "" {
		d.resumed.Store(id)
	}
	if r.Method != http.MethodGet || r.Header.Get("Last-Event-ID") != "" || d.dropped.Load() {
		d.next.ServeHTTP(w, r)
		return
	}
	d.next.ServeHTTP(&cutWriter{ResponseWriter: w, d: d}, r)
}

type cutWriter struct {
	http.ResponseWriter
	d    *dropFirstGET
	msgs int
}

func (c *cutWriter) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("data: {")) {
		c.msgs++
		if c.msgs == 2 && c.d.dropped.CompareAndSwap(false, true) {
			panic(http.ErrAbortHandler) // the connection drops
		}
	}
	return c.ResponseWriter.Write(b)
}

func (c *cutWriter) Flush() { c.ResponseWriter.(http.Flusher).Flush() }

// The Go SDK client resumes its dropped GET stream with Last-Event-ID and
// gets every change notification exactly once.
func TestHTTP_ResumeGoSDK(t *testing.T) {
	tape := []string{
		basicTape[0], basicTape[1], basicTape[2],
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"grow","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"grew"}]}}`,
		`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`> {"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"tools":[]}}`,
	}
	srv := mocktest.New(t, []replay.Source{cassetteOf(t, tape...)})
	d := &dropFirstGET{next: srv.Handler()}
	hs := httptest.NewServer(d)
	t.Cleanup(func() { srv.Close(); hs.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	changed := make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "resumer", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const grows = 3
	for i := range grows {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "grow"}); err != nil {
			t.Fatalf("grow %d: %v", i+1, err)
		}
	}
	for i := range grows {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("list_changed %d of %d never came", i+1, grows)
		}
	}
	if !d.dropped.Load() {
		t.Error("the GET stream was never dropped")
	}
	if id, _ := d.resumed.Load().(string); id != "0-1" {
		t.Errorf("the client resumed with Last-Event-ID %q, want 0-1", id)
	}
	// One more round trip: a duplicate would have arrived before its answer.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
		t.Error("a change notification arrived twice")
	default:
	}
}
