package inspector

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/store"
)

// followedText is WriteText following a cassette in the background.
type followedText struct {
	out    syncbuf.Buffer
	cancel context.CancelFunc
	done   chan error
}

func followText(t *testing.T, m *Model, src Source, opts TextOptions) *followedText {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &followedText{cancel: cancel, done: make(chan error, 1)}
	opts.Follow, opts.PollInterval = true, 5*time.Millisecond
	go func() {
		_, err := m.WriteText(ctx, &f.out, src, opts)
		f.done <- err
	}()
	t.Cleanup(func() { f.stop(t) })
	return f
}

// wait polls the output until it holds want, for up to wait.
func (f *followedText) wait(t *testing.T, want string) string {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !strings.Contains(f.out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %s; output so far:\n%s", want, wait, f.out.String())
		}
		time.Sleep(5 * time.Millisecond) // polling the output, with a deadline
	}
	return f.out.String()
}

// stop ends WriteText, as Ctrl-C ends show, and returns what it printed.
func (f *followedText) stop(t *testing.T) string {
	t.Helper()
	f.cancel()
	select {
	case err, ok := <-f.done:
		if ok && err != nil {
			t.Errorf("WriteText: %v", err)
		}
		if ok {
			close(f.done)
		}
	case <-time.After(wait):
		t.Fatal("WriteText did not stop when its context ended")
	}
	return f.out.String()
}

// TestWriteText_FollowAmended: show --follow prints a client's HTTP
// message read before the recorder stored its answer's status only once
// that status is known, so the line printed is the final one: --http
// shows the 202 of a notification, a status:404 filter catches a
// refusal, lint's finding about it comes under its line, and the lines
// after it wait, so that the order holds.
func TestWriteText_FollowAmended(t *testing.T) {
	for _, tc := range []struct {
		name   string
		filter string
		opts   TextOptions
		want   []string // after the first line, in this order, each once
	}{
		{"202 under --http", "", TextOptions{HTTP: true},
			[]string{"notifications/initialized", "http: POST /mcp → 202  stream post-body", "tools/call echo", "http: POST /mcp → 404  stream post-body", "http: POST /mcp  stream post-body", "http: POST /mcp → 200"}},
		{"refusal under status:404", "status:404", TextOptions{}, []string{"tools/call echo"}},
		{"lint under its line", "", TextOptions{Lint: true},
			[]string{"tools/call echo\n    lint: warning: the POST of tools/call was answered 404"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, m, src := threePosts(t, tc.filter, true)
			tc.opts.AmendGrace = time.Hour // the amendment decides, not the clock
			show := followText(t, m, src, tc.opts)
			// The refusal's body is printed at once: the follower has
			// read the POSTs after it, as first stored, by then.
			first := strings.Index(show.wait(t, "\n"), "\n") + 1
			h.answer(t, 2, http.StatusAccepted, "")
			h.answer(t, 3, http.StatusNotFound, "")
			h.flush(t)
			// Answer the ping with a message: it is final then, and the
			// last line.
			h.s.Append(store.S2C, time.Now(), []byte(`{"jsonrpc":"2.0","id":3,"result":{}}`), &store.HTTPMeta{Method: "POST", Path: "/mcp", Status: 200, Stream: store.StreamJSON})
			h.flush(t)
			if tc.filter == "" {
				show.wait(t, " resp ")
			} else {
				show.wait(t, tc.want[len(tc.want)-1])
			}
			out := show.stop(t)
			at := first
			for _, w := range tc.want {
				i := strings.Index(out[at:], w)
				if i < 0 || strings.Count(out, w) != 1 {
					t.Fatalf("want %q once, after %q:\n%s", w, out[:at], out)
				}
				at += i + len(w)
			}
			if tc.opts.Lint && strings.Count(out, "answered 404") != 1 {
				t.Errorf("want the refusal's finding once, under its line:\n%s", out)
			}
			if tc.filter != "" && strings.Count(out, "\n") != 2 {
				t.Errorf("under %s, want the two refusals alone:\n%s", tc.filter, out)
			}
		})
	}
}

// A message whose status never comes is printed once the grace has
// passed (here at once), as it stands; one still held when show stops
// is printed too; a session that has ended holds nothing back.
func TestWriteText_FollowGrace(t *testing.T) {
	t.Run("grace passes", func(t *testing.T) {
		_, m, src := threePosts(t, "", false)
		show := followText(t, m, src, TextOptions{HTTP: true, AmendGrace: time.Nanosecond})
		out := show.wait(t, "ping")
		if strings.Contains(out, "POST /mcp →") {
			t.Errorf("printed a status no one recorded:\n%s", out)
		}
	})
	t.Run("printed on stop", func(t *testing.T) {
		_, m, src := threePosts(t, "", false)
		show := followText(t, m, src, TextOptions{AmendGrace: time.Hour})
		out := show.stop(t)
		if strings.Count(out, "\n") != 3 {
			t.Errorf("on stop, want the three held messages printed as they stand:\n%s", out)
		}
	})
	t.Run("session ended", func(t *testing.T) {
		h, m, src := threePosts(t, "", false)
		show := followText(t, m, src, TextOptions{AmendGrace: time.Hour})
		if err := h.s.End(store.EndInfo{Reason: store.EndClosed}); err != nil {
			t.Fatal(err)
		}
		show.wait(t, "ping")
	})
	t.Run("answered by a message", func(t *testing.T) {
		h := newHTTPLive(t)
		h.post(callJSON)
		h.flush(t)
		m, src := openModel(t, h.path)
		show := followText(t, m, src, TextOptions{AmendGrace: time.Hour})
		h.s.Append(store.S2C, time.Now(), []byte(`{"jsonrpc":"2.0","id":2,"result":{}}`), &store.HTTPMeta{Method: "POST", Path: "/mcp", Status: http.StatusOK, Stream: store.StreamJSON})
		h.flush(t)
		show.wait(t, " resp ")
	})
}

// TestWriteText_FollowNamesSessions: show --follow names each message
// one way from its first line to its last, so that a name copied from a
// line finds that message later: with its session ("s1:2") when every
// session is shown, as another may start at any moment, from the first
// line on, not only once a second session has; by its seq alone when
// --session named the one session shown, which a session started later
// does not join.
func TestWriteText_FollowNamesSessions(t *testing.T) {
	initJSON := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	listJSON := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, tc := range []struct {
		name    string
		session string // --session, "" for none
		want    []string
	}{
		{"every session", "", []string{"s1:1 initialize", "s1:2 ping", "s1:3 tools/list", "s2:1 initialize", "s2:2 ping", "s3:1 ping"}},
		{"--session s1", "s1", []string{"1 initialize", "2 ping", "3 tools/list"}},
		// A host that starts its server again records a new session
		// under the same name: following the name follows it too.
		{"--session srv, a name", "srv", []string{"s1:1 initialize", "s1:2 ping", "s1:3 tools/list", "s2:1 initialize", "s2:2 ping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "live.db")
			w, s1 := liveSession(t, path, store.SessionInfo{Transport: store.TransportStdio, Name: "srv", Upstream: "one", Start: time.Now()})
			s1.Append(store.C2S, time.Now(), []byte(initJSON), nil)
			s1.Append(store.C2S, time.Now(), []byte(pingJSON), nil)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			m, src := openModel(t, path)
			if tc.session != "" { // as mcpspy show --follow --session does
				if err := m.SetScope(0, src); err != nil {
					t.Fatal(err)
				}
				m.ScopeNamesGrow([]string{tc.session})
			}
			show := followText(t, m, src, TextOptions{})
			show.wait(t, "ping")
			// A second session of the same name, and a third of another,
			// start while show runs.
			s2, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Name: "srv", Upstream: "two", Start: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			s3, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Name: "other", Upstream: "three", Start: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			s2.Append(store.C2S, time.Now(), []byte(initJSON), nil)
			s1.Append(store.C2S, time.Now(), []byte(listJSON), nil)
			s3.Append(store.C2S, time.Now(), []byte(pingJSON), nil)
			s2.Append(store.C2S, time.Now(), []byte(pingJSON), nil)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			show.wait(t, "tools/list")
			switch tc.session {
			case "":
				show.wait(t, "s2:2 ")
				show.wait(t, "s3:1 ")
			case "srv":
				show.wait(t, "s2:2 ")
			}
			var got []string
			for line := range strings.Lines(show.stop(t)) {
				f := strings.Fields(line)
				got = append(got, f[0]+" "+f[len(f)-1])
			}
			// Which session's messages come first when two record at
			// once is the writer's and the poll's affair, not this test's.
			slices.Sort(got)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("lines as seq and method, sorted (-want +got):\n%s", d)
			}
		})
	}
}
