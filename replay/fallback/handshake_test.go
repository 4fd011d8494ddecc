package fallback_test

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/fallback"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// TestFallback_HandshakeNotifications: server-everything sends
// notifications/tools/list_changed right after initialized. When it is
// the fallback behind a recording, the initialized is mcpmock's own, sent
// on the first request the recording lacks; the live client's handshake
// was answered from the recording, which replayed its own list_changed.
// So the server's is not passed on: the client did nothing to cause it,
// and a host that refetches the tool list on it would do so mid-session
// for nothing. What a request passed on causes still reaches the client:
// the log message toggle-simulated-logging sends at once. With nothing
// recorded, the client's own handshake goes to the server, and the
// list_changed that follows it reaches the client, as from the server
// itself.
func TestFallback_HandshakeNotifications(t *testing.T) {
	tests := []struct {
		name     string
		recorded bool // a cassette before the fallback
	}{
		{name: "behind a recording", recorded: true},
		{name: "nothing recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log syncbuf.Buffer
			opts := fallback.Options{Command: peertest.ServerEverything(t, "stdio"), Stderr: io.Discard, Log: &log}
			var sources []replay.Source
			if tt.recorded {
				opts.Record = copyCassette(t, "everything-stdio.db")
				sources = append(sources, mocktest.LoadCassette(t, opts.Record))
			}
			fb := newFallback(t, opts)
			srv := mocktest.New(t, append(sources, fb))
			c := dialLines(t, srv)
			c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`)
			c.until(`"id":1,`)
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			// Not recorded: server-everything answers it.
			c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}`)
			c.until("The sum of 1 and 2 is 3.")
			c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"toggle-simulated-logging","arguments":{}}}`)
			c.until(`"id":3,`, `"method":"notifications/message"`)
			const held = "notifications/tools/list_changed, which "
			if !tt.recorded {
				c.until(`"method":"notifications/tools/list_changed"`)
				if strings.Contains(log.String(), held) {
					t.Errorf("stderr says a notification was held back:\n%s", log.String())
				}
				return
			}
			for _, l := range c.seen {
				if strings.Contains(l, "list_changed") {
					t.Errorf("the client was sent the fallback server's %s\nmcpmock sent:\n%s", l, strings.Join(c.seen, "\n"))
				}
			}
			if want := held + fb.Target() + " sent in answer to mcpmock's own handshake, is not passed on"; !strings.Contains(log.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, log.String())
			}
		})
	}
}

// lines is a client of mcpmock's stdio that keeps what it was sent.
type lines struct {
	t    *testing.T
	in   io.WriteCloser
	out  chan string
	seen []string
}

func dialLines(t *testing.T, srv *mocktest.Server) *lines {
	t.Helper()
	in, out := srv.Pipes()
	c := &lines{t: t, in: in, out: make(chan string, 100)}
	go func() { // the pipes are synchronous: read while writing
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.out <- sc.Text()
		}
		close(c.out)
	}()
	t.Cleanup(func() { in.Close() })
	return c
}

func (c *lines) send(l string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, l+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// until reads what mcpmock sends until each of want has come.
func (c *lines) until(want ...string) {
	c.t.Helper()
	deadline := time.After(45 * time.Second)
	for _, w := range want {
		for !strings.Contains(strings.Join(c.seen, "\n"), w) {
			select {
			case l, ok := <-c.out:
				if !ok {
					c.t.Fatalf("mcpmock closed stdout; it sent:\n%s", strings.Join(c.seen, "\n"))
				}
				c.seen = append(c.seen, l)
			case <-deadline:
				c.t.Fatalf("no %s within 45 s; mcpmock sent:\n%s", w, strings.Join(c.seen, "\n"))
			}
		}
	}
}
