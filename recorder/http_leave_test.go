package recorder_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// A client that closes a POST's event stream before the answer came
// cancels the request in 2026-07-28, and the recorder notes on the
// request that it left; one that closes it after reading the answer,
// before the server ended the stream (go-sdk's client may), cancelled
// nothing, and the request gets no such note.
func TestHTTPProxy_ClientLeavesItsStream(t *testing.T) {
	const progress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`
	const answer = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	tests := []struct {
		name   string
		events []string // what the server sends before it waits for the client to leave
		note   string
	}{
		{"left after a notification", []string{progress}, store.NoteLeftStream},
		{"left after the answer", []string{progress, answer}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			left := make(chan struct{})
			up := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, ev := range tt.events {
					w.Write([]byte("data: " + ev + "\n\n"))
				}
				w.(http.Flusher).Flush()
				<-r.Context().Done() // the stream stays open until the client leaves
				close(left)
			}))
			p := startHTTPProxy(t, up)
			c := &peertest.RawHTTP{T: t, URL: p.URL + "/mcp"}
			resp := c.Do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t"}}}`,
				map[string]string{"MCP-Protocol-Version": "2026-07-28"})
			rd := bufio.NewReader(resp.Body)
			for seen := 0; seen < len(tt.events); {
				line, err := rd.ReadString('\n')
				if err != nil {
					t.Fatalf("after %d events: %v", seen, err)
				}
				if strings.HasPrefix(line, "data: ") {
					seen++
				}
			}
			resp.Body.Close()
			select {
			case <-left:
			case <-time.After(10 * time.Second):
				t.Fatal("the server never saw the client leave")
			}
			p.Stop()
			sessions := readCassette(t, p.Cassette)
			if len(sessions) != 1 || len(sessions[0].msgs) != 1+len(tt.events) {
				t.Fatalf("recorded %d sessions; want one with the call and its %d events", len(sessions), len(tt.events))
			}
			if got := sessions[0].msgs[0].Note; got != tt.note {
				t.Errorf("the call's note is %q; want %q", got, tt.note)
			}
		})
	}
}
