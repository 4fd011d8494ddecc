package store

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// FuzzReadJSONL: no JSONL file, however broken, panics the importer; one
// that reads writes back out as text that reads to the same sessions and
// messages (the bbolt side of import is covered by the store tests; a
// cassette per input would make this target a thousand times slower).
func FuzzReadJSONL(f *testing.F) {
	_, file, _, _ := runtime.Caller(0)
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "cassettes", "everything-stdio.jsonl")); err == nil {
		lines := bytes.SplitAfter(b, []byte("\n"))
		f.Add(bytes.Join(lines[:min(len(lines), 6)], nil))
	}
	f.Add([]byte(`{"session":"s1","info":{"transport":"stdio","upstream":"x","start":"2026-01-01T00:00:00Z"}}` + "\n" +
		`{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00.000000001Z","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
		`{"session":"s1","seq":2,"dir":"s2c","time":"2026-01-01T00:00:00.000000002Z","raw":"not json\r"}` + "\n"))
	f.Add([]byte(`{"session":"s1","seq":1,"dir":"c2s","time":"x","message":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tape, err := ReadJSONL(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			if tape != nil {
				t.Fatal("an error and a tape")
			}
			return
		}
		var out bytes.Buffer
		if err := WriteJSONL(&out, tape); err != nil {
			t.Fatalf("writing a tape that was read: %v", err)
		}
		back, err := ReadJSONL(&out, "export.jsonl")
		if err != nil {
			t.Fatalf("re-reading our own export: %v\n%s", err, out.Bytes())
		}
		if len(back.Sessions) != len(tape.Sessions) {
			t.Fatalf("%d sessions exported, %d imported", len(back.Sessions), len(tape.Sessions))
		}
		for i := range back.Sessions {
			if a, b := len(back.Sessions[i].Messages), len(tape.Sessions[i].Messages); a != b {
				t.Fatalf("session %d: %d messages exported, %d imported", i, a, b)
			}
		}
	})
}

// FuzzExportTime: exportTime's quick path reads exactly what time.Parse
// reads from the decoded string, and fails where it fails.
func FuzzExportTime(f *testing.F) {
	for _, s := range []string{
		"2026-11-21T10:00:00.123456789Z", "2026-02-29T00:00:00.000000000Z", "2024-02-29T23:59:59.999999999Z",
		"2026-13-01T00:00:00.000000000Z", "2026-01-01T24:00:00.000000000Z", "2026-01-01T00:00:60.000000000Z",
		"0000-01-01T00:00:00.000000000Z", "2026-01-01T00:00:00.1Z", "2026-01-01T00:00:00+01:00", "x",
		"2026-01-01T00:00:00.00000000\u0030Z", "2026-01-01T00:00:00.000000000\u005a",
	} {
		f.Add([]byte(`"` + s + `"`))
	}
	f.Add([]byte(`null`))
	f.Add([]byte(`12`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := exportTime(raw)
		s, _ := jsonrpc.String(raw)
		want, wantErr := time.Parse(time.RFC3339Nano, s)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("exportTime(%q): error %v, time.Parse: %v", raw, err, wantErr)
		}
		if err == nil && got.UTC() != want.UTC() {
			t.Fatalf("exportTime(%q) = %v, time.Parse: %v", raw, got, want)
		}
		// A line reader reads it the same, first or after a time of the
		// same second (which it reads from the second before).
		r := newLineReader()
		var same []byte
		if len(raw) == 32 {
			same = append(append(append([]byte(nil), raw[:21]...), "123456789"...), raw[30:]...)
		}
		for _, before := range [][]byte{nil, raw, same} {
			if before != nil {
				_, _ = r.time(before)
			}
			rgot, rerr := r.time(raw)
			// Not ==: two parses of one offset ("+00:01") make two
			// locations. The same instant and the same text are the same.
			if (rerr == nil) != (err == nil) || (err != nil && rerr.Error() != err.Error()) ||
				!rgot.Equal(got) || rgot.Format(time.RFC3339Nano) != got.Format(time.RFC3339Nano) {
				t.Fatalf("after %q, the line reader reads %q as %v, %v; exportTime %v, %v", before, raw, rgot, rerr, got, err)
			}
		}
	})
}

// FuzzQuickLine: a line the quick reader takes, the full one reads the
// same, without an error.
func FuzzQuickLine(f *testing.F) {
	for _, s := range []string{
		`{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00.000000001Z","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n",
		`{"session":"s1","seq":12,"dir":"s2c","time":"2026-01-01T00:00:00.000000001Z","message":{"jsonrpc":"2.0","id":1,"result":{}}}` + "\r\n",
		`{"session":"s\u0031","seq":1,"dir":"c2s","time":"x","message":{}}`,
		`{"session":"s1","seq":01,"dir":"c2s","time":"x","message":{}}`,
		`{"session":"s1","seq":1,"dir":"c2s","time":1,"message":{}}`,
		`{"session":"s1","seq":1,"dir":"c2s","time":"x","message":{},"note":"n"}`,
		`{"session":"s1","seq":1,"dir":"c2s","time":"x","message":{}} x`,
		`{"session":"\xff","seq":18446744073709551615,"dir":"s2c","time":"","message":{"id":[1,{"a":"\u0000"}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r := newLineReader()
		var quick messageLine
		if !r.quick(&quick, line) {
			return
		}
		var full messageLine
		if err := newLineReader().parse(&full, line); err != nil {
			t.Fatalf("quick read %q, the full reader says %v", line, err)
		}
		if !reflect.DeepEqual(quick, full) {
			t.Fatalf("%q: quick read %+v, the full reader %+v", line, quick, full)
		}
	})
}

// TestQuickLine_Exports: the quick reader takes the message lines exports
// write for stdio frames, and leaves the others to the full one.
func TestQuickLine_Exports(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := TapeSession{Info: SessionInfo{ID: "s1", Transport: TransportStdio, Start: t0}}
	for i, frame := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`, "not json\r", `{"jsonrpc":"2.0","method":"x"}`} {
		s.Messages = append(s.Messages, &Message{Session: "s1", Seq: uint64(i + 1), Dir: Dir(i % 2), Time: t0.Add(time.Duration(i)), Frame: []byte(frame)})
	}
	s.Messages[3].Note = "a note"
	var out bytes.Buffer
	if err := WriteJSONL(&out, &Tape{Sessions: []TapeSession{s}}); err != nil {
		t.Fatal(err)
	}
	want := []bool{false, true, true, false, false} // header, 2 quick, raw, note
	for k, line := range bytes.SplitAfter(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
		var l messageLine
		if got := newLineReader().quick(&l, line); got != want[k] {
			t.Errorf("line %d %s: quick = %v", k+1, line, got)
		}
	}
}
