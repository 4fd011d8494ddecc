package inspector

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// pingSession is a session unlike sampleSession: two pings.
var pingSession = []frame{
	{store.C2S, 0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
	{store.S2C, time.Millisecond, `{"jsonrpc":"2.0","id":1,"result":{}}`},
}

// writeCassetteAt records one session that started at start into a new
// cassette at path.
func writeCassetteAt(tb testing.TB, path string, start time.Time, frames []frame) {
	tb.Helper()
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	recordSession(tb, w, "other", start, frames)
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestSource_PollNoticesReplacement: a follower's Poll tells a cassette
// that grew from another file put in its place, by the file and by the
// sessions, so that the two are never mixed.
func TestSource_PollNoticesReplacement(t *testing.T) {
	longer := append(append([]frame{}, sampleSession...), pingSession...)
	tests := []struct {
		name    string
		change  func(t *testing.T, path string)
		wantErr error // nil: the poll reads on
	}{
		{"a recorder adds a session", func(t *testing.T, path string) {
			w, s := liveSession(t, path, store.SessionInfo{Transport: store.TransportStdio, Start: t0.Add(time.Hour)})
			s.Append(store.C2S, t0.Add(time.Hour), []byte(pingSession[0].json), nil)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"copied over in place (same inode, another start)", func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "other.db")
			writeCassetteAt(t, other, t0.Add(time.Hour), longer)
			b, err := os.ReadFile(other)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o600); err != nil { // truncates: the inode stays
				t.Fatal(err)
			}
		}, ErrReplaced},
		{"renamed over it (same start, longer)", func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "other.db")
			writeCassetteAt(t, other, t0, longer)
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}, ErrReplaced},
		{"removed and recorded again (same start, shorter)", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			writeCassetteAt(t, path, t0, pingSession)
		}, ErrReplaced},
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, store.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeCassette(t, sampleSession)
			m, src := openModel(t, path)
			tt.change(t, path)
			b, err := src.Poll(m.FollowMark())
			switch {
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("Poll: %v, want %v", err, tt.wantErr)
			case tt.wantErr == nil && err != nil:
				t.Fatalf("Poll: %v", err)
			case tt.wantErr == nil && len(b.Msgs) != 1:
				t.Fatalf("Poll found %d new messages, want 1", len(b.Msgs))
			}
		})
	}
}

// TestView_FollowReloadsAReplacedCassette: in follow mode, another file
// put in the cassette's place is read again from the start, with no row
// of the old one left; and the status line's "does not exist" goes once
// a file is back.
func TestView_FollowReloadsAReplacedCassette(t *testing.T) {
	path := writeCassette(t, sampleSession)
	m, src := openModel(t, path)
	h := startApp(t, m, src, Options{Follow: true}, 220, 30)
	h.waitFor(wait, []string{"13/13", "● follow", "initialize"})

	// cp other.db path: the same inode, another cassette.
	other := filepath.Join(t.TempDir(), "other.db")
	writeCassetteAt(t, other, t0.Add(time.Hour), pingSession)
	b, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h.waitFor(wait, []string{"2/2", "replaced by another file; read it again", "ping", `"method": "ping"`}, "initialize", "13/13")
	if r := h.selected(); r.Seq != 1 || r.Method != "ping" {
		t.Errorf("selected %s #%d %s after the reload", r.Session, r.Seq, r.Method)
	}

	// rm, then a new recording at the same path.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	h.waitFor(wait, []string{"cassette does not exist"})
	writeCassetteAt(t, path, t0.Add(2*time.Hour), sampleSession)
	h.waitFor(wait, []string{"13/13", "initialize", "replaced by another file"}, "does not exist", "ping")
}
