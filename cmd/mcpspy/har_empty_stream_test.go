package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// Event streams that ended without a message, recorded from
// server-everything: a call whose client went away after the stream's
// priming event, and a GET stream it left before anything came. The HAR
// shows each stream's text (the priming event), rebuilt as any stream's
// is, not "not recorded"; imported, the cassette keeps them as recorded
// (the GET's stream kind, the priming event on its POST stream), so a
// second export --har writes the same entries.
func TestMcpspy_HAREmptyStreams(t *testing.T) {
	t.Parallel()
	base := peertest.EverythingHTTP(t, "streamableHttp")
	dir := t.TempDir()
	db := filepath.Join(dir, "cut.db")
	s := startSpy(t, "-o", db, "--upstream", base+"/mcp")
	c := &mcpHTTPClient{t: t, url: s.url + "/mcp"}
	c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).Body.Close()
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	// The call: its stream's priming event, then the client goes away.
	call := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":30,"steps":1}}}`)
	first := readEvent(t, call)
	id, ok := strings.CutPrefix(strings.Split(first, "\n")[0], "id: ")
	if !ok || strings.Contains(first, "\ndata: {") {
		t.Fatalf("the call's stream began with %q, want server-everything's priming event", first)
	}
	call.Body.Close()
	// The GET stream, left at once.
	get := c.do(http.MethodGet, "", "text/event-stream")
	get.Body.Close()

	// Wait for the recorder to see both ends: the call answered without
	// a message, the GET kept as an exchange that carried none.
	deadline := time.Now().Add(20 * time.Second)
	for {
		tape, err := store.Load(db)
		if err == nil && len(tape.Sessions) == 1 && len(tape.Sessions[0].Info.Bare) == 1 && len(tape.Sessions[0].Info.Priming) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recorder did not note both streams' ends in 20s: %v %+v", err, tape)
		}
		time.Sleep(20 * time.Millisecond) // polling the cassette, with a deadline
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("mcpspy exit: %v", err)
	}

	har := filepath.Join(dir, "cut.har")
	runOK(t, "export", "--har", "-o", har, db)
	code, exported, stderr := runCaptured("export", "--har", db)
	if code != 0 {
		t.Fatalf("export --har: exit %d: %s", code, stderr)
	}
	type content struct{ Text, Comment string }
	var doc struct {
		Log struct {
			Entries []struct {
				Request  struct{ Method string }
				Response struct{ Content content }
			}
		}
	}
	if err := json.Unmarshal([]byte(exported), &doc); err != nil {
		t.Fatal(err)
	}
	const rebuilt = "rebuilt from the recorded events; see the log's comment"
	streams := map[string]content{}
	for _, e := range doc.Log.Entries {
		if e.Request.Method == http.MethodGet || strings.Contains(e.Response.Content.Text, id) {
			streams[e.Request.Method] = e.Response.Content
		}
	}
	want := map[string]content{
		http.MethodPost: {Text: "id: " + id + "\ndata:\n\n", Comment: rebuilt},
		http.MethodGet:  {Comment: rebuilt},
	}
	if d := cmp.Diff(want, streams); d != "" {
		t.Errorf("the empty streams' content in the HAR (-want +got):\n%s", d)
	}

	imported := filepath.Join(dir, "imported.db")
	runOK(t, "import", "-o", imported, har)
	_, again, _ := runCaptured("export", "--har", imported)
	if d := cmp.Diff(harEntries(t, exported), harEntries(t, again)); d != "" {
		t.Errorf("export --har of the imported HAR has other entries than the first (-first +second):\n%s", d)
	}
	recorded, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	back, err := store.Load(imported)
	if err != nil {
		t.Fatal(err)
	}
	ri, bi := recorded.Sessions[0].Info, back.Sessions[0].Info
	if d := cmp.Diff(ri.Bare, bi.Bare, cmp.Comparer(func(a, b time.Time) bool { return a.Truncate(time.Millisecond).Equal(b.Truncate(time.Millisecond)) })); d != "" {
		t.Errorf("bare exchanges (-recorded +imported):\n%s", d)
	}
	if d := cmp.Diff(ri.Priming, bi.Priming); d != "" {
		t.Errorf("priming events (-recorded +imported):\n%s", d)
	}
}

// harEntries is a HAR's entries, as JSON values.
func harEntries(t *testing.T, doc string) []any {
	t.Helper()
	var h struct{ Log struct{ Entries []any } }
	if err := json.Unmarshal([]byte(doc), &h); err != nil {
		t.Fatalf("not a HAR: %v", err)
	}
	return h.Log.Entries
}

// mcpHTTPClient speaks Streamable HTTP by hand, a request at a time, so
// that a test can leave a stream where it likes.
type mcpHTTPClient struct {
	t       *testing.T
	url     string
	session string
}

func (c *mcpHTTPClient) post(body string) *http.Response {
	return c.do(http.MethodPost, body, "application/json, text/event-stream")
}

func (c *mcpHTTPClient) do(method, body, accept string) *http.Response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode >= 300 {
		resp.Body.Close()
		c.t.Fatalf("%s %s: %s", method, body, resp.Status)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	return resp
}

// readEvent reads the first event of an event stream, its lines joined
// without the blank line that ends it.
func readEvent(t *testing.T, resp *http.Response) string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("answer of type %q, want an event stream", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() {
		if sc.Text() == "" {
			return strings.Join(lines, "\n")
		}
		lines = append(lines, sc.Text())
	}
	t.Fatalf("the stream ended before its first event: %v", sc.Err())
	return ""
}
