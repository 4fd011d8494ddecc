package store

import (
	"bytes"
	"os"
	"path/filepath"
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
	})
}
