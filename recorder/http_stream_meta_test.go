package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// A stream that ends after priming events and no message (a 2025-11-25
// server may prime a GET stream, or close a POST stream early and let the
// client resume) records no frame; its event ids and retry are kept in the
// session's info, where a reader looking for a resumption point finds them.
func TestHTTPProxy_PrimingOnlyStream(t *testing.T) {
	up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "sess-1")
		switch r.Method {
		case http.MethodPost:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"primer","version":"1"}}}`)
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "id: get-0\nretry: 750\ndata:\n\n: keep-alive\n\nid: get-1\ndata:\n\n")
		}
	}))
	px := startHTTPProxy(t, up+"/mcp")
	resp, _ := post(t, px.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", px.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", "sess-1")
	gresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(gresp.Body)
	gresp.Body.Close()
	if want := "id: get-0\nretry: 750\ndata:\n\n: keep-alive\n\nid: get-1\ndata:\n\n"; string(body) != want {
		t.Errorf("client got %q, want the stream unchanged %q", body, want)
	}
	px.Stop()

	got := readCassette(t, px.Cassette)
	if len(got) != 1 {
		t.Fatalf("want 1 session, got %d", len(got))
	}
	if n := len(got[0].msgs); n != 2 {
		t.Errorf("recorded %d frames, want 2 (initialize and its answer): priming events are not messages", n)
	}
	pr := got[0].info.Priming
	if len(pr) != 1 {
		t.Fatalf("session info priming = %+v, want one stream", pr)
	}
	if p := pr[0]; p.Stream != "get-sse" || p.Retry != "750" || !slices.Equal(p.EventIDs, []string{"get-0", "get-1"}) || p.StreamID == 0 || p.Path == "" {
		t.Errorf("priming = %+v, want get-sse, retry 750, ids [get-0 get-1], a stream id and the path", p)
	}
	// It survives the JSONL export like the rest of the session info.
	var jsonl bytes.Buffer
	if err := store.Export(px.Cassette, &jsonl, nil); err != nil {
		t.Fatal(err)
	}
	tape, err := store.ReadJSONL(&jsonl, "export.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if back := tape.Sessions[0].Info.Priming; fmt.Sprint(back) != fmt.Sprint(pr) {
		t.Errorf("after export and read: %+v, want %+v", back, pr)
	}
}

// Each POST is one stream: its body and every event of its SSE answer
// (progress, then the result) carry the same StreamID, and two calls made
// at once carry different ones, so a reader can tell which answer came on
// which request's stream. go-sdk's client and server, two concurrent
// progress calls.
func TestHTTPProxy_StreamIDPerExchange(t *testing.T) {
	srv := goSDKServer()
	up := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	px := startHTTPProxy(t, up+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "streams", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: px.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, tok := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 2}}
			call.SetProgressToken(tok)
			if _, err := cs.CallTool(ctx, call); err != nil {
				t.Errorf("call %s: %v", tok, err)
			}
		}()
	}
	wg.Wait()
	cs.Close()
	px.Stop()

	type stream struct{ request, progress, answers int }
	byID := map[uint64]*stream{}
	callStream := map[string]uint64{} // JSON-RPC id of each tools/call → its stream
	for _, sess := range readCassette(t, px.Cassette) {
		for _, m := range sess.msgs {
			s := jsonrpc.Classify(m.Frame)
			if m.HTTP == nil || m.HTTP.StreamID == 0 {
				t.Errorf("seq %d %s: no stream id (%+v)", m.Seq, s.Method, m.HTTP)
				continue
			}
			st := byID[m.HTTP.StreamID]
			if st == nil {
				st = &stream{}
				byID[m.HTTP.StreamID] = st
			}
			switch {
			case s.Method == "tools/call":
				st.request++
				callStream[s.ID] = m.HTTP.StreamID
			case s.Method == "notifications/progress":
				st.progress++
			case s.Kind == jsonrpc.Response:
				if id, ok := callStream[s.ID]; ok {
					st.answers++
					if id != m.HTTP.StreamID {
						t.Errorf("the answer to tools/call %s came on stream %d, its request went on %d", s.ID, m.HTTP.StreamID, id)
					}
				}
			}
		}
	}
	if len(callStream) != 2 {
		t.Fatalf("%d tools/call streams recorded, want 2", len(callStream))
	}
	seen := map[uint64]bool{}
	for id, sid := range callStream {
		if seen[sid] {
			t.Errorf("two calls share stream %d", sid)
		}
		seen[sid] = true
		if st := byID[sid]; st.request != 1 || st.progress != 2 || st.answers != 1 {
			t.Errorf("call %s's stream %d holds %+v, want its request, 2 progress notifications and its answer", id, sid, *st)
		}
	}
}
