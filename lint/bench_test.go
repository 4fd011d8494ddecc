package lint

import (
	"fmt"
	"testing"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// BenchmarkSession lints a 100,000-message session of tools/call round
// trips with progress, and reports messages per second beside what
// classifying the same frames alone (jsonrpc.Classify, which every reader
// of a cassette pays) manages: lint's cost as a multiple of the floor.
//
//	go test -run '^$' -bench Session -benchtime 5x ./lint
func BenchmarkSession(b *testing.B) {
	lines := opened()
	for i := 1; len(lines) < 100_000; i++ {
		lines = append(lines,
			fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello %d"},"_meta":{"progressToken":%d}}}`, i, i, i),
			fmt.Sprintf(`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,"progress":1,"total":1}}`, i),
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"hello %d"}]}}`, i, i))
	}
	s := session(lines...)
	b.ResetTimer()
	var classify, check float64
	for range b.N {
		t0 := b.Elapsed()
		for _, m := range s.Messages {
			_ = jsonrpc.Classify(m.Frame)
		}
		t1 := b.Elapsed()
		if fs := Session(s, Options{}); len(fs) != 0 {
			b.Fatalf("findings in clean traffic: %v", fs[0])
		}
		classify += (t1 - t0).Seconds()
		check += (b.Elapsed() - t1).Seconds()
	}
	n := float64(len(s.Messages) * b.N)
	b.ReportMetric(n/check, "msgs/s")
	b.ReportMetric(n/classify, "classify_msgs/s")
	b.ReportMetric(check/classify, "x_classify")
}
