package recorder_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mcptape/mcptape/internal/peertest"
)

// The TypeScript SDK's WebSocket client (the ws library underneath) sees
// its server drop the connection through mcpspy just as it sees it
// directly: a message, then the close, and no error. (Through a proxy
// that sent close code 1006, which RFC 6455 reserves, ws reported
// "Invalid WebSocket frame: invalid status code 1006".)
func TestWSProxy_TSClientSeesADropAsDirect(t *testing.T) {
	// The upstream reads the client's one message, then drops the
	// connection: no close frame, and nothing unread (so a FIN, not a
	// reset).
	read := make(chan string, 2)
	upgrader := websocket.Upgrader{Subprotocols: []string{"mcp"}}
	up := "ws" + strings.TrimPrefix(serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		_, data, err := c.ReadMessage()
		if err != nil {
			data = []byte(err.Error())
		}
		read <- string(data)
		c.NetConn().Close()
	})), "http")
	transcript := func(url string) []string {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		argv := peertest.NodeScript(t, "ws-drop-client.mjs", url)
		out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
		var seen []string
		if err != nil || json.Unmarshal(out, &seen) != nil {
			t.Fatalf("ws-drop-client.mjs %s: %v, printed %q", url, err, out)
		}
		if got := <-read; got != `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
			t.Fatalf("the upstream read %q", got)
		}
		return seen
	}
	direct := transcript(up)
	if want := []string{"close"}; !slices.Equal(direct, want) {
		t.Fatalf("directly, the client saw %q; want %q (has the ws library changed?)", direct, want)
	}
	px, _, stop := startWSProxy(t, up)
	defer stop()
	if proxied := transcript(px); !slices.Equal(proxied, direct) {
		t.Errorf("through mcpspy the client saw %q; directly %q", proxied, direct)
	}
}
