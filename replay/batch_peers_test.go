package replay_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// TestReplay_RecordedBatchServerEverything records a 2025-03-26 client's
// batch to server-everything through mcpspy (server-everything answers a
// batch's requests as separate events of one SSE stream), then replays
// the cassette to the same requests in another order, with other ids, in
// one batch: each gets the answer server-everything gave it.
func TestReplay_RecordedBatchServerEverything(t *testing.T) {
	upstream := peertest.EverythingHTTP(t, "streamableHttp")
	db := filepath.Join(t.TempDir(), "batch.db")
	spy := peertest.Start(t, "", nil, nil, nil, peertest.Binary(t, "mcpspy"), "record", "-o", db, "--upstream", upstream)
	proxy := spy.WaitLine(t, "mcpspy: listening on ", 20*time.Second) + "/mcp"

	echo := `"method":"tools/call","params":{"name":"echo","arguments":{"message":"batched"}}}`
	sum := `"method":"tools/call","params":{"name":"get-sum","arguments":{"a":2,"b":3}}}`
	live := batchExchange(t, proxy, `[{"jsonrpc":"2.0","id":2,`+echo+`,{"jsonrpc":"2.0","id":3,`+sum+`]`)
	spy.Stop(t, 15*time.Second)
	if len(live) != 2 || live["2"] == "" || live["3"] == "" {
		t.Fatalf("server-everything answered the batch with %v, want the answers to ids 2 and 3", live)
	}

	cassette := mocktest.LoadCassette(t, db)
	srv, err := replay.NewServer([]replay.Source{cassette}, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	replayed := batchExchange(t, newHTTPServer(t, srv), `[{"jsonrpc":"2.0","id":"s",`+sum+`,{"jsonrpc":"2.0","id":"e",`+echo+`]`)
	if replayed[`"s"`] != live["3"] || replayed[`"e"`] != live["2"] {
		t.Errorf("replayed batch:\ngot  %v\nwant get-sum %s, echo %s", replayed, live["3"], live["2"])
	}
	if r := srv.Report(); len(r.Unmatched) != 0 {
		t.Errorf("unmatched in replay: %+v", r.Unmatched)
	}
}

// batchExchange opens a 2025-03-26 session at url, posts batch, and
// returns every answer the POST got, by id (as JSON text), each answer's
// result or error re-encoded with sorted keys; it ends the session.
func batchExchange(t *testing.T, url, batch string) map[string]string {
	t.Helper()
	c := &peertest.RawHTTP{T: t, URL: url}
	init := c.Do("POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batcher","version":"1"}}}`, nil)
	if body := bodyOf(t, init); init.StatusCode != http.StatusOK || !strings.Contains(body, `"protocolVersion":"2025-03-26"`) {
		t.Fatalf("initialize at %s: %d %s", url, init.StatusCode, body)
	}
	c.SessionID = init.Header.Get("Mcp-Session-Id")
	if r := c.Do("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized at %s: %d %s", url, r.StatusCode, bodyOf(t, r))
	}
	resp := c.Do("POST", batch, nil)
	body := bodyOf(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("batch at %s: %d %s", url, resp.StatusCode, body)
	}
	// One JSON value (an array, or an object) or an event stream whose
	// events each hold one.
	values := []string{body}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		values = nil
		sc := bufio.NewScanner(strings.NewReader(body))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "" {
				values = append(values, d)
			}
		}
	}
	answers := map[string]string{}
	for _, v := range values {
		var msgs []map[string]json.RawMessage
		if strings.HasPrefix(strings.TrimSpace(v), "[") {
			if err := json.Unmarshal([]byte(v), &msgs); err != nil {
				t.Fatalf("batch at %s: %v in %s", url, err, v)
			}
		} else {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(v), &m); err != nil {
				t.Fatalf("batch at %s: %v in %s", url, err, v)
			}
			msgs = append(msgs, m)
		}
		for _, m := range msgs {
			answer := m["result"]
			if answer == nil {
				answer = m["error"]
			}
			answers[string(m["id"])] = norm(t, string(answer))
		}
	}
	if c.SessionID != "" {
		bodyOf(t, c.Do("DELETE", "", nil))
	}
	return answers
}
