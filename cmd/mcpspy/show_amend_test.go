package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// show --follow while a recorder, as mcpspy records Streamable HTTP,
// stores a client's POSTs, commits them, and only then stores the status
// of answers that carried no message: the 202 of a notification and a
// bare 404. show read the first versions before (it printed the line
// before them), and yet prints the lines with their status: --http shows
// the 202, and a status:404 filter finds the refusal.
func TestMcpspy_ShowFollowAmended(t *testing.T) {
	prev := showAmendGrace
	showAmendGrace = time.Hour // the amendment decides, not the clock
	t.Cleanup(func() { showAmendGrace = prev })
	for _, tc := range []struct {
		name string
		args []string
		want []string // in this order
	}{
		{"--http", []string{"--http"}, []string{"s1:1", "POST /mcp → 404", "s2:1", "POST /mcp → 202", "s2:2", "POST /mcp → 404", "session not found"}},
		{"status:404", []string{"--filter", "status:404"}, []string{"s1:1", "s2:2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, w := liveCassette(t)
			// s1 was refused and is over: its line comes first, at once.
			done := httpSession(t, w)
			done.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), postMeta(http.StatusNotFound))
			if err := done.End(store.EndInfo{Reason: store.EndClosed}); err != nil {
				t.Fatal(err)
			}
			live := httpSession(t, w)
			sent := []store.Message{
				{Dir: store.C2S, Time: time.Now(), Frame: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), HTTP: postMeta(0)},
				{Dir: store.C2S, Time: time.Now(), Frame: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), HTTP: postMeta(0)},
			}
			for i := range sent {
				sent[i].Seq = live.Append(sent[i].Dir, sent[i].Time, sent[i].Frame, sent[i].HTTP)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}

			show := startShow(t, append(append([]string{"--follow"}, tc.args...), db)...)
			show.wait(t, "s1:1", 1) // so it has read s2's POSTs as first stored
			sent[0].HTTP, sent[1].HTTP = postMeta(http.StatusAccepted), postMeta(http.StatusNotFound)
			sent[1].Note = "refused without a message: session not found"
			for _, m := range sent {
				live.Amend(m)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			show.wait(t, "s2:2", 1)
			out := show.stop(t)
			inOrder(t, out, tc.want)
			if lines := strings.Count(out, "\n"); tc.name == "status:404" && lines != 2 {
				t.Errorf("under status:404 want the two refusals alone, got %d lines:\n%s", lines, out)
			}
		})
	}
}

// The same against real peers: mcpspy records server-everything in
// another process while show --follow --http runs; the client's
// notifications/initialized, which the server accepts with a bare 202,
// is printed with that status. Whether the 202 lands in a later commit
// than the notification is up to timing here (mostly it is the same
// one), so this checks the whole path, and TestMcpspy_ShowFollowAmended
// pins the order that used to lose the status. show starts first, before
// the recorder has made the cassette, as a viewer often is: it waits.
func TestMcpspy_ShowFollowLiveRecorder202(t *testing.T) {
	prev := showAmendGrace
	showAmendGrace = time.Hour // the recorder's amendment decides, not the clock
	t.Cleanup(func() { showAmendGrace = prev })
	env, port := peertest.FreePortEnv(t)
	se := peertest.Start(t, peertest.NPMDir(t), []string{env}, nil, nil, peertest.ServerEverything(t, "streamableHttp")...)
	se.WaitLine(t, "MCP Streamable HTTP Server listening on port", 30*time.Second)
	cassette := filepath.Join(t.TempDir(), "live.db")
	show := startShow(t, "--follow", "--http", "--filter", "method:notifications/initialized", cassette)
	show.wait(t, "live.db does not exist yet; waiting for a recorder to create it", 1)
	spy := startSpy(t, "-o", cassette, "--upstream", fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	argv := peertest.NodeScript(t, "http-client.mjs", "streamable", spy.url+"/mcp", "echo", `{"message":"live"}`)
	client := exec.Command(argv[0], argv[1:]...)
	client.Dir = peertest.NPMDir(t)
	if b, err := client.CombinedOutput(); err != nil || !bytes.Contains(b, []byte("Echo: live")) {
		t.Fatalf("client: %v\n%s", err, b)
	}
	show.wait(t, "http: POST /mcp → 202", 1)
	out := show.stop(t)
	if err := spy.stop(t); err != nil {
		t.Fatalf("mcpspy exit: %v", err)
	}
	if !strings.Contains(out, "notifications/initialized\n    http: POST /mcp → 202") {
		t.Errorf("want the notification with its 202 under it:\n%s", out)
	}
}

// A status recorded after show --follow's grace (a gateway that refuses
// after a long wait) still reaches the output: with --http a line of its
// own names the message and gives the status and the note; under a filter
// on the status, the message's line comes then, late, rather than never.
func TestMcpspy_ShowFollowAmendedAfterGrace(t *testing.T) {
	prev := showAmendGrace
	showAmendGrace = 20 * time.Millisecond // released long before the status comes
	t.Cleanup(func() { showAmendGrace = prev })
	for _, tc := range []struct {
		name string
		args []string
		want []string // in this order
	}{
		{"--http", []string{"--http"}, []string{"s1:1", "POST /mcp  stream post-body", "s2:1", "http: s1:1: POST /mcp → 504", "(recorded after its line)", "note: refused without a message: gateway timeout"}},
		{"status:504", []string{"--filter", "status:504"}, []string{"s2:1", "s1:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, w := liveCassette(t)
			live := httpSession(t, w)
			call := store.Message{Dir: store.C2S, Time: time.Now(), Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`), HTTP: postMeta(0)}
			call.Seq = live.Append(call.Dir, call.Time, call.Frame, call.HTTP)
			// A later refusal, whole, in a session that is over: its line
			// comes only once the call's line is released.
			done := httpSession(t, w)
			done.Append(store.C2S, time.Now().Add(time.Millisecond), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), postMeta(http.StatusGatewayTimeout))
			if err := done.End(store.EndInfo{Reason: store.EndClosed}); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}

			show := startShow(t, append(append([]string{"--follow"}, tc.args...), db)...)
			show.wait(t, "s2:1", 1) // so the call was released without its status
			call.HTTP, call.Note = postMeta(http.StatusGatewayTimeout), "refused without a message: gateway timeout"
			live.Amend(call)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			show.wait(t, tc.want[len(tc.want)-1], 1)
			out := show.stop(t)
			inOrder(t, out, tc.want)
		})
	}
}

// liveCassette is a cassette being recorded, as show --follow meets it.
func liveCassette(t *testing.T) (string, *store.Writer) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "live.db")
	w, err := store.NewWriter(db, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return db, w
}

// httpSession starts a Streamable HTTP session in w.
func httpSession(t *testing.T, w *store.Writer) *store.Session {
	t.Helper()
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportHTTP, Upstream: "http://127.0.0.1:1/mcp", Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// postMeta is a client message's POST, with the status of an answer
// that carried no message (0: none yet).
func postMeta(status int) *store.HTTPMeta {
	return &store.HTTPMeta{Method: "POST", Path: "/mcp", Status: status, Stream: store.StreamPostBody}
}

// inOrder fails the test unless out holds each of wants, in this order.
func inOrder(t *testing.T, out string, wants []string) {
	t.Helper()
	at := 0
	for _, want := range wants {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("want %q after %q:\n%s", want, out[:at], out)
		}
		at += i + len(want)
	}
}
