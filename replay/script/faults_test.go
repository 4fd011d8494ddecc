package script_test

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"
)

// TestFaults_OverStdio: the faults reach the wire through the engine as
// scripted (fault: close has its own test below).
func TestFaults_OverStdio(t *testing.T) {
	srv := serve(t, "script-faults.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cw, cr, done := servePipes(ctx, srv)
	defer func() { cw.Close(); <-done }()
	lines := bufio.NewScanner(cr)
	tests := []struct {
		tool string
		want []string
	}{
		{"malformed", []string{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"t`}},
		{"duplicate", []string{`{"jsonrpc":"2.0","id":2,"result":{"content":[{"text":"twice","type":"text"}]}}`, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"text":"twice","type":"text"}]}}`}},
		{"wrong-id", []string{`{"jsonrpc":"2.0","id":"3-wrong","result":{"content":[{"text":"lost","type":"text"}]}}`}},
		{"unavailable", []string{`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"HTTP 503 Service Unavailable (fault http-503; this transport has no HTTP status)","data":{"httpStatus":503,"headers":{"Retry-After":"30"}}}}`}},
	}
	for i, tt := range tests {
		req := `{"jsonrpc":"2.0","id":` + string(rune('1'+i)) + `,"method":"tools/call","params":{"name":"` + tt.tool + `"}}` + "\n"
		if _, err := io.WriteString(cw, req); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !lines.Scan() {
				t.Fatalf("%s: stream ended: %v", tt.tool, lines.Err())
			}
			if got := lines.Text(); got != w {
				t.Errorf("%s:\n got %s\nwant %s", tt.tool, got, w)
			}
		}
	}
}

// TestFaults_CloseOverStdio: fault: close ends the session unanswered: the
// client reads end of stream, and the server returns. So does
// expire-session in the handshake era (these requests carry no
// 2026-07-28 _meta), as stdio has no session to expire but the
// connection: the client must start the server again.
//
// The client keeps its end open, and the server's stdin may be a pipe in
// blocking mode, whose read Close does not interrupt (os.Stdin usually
// is): the server must return all the same, or a host waits for an answer
// that never comes from a process that never ends.
func TestFaults_CloseOverStdio(t *testing.T) {
	for _, tool := range []string{"close", "expire"} {
		for _, stdin := range []string{"pipe", "blocking"} {
			t.Run(tool+"/"+stdin, func(t *testing.T) {
				closeOverStdio(t, tool, stdin == "blocking")
			})
		}
	}
}

// uninterruptible is a reader whose Close leaves a Read in progress
// blocked, as closing a blocking file descriptor does.
type uninterruptible struct{ io.Reader }

func (uninterruptible) Close() error { return nil }

func closeOverStdio(t *testing.T, tool string, blocking bool) {
	srv := serve(t, "script-faults.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	defer cw.Close()
	var in io.Reader = sr
	if blocking {
		in = uninterruptible{sr}
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, in, sw); sw.Close() }()
	if _, err := io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(cr); len(b) > 0 {
		t.Errorf("got %s, want the connection closed without an answer", b)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeStdio still running after fault: " + tool)
	}
}
