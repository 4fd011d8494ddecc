package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// damagedCassette is a cassette with one session, "s1": seq 1 a small
// request with HTTP metadata, seq 2 a frame large enough to be stored in
// three chunks. damage then changes the file's bytes in place, as a disk
// fault or a careless tool would.
func damagedCassette(t *testing.T, damage func(tx *bolt.Tx) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.db")
	w, err := NewWriter(path, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSession(SessionInfo{Transport: TransportHTTP, Start: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), &HTTPMeta{Method: "POST", Path: "/mcp", Status: 200})
	big := append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"`), bytes.Repeat([]byte("x"), 2*chunkSize+10)...), `"}}`...)
	s.Append(S2C, time.Now(), big, nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if damage != nil {
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(damage); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// sessionBucket is the session bucket s1 under top.
func sessionBucket(tx *bolt.Tx, top []byte) *bolt.Bucket { return tx.Bucket(top).Bucket([]byte("s1")) }

// A damaged cassette gives an error that says it is damaged and where (the
// session, the seq), never a panic or a frame that is not what was
// recorded; asking for what is not there says so.
func TestReader_DamagedCassette(t *testing.T) {
	var noSummary = func(*Summary) error { return nil }
	var noMessage = func(*Message) error { return nil }
	tests := []struct {
		name    string
		damage  func(tx *bolt.Tx) error
		read    func(r *Reader) error
		corrupt bool   // errors.Is ErrCorrupt
		want    string // in the error
	}{
		{"session info not JSON, listing",
			func(tx *bolt.Tx) error { return tx.Bucket(bucketSessions).Put([]byte("s1"), []byte("{not json")) },
			func(r *Reader) error { _, err := r.Sessions(); return err },
			true, `session "s1"`},
		{"session info not JSON, by id",
			func(tx *bolt.Tx) error { return tx.Bucket(bucketSessions).Put([]byte("s1"), []byte("{not json")) },
			func(r *Reader) error { _, err := r.Session("s1"); return err },
			true, `session "s1"`},
		{"record truncated, listing",
			func(tx *bolt.Tx) error {
				return sessionBucket(tx, bucketMessages).Put(seqKey(1), []byte{codecVersion, 0})
			},
			func(r *Reader) error { return r.Messages("s1", 1, noMessage) },
			true, "session s1 seq 1: truncated record"},
		{"record's metadata not JSON",
			func(tx *bolt.Tx) error {
				rec := append([]byte{codecVersion, 0}, make([]byte, 8)...)
				rec = append(rec, 3, '{', 'x', '}', 0, '{', '}')
				return sessionBucket(tx, bucketMessages).Put(seqKey(1), rec)
			},
			func(r *Reader) error { _, err := r.Message("s1", 1); return err },
			true, "session s1 seq 1: metadata:"},
		{"summary truncated",
			func(tx *bolt.Tx) error { return sessionBucket(tx, bucketIndex).Put(seqKey(1), []byte{codecVersion}) },
			func(r *Reader) error { return r.Summaries("s1", 1, nil, noSummary) },
			true, "session s1 seq 1: truncated record"},
		{"a chunk of a large frame missing",
			func(tx *bolt.Tx) error { return sessionBucket(tx, bucketBlobs).Delete(chunkKey(2, 1)) },
			func(r *Reader) error { _, err := r.Message("s1", 2); return err },
			true, "session s1 seq 2: chunk 1 of a"},
		{"a chunk of a large frame too long",
			func(tx *bolt.Tx) error {
				return sessionBucket(tx, bucketBlobs).Put(chunkKey(2, 2), bytes.Repeat([]byte("y"), 100))
			},
			func(r *Reader) error { return r.Messages("s1", 2, noMessage) },
			true, "session s1 seq 2: chunks hold"},
		{"record truncated, the inspector's frames",
			func(tx *bolt.Tx) error {
				return sessionBucket(tx, bucketMessages).Put(seqKey(1), []byte{codecVersion, 0})
			},
			func(r *Reader) error { return r.Frames("s1", 1, 0, func(uint64, []byte) error { return nil }) },
			true, "session s1 seq 1: truncated record"},
		{"a chunk missing, the inspector's frames",
			func(tx *bolt.Tx) error { return sessionBucket(tx, bucketBlobs).Delete(chunkKey(2, 0)) },
			func(r *Reader) error { return r.Frames("s1", 2, 2, func(uint64, []byte) error { return nil }) },
			true, "session s1 seq 2: chunk 0 of a"},
		{"summary truncated, the inspector's list",
			func(tx *bolt.Tx) error { return sessionBucket(tx, bucketIndex).Put(seqKey(1), []byte{codecVersion}) },
			func(r *Reader) error { return r.RawSummaries("s1", 1, 0, func(*RawSummary) error { return nil }) },
			true, "session s1 seq 1: truncated record"},
		{"format version not a number",
			func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyVersion, []byte("two")) },
			func(r *Reader) error { return nil },
			true, `bad format version "two"`},
		{"no such session", nil,
			func(r *Reader) error { _, err := r.Session("s9"); return err },
			false, `no such session "s9"`},
		{"no such message", nil,
			func(r *Reader) error { _, err := r.Message("s1", 99); return err },
			false, "session s1 has no message 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := damagedCassette(t, tt.damage)
			err := View(path, tt.read)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want one naming %s and %q", err, path, tt.want)
			}
			if errors.Is(err, ErrCorrupt) != tt.corrupt {
				t.Errorf("errors.Is(%v, ErrCorrupt) = %v, want %v", err, !tt.corrupt, tt.corrupt)
			}
		})
	}
}

// The undamaged cassette reads back whole: the damage above, not the
// cassette, is what the errors are about.
func TestReader_UndamagedCassette(t *testing.T) {
	path := damagedCassette(t, nil)
	tape, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	msgs := tape.Sessions[0].Messages
	if len(msgs) != 2 || msgs[0].HTTP == nil || msgs[0].HTTP.Path != "/mcp" || len(msgs[1].Frame) != 2*chunkSize+10+len(`{"jsonrpc":"2.0","id":1,"result":{"text":""}}`) {
		t.Errorf("read back %d messages", len(msgs))
	}
}

// A file whose bbolt meta pages are both damaged is reported as a damaged
// cassette, not as a foreign file or a bare bbolt error.
func TestOpen_DamagedMetaPages(t *testing.T) {
	path := damagedCassette(t, nil)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int64(os.Getpagesize())
	// The meta's txid, inside what its checksum covers, in pages 0 and 1.
	for _, off := range []int64{64, pageSize + 64} {
		if _, err := f.WriteAt([]byte{0xff, 0xfe}, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	err = View(path, func(*Reader) error { return nil })
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want %v naming %s", err, ErrCorrupt, path)
	}
}

// markedTape is sessions s1..s3 of n messages each; every frame holds a
// marker ("@s2#0150@") found nowhere else, so a test can tell which
// messages a page of the file holds.
func markedTape(n int) *Tape {
	t := &Tape{}
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for s := 1; s <= 3; s++ {
		id := "s" + strconv.Itoa(s)
		ts := TapeSession{Info: SessionInfo{ID: id, Transport: TransportStdio, Upstream: "server", Start: start.Add(time.Duration(s) * time.Second)}}
		for q := 1; q <= n; q++ {
			frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"@%s#%04d@ %s"}}}`, q, id, q, strings.Repeat("x", 120))
			ts.Messages = append(ts.Messages, &Message{Session: id, Seq: uint64(q), Dir: Dir(q % 2), Time: ts.Info.Start.Add(time.Duration(q) * time.Millisecond), Frame: []byte(frame)})
		}
		t.Sessions = append(t.Sessions, ts)
	}
	return t
}

// importTape writes t into a new cassette in one transaction, so each
// record is in the file once (no older copy of its page lies about).
func importTape(t *testing.T, tape *Tape) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.db")
	if _, err := Import(path, tape); err != nil {
		t.Fatal(err)
	}
	return path
}

// A cassette cut short (a copy or download that stopped) is reported as
// such by every read and write, never a crash: bbolt maps the length its
// meta page expects, and reading a page past the end of the file is a
// memory fault.
func TestCassette_Truncated(t *testing.T) {
	path := truncatedCassette(t)
	checks := []struct {
		name string
		do   func() error
		want string
	}{
		{"view", func() error { return View(path, func(*Reader) error { return nil }) }, "truncated: the file is"},
		{"export", func() error { return Export(path, new(bytes.Buffer), nil) }, "truncated: the file is"},
		{"load", func() error { _, err := Load(path); return err }, "truncated: the file is"},
		{"a writer", func() error { _, err := NewWriter(path, WriterOptions{NoSync: true}); return err }, "truncated: the file is"},
		{"import", func() error { _, err := Import(path, markedTape(1)); return err }, "truncated: the file is"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %v, want %v naming %s and saying %q", err, ErrCorrupt, path, c.want)
			}
		})
	}
}

// truncatedCassette is a cassette of three sessions cut to 60% of the
// pages it uses.
func truncatedCassette(t *testing.T) string {
	t.Helper()
	path := importTape(t, markedTape(400))
	var used int64 // the file is grown ahead of use; cut what is used
	if err := View(path, func(r *Reader) error { used = r.tx.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, used*6/10); err != nil {
		t.Fatal(err)
	}
	return path
}

// A chunked frame whose size was damaged into something huge is an error
// once its chunks run out, and is not allocated up front: 8 GiB asked for
// by a few damaged bytes must not be 8 GiB taken.
func TestReader_DamagedChunkedSizeIsNotAllocated(t *testing.T) {
	const claimed = 8 << 30
	path := damagedCassette(t, func(tx *bolt.Tx) error {
		rec := append([]byte{chunkedVersion, byte(S2C)}, make([]byte, 8)...)
		rec = append(rec, 0, 0) // no metadata, no note
		rec = binary.AppendUvarint(rec, claimed)
		return sessionBucket(tx, bucketMessages).Put(seqKey(2), rec)
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := View(path, func(r *Reader) error { _, err := r.Message("s1", 2); return err })
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "chunk 3 of a 8589934592-byte frame is missing") {
		t.Errorf("error %v, want the missing chunk named", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<30 {
		t.Errorf("reading it allocated %d MiB", got>>20)
	}
}
