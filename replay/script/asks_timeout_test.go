package script_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/replay"
)

// TestAsks_TimeoutCancelsTheQuestion: a client that never answers the
// tool's question is told that mcpmock gave up on it (the spec asks a
// sender that stops waiting to send notifications/cancelled), and the
// call gets the answer for no reply.
func TestAsks_TimeoutCancelsTheQuestion(t *testing.T) {
	srv := serveWith(t, "script-elicit.yaml", replay.Options{CallTimeout: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cw, cr, done := servePipes(ctx, srv)
	lines := bufio.NewScanner(cr)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(cw, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("the server said nothing more: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"mute","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"service":"api"}}}`)
	ask := recv()
	if ask["method"] != "elicitation/create" {
		t.Fatalf("first %v, want the question", ask)
	}
	cancelled := recv()
	params, _ := cancelled["params"].(map[string]any)
	if cancelled["method"] != "notifications/cancelled" || params["requestId"] != ask["id"] || !strings.Contains(fmt.Sprint(params["reason"]), "--call-timeout") {
		t.Errorf("after the timeout %v, want notifications/cancelled of request %v", cancelled, ask["id"])
	}
	answer := recv()
	if answer["id"] != 2.0 || !strings.Contains(fmt.Sprint(answer["result"]), "no answer") {
		t.Errorf("the call's answer %v, want the one for no reply", answer)
	}
	cw.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
}
