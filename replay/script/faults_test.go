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
		{"wrong-id", []string{`{"jsonrpc":"2.0","id":"3","result":{"content":[{"text":"lost","type":"text"}]}}`}},
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
// expire-session, as stdio has no session to expire but the connection:
// the client must start the server again.
func TestFaults_CloseOverStdio(t *testing.T) {
	for _, tool := range []string{"close", "expire"} {
		t.Run(tool, func(t *testing.T) {
			srv := serve(t, "script-faults.yaml")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cw, cr, done := servePipes(ctx, srv)
			defer cw.Close()
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
		})
	}
}
