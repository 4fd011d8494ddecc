package script_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestDeterminism_Pipelined: a client that sends its requests without
// waiting gets the same bytes back on every run, answers in request order,
// and call counts follow arrival order (flaky's first call fails).
func TestDeterminism_Pipelined(t *testing.T) {
	var reqs []string
	reqs = append(reqs, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}`)
	for i := 2; i <= 9; i++ {
		switch i % 3 {
		case 0:
			reqs = append(reqs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"flaky","arguments":{}}}`, i))
		case 1:
			reqs = append(reqs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i))
		default:
			reqs = append(reqs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"lookup","arguments":{"id":1}}}`, i))
		}
	}
	input := strings.Join(reqs, "\n") + "\n"
	run := func() string {
		srv := serve(t, "script-match.yaml")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cr, sw := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- srv.ServeStdio(ctx, strings.NewReader(input), sw); sw.Close() }()
		out, err := io.ReadAll(cr)
		if err != nil {
			t.Fatal(err)
		}
		<-done
		return string(out)
	}
	first := run()
	lines := strings.Split(strings.TrimSpace(first), "\n")
	if len(lines) != len(reqs) {
		t.Fatalf("%d answers to %d requests:\n%s", len(lines), len(reqs), first)
	}
	for i, l := range lines {
		if want := fmt.Sprintf(`"id":%d,`, i+1); !strings.Contains(l, want) {
			t.Errorf("answer %d is not to request %d: %s", i+1, i+1, l)
		}
	}
	if !strings.Contains(lines[2], "backend unavailable (call 1)") {
		t.Errorf("flaky's first call (request 3) got %s", lines[2])
	}
	for range 15 {
		if again := run(); again != first {
			t.Fatalf("a second run differs:\n%s\n---\n%s", first, again)
		}
	}
}
