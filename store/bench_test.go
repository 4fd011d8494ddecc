package store_test

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// BenchmarkWriter_Record1KiB is the sustained recording rate: 1 KiB
// messages appended as fast as possible, committed by the group-commit
// goroutine (with fsync, as mcpspy runs). Target: ≥ 100k messages/s.
func BenchmarkWriter_Record1KiB(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("fsync=%v", sync), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.db")
			w, err := store.NewWriter(path, store.WriterOptions{NoSync: !sync})
			if err != nil {
				b.Fatal(err)
			}
			s, err := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
			if err != nil {
				b.Fatal(err)
			}
			pad := strings.Repeat("x", 1024-70)
			b.SetBytes(1024)
			b.ResetTimer()
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/message","params":{"d":"%s"}}`, pad)
				s.Append(store.Dir(i&1), time.Now(), frame, nil)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

// pipeReader hands over at most 64 KiB a read, as a pipe does.
type pipeReader struct{ r io.Reader }

func (p pipeReader) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), 64<<10)]) }

// BenchmarkReadJSONL_LongLineFromPipe reads an export whose one frame is
// 16 MiB long, a pipe's piece at a time: the reader once looked for the
// line's end through all of it again at each piece.
func BenchmarkReadJSONL_LongLineFromPipe(b *testing.B) {
	const hdr = `{"session":"s1","info":{"transport":"stdio","upstream":"","start":"2026-01-01T00:00:00Z"}}` + "\n"
	text := []byte(hdr + `{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z","raw":"` + strings.Repeat("x", 16<<20) + `"}` + "\n")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := store.ReadJSONL(pipeReader{bytes.NewReader(text)}, "long.jsonl"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteJSONL_BigFrame exports a tape whose one frame is a
// 16 MiB tools/call: the export checks each frame is JSON before it
// writes it as a message.
func BenchmarkWriteJSONL_BigFrame(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"blob":"` +
		strings.Repeat("A", 16<<20) + `"}}}`)
	tape := &store.Tape{Sessions: []store.TapeSession{{
		Info:     store.SessionInfo{ID: "s1", Transport: store.TransportStdio},
		Messages: []*store.Message{{Session: "s1", Seq: 1, Dir: store.C2S, Time: time.Unix(0, 0), Frame: frame}},
	}}}
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if err := store.WriteJSONL(io.Discard, tape); err != nil {
			b.Fatal(err)
		}
	}
}
