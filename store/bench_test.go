package store_test

import (
	"fmt"
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
