package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/store"
)

// A process killed while it creates a cassette leaves either no file or a
// whole cassette, never a bbolt file without the cassette's buckets that
// every reader would refuse as foreign. The test binary, run again as a
// child, creates cassettes in a loop; each run kills it just as the k-th
// file appears, which is inside the creation when the file is created in
// place.
func TestInit_KilledWhileCreating(t *testing.T) {
	if dir := os.Getenv("MCPTAPE_INIT_LOOP_DIR"); dir != "" {
		for i := 1; ; i++ {
			if err := store.Init(filepath.Join(dir, fmt.Sprintf("c%03d.db", i))); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
	for run := range 20 {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestInit_KilledWhileCreating$")
		cmd.Env = append(os.Environ(), "MCPTAPE_INIT_LOOP_DIR="+dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		k := 1 + rand.IntN(20)
		target := filepath.Join(dir, fmt.Sprintf("c%03d.db", k))
		for deadline := time.Now().Add(30 * time.Second); ; {
			if _, err := os.Stat(target); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("run %d: %s did not appear within 30s\n%s", run, target, stderr.String())
			}
			time.Sleep(20 * time.Microsecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
		files, err := filepath.Glob(filepath.Join(dir, "*.db"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) < k {
			t.Fatalf("run %d: %d cassettes, want at least %d", run, len(files), k)
		}
		for _, f := range files {
			if err := store.Check(f); err != nil {
				t.Fatalf("run %d, killed as cassette %d appeared: %v", run, k, err)
			}
		}
	}
}

// A Writer's sessions may be ended after the Writer is closed (a proxy
// connection that closes late). That must not open the cassette again:
// it would create a new one where the old was removed.
func TestWriter_ClosedWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"late"}`), nil)
	if err := s.End(store.EndInfo{Reason: store.EndClosed}); !errors.Is(err, store.ErrWriterClosed) {
		t.Fatalf("End after Close: %v, want ErrWriterClosed", err)
	}
	if _, err := w.NewSession(store.SessionInfo{}); !errors.Is(err, store.ErrWriterClosed) {
		t.Fatalf("NewSession after Close: %v, want ErrWriterClosed", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the removed cassette is back after Close: %v", err)
	}
}

// A cassette removed while a recorder is running is made anew, whole, at
// the next commit: the recorder says so once, and the new file holds the
// sessions' infos, so that the messages recorded after the removal keep
// their session. bbolt alone would create a bare file there, and a
// session with no end would have no info at all.
func TestWriter_CassetteRemovedWhileRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	var log syncbuf.Buffer
	w, err := store.NewWriter(path, store.WriterOptions{NoSync: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio, Upstream: "the-server"})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"before"}`), nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// The writer may still hold the removed file open; what it commits
	// there is gone. Once it lets go, the next commit makes the new one.
	for deadline := time.Now().Add(10 * time.Second); ; {
		s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","method":"after"}`), nil)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no cassette at the path 10 s after it was removed")
		}
		time.Sleep(10 * time.Millisecond) // the lease is let go when idle
	}
	s.Append(store.S2C, time.Now(), []byte(`{"jsonrpc":"2.0","method":"last"}`), nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "was removed while recording"); n != 1 {
		t.Errorf("told %d times of the removal, want once: %q", n, log.String())
	}
	if st, err := os.Stat(path); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o600 {
		t.Errorf("the new cassette's mode is %v, want 0600", st.Mode().Perm())
	}
	err = store.View(path, func(r *store.Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		if len(infos) != 1 || infos[0].ID != s.ID() || infos[0].Upstream != "the-server" {
			t.Errorf("sessions in the new cassette: %+v, want %s with its info", infos, s.ID())
		}
		var last string
		err = r.Messages(s.ID(), 1, func(m *store.Message) error { last = string(m.Frame); return nil })
		if !strings.Contains(last, `"last"`) {
			t.Errorf("last message %q, want the one recorded after the removal", last)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A cassette nothing is recorded into keeps its bytes and its mtime: a
// commit of nothing rewrites a meta page and the freelist, and a golden
// cassette in git would show as changed after every replay that opened it
// to write (mcpmock's fallback does, in case the server is asked).
func TestInit_ExistingCassetteUntouched(t *testing.T) {
	tests := []struct {
		name    string
		use     func(t *testing.T, path string) error
		changes bool
	}{
		{"init", func(_ *testing.T, path string) error { return store.Init(path) }, false},
		{"writer that records nothing", func(_ *testing.T, path string) error {
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
			if err != nil {
				return err
			}
			return w.Close()
		}, false},
		// The control: what records does change the file.
		{"writer that records a session", func(_ *testing.T, path string) error {
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
			if err != nil {
				return err
			}
			if _, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio}); err != nil {
				w.Close()
				return err
			}
			return w.Close()
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
			if err != nil {
				t.Fatal(err)
			}
			s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), nil)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}

			if err := tt.use(t, path); err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			changed := !bytes.Equal(before, after) || !st.ModTime().Equal(old)
			if changed != tt.changes {
				t.Errorf("changed %v (mtime %v, was %v), want %v", changed, st.ModTime(), old, tt.changes)
			}
		})
	}
}

// With CreateLate a missing cassette is made by the first commit that
// stores something, whole and 0600 as Init makes it; a writer that
// records nothing leaves no file, not even a temporary one. A directory
// it could not be made in still fails NewWriter.
func TestWriter_CreateLate(t *testing.T) {
	tests := []struct {
		name    string
		record  bool
		want    bool // a cassette at the path
		missing bool // its directory does not exist
	}{
		{name: "records nothing", record: false, want: false},
		{name: "records a session", record: true, want: true},
		{name: "in a missing directory", missing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.missing {
				dir = filepath.Join(dir, "missing")
			}
			path := filepath.Join(dir, "c.db")
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: true, CreateLate: true})
			if tt.missing {
				want := "create cassette " + path + ": create a file in " + dir + ": no such file or directory"
				if err == nil || err.Error() != want {
					t.Errorf("error %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("after NewWriter the directory holds %v, want nothing yet", entries)
			}
			var id string
			if tt.record {
				s, err := w.StartSession(store.SessionInfo{Transport: store.TransportStdio})
				if err != nil {
					t.Fatal(err)
				}
				s.Append(store.C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), nil)
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				id = s.ID()
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want {
				if len(entries) != 0 {
					t.Errorf("the directory holds %v, want nothing", entries)
				}
				return
			}
			if len(entries) != 1 || entries[0].Name() != "c.db" {
				t.Fatalf("the directory holds %v, want c.db alone", entries)
			}
			if st, err := os.Stat(path); err != nil {
				t.Fatal(err)
			} else if st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", st.Mode().Perm())
			}
			err = store.View(path, func(r *store.Reader) error {
				infos, err := r.Sessions()
				if len(infos) != 1 || infos[0].ID != id || r.LastSeq(id) != 1 {
					t.Errorf("sessions %+v, want %s with its message", infos, id)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
