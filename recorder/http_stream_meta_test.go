package recorder_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

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
