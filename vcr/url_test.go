package vcr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
	"github.com/mcptape/mcptape/vcr"
)

// A test that connects its host to URL() passes in every mode: URL()
// used to fail the test while a stdio server was recorded, so a test that
// replayed in CI failed under MCPTAPE_VCR=record. Recorded over HTTP, the
// go-sdk server (in both protocol eras) gives the cassette Transport()
// records: the same sessions, named after the test, with the same
// messages. The HTTP server and every run of the command are stopped
// when the test ends, and the cassette replays over either way in.
func TestNew_URLWhileRecording(t *testing.T) {
	goServer := peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")
	for _, era := range []struct{ name, version string }{
		{"stateless", ""},           // go-sdk's client opens with server/discover
		{"handshake", "2025-11-25"}, // initialize, and an HTTP session
	} {
		t.Run(era.name, func(t *testing.T) {
			t.Setenv(vcr.EnvMode, "")
			dir := t.TempDir()
			pids := filepath.Join(dir, "pids")
			// The shell's pid is the server's: it execs it.
			command := []string{"sh", "-c", `echo $$ >>"$0" && exec "$1"`, pids, goServer}
			echo := func(t *testing.T, tr mcp.Transport) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: era.version})
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer cs.Close()
				h := &host{ctx: ctx, cs: cs}
				if got := h.call(t, "echo", map[string]any{"text": "hi"}); got != "hi" {
					t.Errorf("echo answered %q", got)
				}
			}

			viaPipes := filepath.Join(dir, "pipes.db")
			t.Run("recorded with Transport", func(t *testing.T) {
				echo(t, vcr.New(t, viaPipes, command).Transport())
			})
			viaURL := filepath.Join(dir, "url.db")
			var endpoint, recordedBy string
			t.Run("recorded with URL", func(t *testing.T) {
				t.Setenv(vcr.EnvMode, "record")
				srv := vcr.New(t, viaURL, command, vcr.WithMode(vcr.ReplayOnly))
				if !srv.Recording() {
					t.Fatal("MCPTAPE_VCR=record, but not recording")
				}
				endpoint, recordedBy = srv.URL(), t.Name()
				if !strings.HasPrefix(endpoint, "http://127.0.0.1:") || !strings.HasSuffix(endpoint, "/mcp") {
					t.Errorf("URL %s: want mcpmock's endpoint on 127.0.0.1", endpoint)
				}
				if again := srv.URL(); again != endpoint {
					t.Errorf("URL gave %s, then %s: one HTTP server per Server", endpoint, again)
				}
				echo(t, &mcp.StreamableClientTransport{Endpoint: srv.URL()})
				if calls := srv.ToolCalls("echo"); len(calls) != 1 || string(calls[0]) != `{"text":"hi"}` {
					t.Errorf("ToolCalls(echo) = %s", calls)
				}
			})
			if t.Failed() {
				t.FailNow()
			}
			if resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{}`)); err == nil {
				resp.Body.Close()
				t.Errorf("%s still answers after the test ended (%s)", endpoint, resp.Status)
			}
			b, err := os.ReadFile(pids)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Fields(string(b)) {
				if pid, _ := strconv.Atoi(line); alive(pid) {
					t.Errorf("the server (pid %d) outlived the test", pid)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*recording*")); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
			want := strings.Join(sessionsOf(t, viaPipes, "TestNew_URLWhileRecording/"+era.name+"/recorded_with_Transport"), "")
			if got := strings.Join(sessionsOf(t, viaURL, recordedBy), ""); got != want {
				t.Errorf("recorded over HTTP:\n%s\nwith Transport:\n%s", got, want)
			}

			for _, path := range []string{viaPipes, viaURL} {
				for _, overHTTP := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s replayed over HTTP %v", filepath.Base(path), overHTTP), func(t *testing.T) {
						srv := vcr.New(t, path, []string{filepath.Join(dir, "no-such-server")}, vcr.WithMode(vcr.ReplayOnly))
						tr := srv.Transport()
						if overHTTP {
							tr = &mcp.StreamableClientTransport{Endpoint: srv.URL()}
						}
						echo(t, tr)
						srv.Mock().AssertAllUsed()
					})
				}
			}
		})
	}
}

// sessionsOf reads the cassette at path, one text per session: what a
// recording keeps of the session, and its messages with their ids left
// out (a fallback gives a server ids of its own). name is the test the
// sessions are to be named after.
func sessionsOf(t *testing.T, path, name string) []string {
	t.Helper()
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range tape.Sessions {
		i := s.Info
		hs, _ := json.Marshal(i.Handshake)
		var b strings.Builder
		fmt.Fprintf(&b, "session named after the test %v, %s %q, recorder %q, ended %v\nhandshake %s\n",
			i.Name == name, i.Transport, i.Upstream, i.Recorder, i.End != nil, hs)
		for _, m := range s.Messages {
			var v map[string]any
			if err := json.Unmarshal(m.Frame, &v); err != nil {
				t.Fatalf("%s: %v", m.Frame, err)
			}
			delete(v, "id")
			f, _ := json.Marshal(v)
			fmt.Fprintf(&b, "%s %s\n", m.Dir, f)
		}
		out = append(out, b.String())
	}
	return out
}

// One recording with a session over pipes and one over HTTP keeps both,
// in one cassette, and Received tells them apart in the order they came.
func TestNew_URLAndTransportWhileRecording(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	path := filepath.Join(t.TempDir(), "both.db")
	server := []string{peertest.BinaryPkg(t, "gosdkserver", "./internal/peertest/gosdkserver")}
	t.Run("recorded", func(t *testing.T) {
		srv := vcr.New(t, path, server)
		if got := connectHost(t, srv, nil).call(t, "echo", map[string]any{"text": "pipes"}); got != "pipes" {
			t.Errorf("echo answered %q", got)
		}
		if got := connectHost(t, srv, &mcp.StreamableClientTransport{Endpoint: srv.URL()}).call(t, "echo", map[string]any{"text": "http"}); got != "http" {
			t.Errorf("echo answered %q", got)
		}
		var calls []string
		for _, r := range srv.Received() {
			var p struct {
				Arguments struct{ Text string }
			}
			if r.Method == "tools/call" && json.Unmarshal(r.Params, &p) == nil {
				calls = append(calls, fmt.Sprintf("session %d: %s", r.Session, p.Arguments.Text))
			}
		}
		if want := []string{"session 1: pipes", "session 2: http"}; !slices.Equal(calls, want) {
			t.Errorf("Received tools/call: %q, want %q", calls, want)
		}
	})
	tape, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range tape.Sessions {
		for _, m := range s.Messages {
			for _, text := range []string{`"pipes"`, `"http"`} {
				if m.Dir == store.C2S && strings.Contains(string(m.Frame), text) {
					texts = append(texts, s.Info.ID+" "+text)
				}
			}
		}
	}
	if len(texts) != 2 || strings.Fields(texts[0])[0] == strings.Fields(texts[1])[0] {
		t.Errorf("calls recorded: %q, want one in each of two sessions", texts)
	}
}

// A stdio server that answers nothing over HTTP either leaves no
// cassette, and the log says why.
func TestNew_URLServerAnsweredNothing(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	dir := t.TempDir()
	f := runFake(t, func(tb *fakeTB) {
		srv := vcr.New(tb, filepath.Join(dir, "crash.db"), []string{"sh", "-c", "echo 'fatal: API_KEY not set' >&2; exit 3"})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL()}, nil); err == nil {
			tb.Errorf("the host connected to a server that exited")
		}
	})
	if f.Failed() {
		t.Fatalf("the test failed:\n%s", f.log())
	}
	for _, w := range []string{"the server did not answer", "exit code 3", "vcr: the server answered nothing, so", "fatal: API_KEY not set"} {
		if !strings.Contains(f.log(), w) {
			t.Errorf("log lacks %q:\n%s", w, f.log())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("files left in the cassette's directory: %v", entries)
	}
}

// URL of a replay whose mocktest.Server has closed fails the test, as
// mocktest's own URL does, rather than hand back the URL it gave before,
// at which nothing listens any more.
func TestNew_URLAfterReplayClosed(t *testing.T) {
	t.Setenv(vcr.EnvMode, "")
	f := runFake(t, func(tb *fakeTB) {
		srv := vcr.New(tb, filepath.Join("..", "cassettes", "everything-stdio.db"), nil)
		if srv.URL() == "" {
			tb.Errorf("no URL while the replay runs")
		}
		srv.Mock().Close()
		srv.URL()
	})
	if want := "mocktest: URL called after Close: the server has stopped and would answer nothing"; f.log() != want {
		t.Errorf("URL after the replay closed: log %q, want %q", f.log(), want)
	}
}
