package script_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTasks_FinishedResultInRequestOrder: tasks/result of a task that has
// ended takes no time, so pipelined with other requests it is answered in
// request order, as SCRIPTS.md's Determinism promises.
func TestTasks_FinishedResultInRequestOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cw, cr, done := servePipes(ctx, serve(t, "script-tasks.yaml"))
	defer func() { cw.Close(); cr.Close(); <-done }()
	lines := make(chan string)
	go func() { // read all the time: the server may write notifications
		defer close(lines)
		sc := bufio.NewScanner(cr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(cw, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// response waits for the next response and returns its id and line.
	response := func() (string, string) {
		t.Helper()
		for {
			var line string
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("the server said nothing more")
				}
				line = l
			case <-ctx.Done():
				t.Fatal("no response in time")
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			if id, ok := m["id"]; ok && m["method"] == nil {
				return string(id), line
			}
		}
	}
	send(initializeAs("2025-11-25"))
	response()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"convert","task":{}}}`)
	response()
	for id := 3; ; id++ { // poll until the task has ended
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":"task-1"}}`, id))
		if _, line := response(); strings.Contains(line, `"status":"completed"`) {
			break
		}
	}
	var batch, want, got []string
	for i := range 40 {
		id := 100 + i
		if i%2 == 0 {
			batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":"task-1"}}`, id))
		} else {
			batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		}
		want = append(want, fmt.Sprint(id))
	}
	send(strings.Join(batch, "\n"))
	for range want {
		id, line := response()
		if strings.Contains(line, `"error"`) {
			t.Errorf("response %s: %s", id, line)
		}
		got = append(got, id)
	}
	if !slices.Equal(got, want) {
		t.Errorf("answered in the order %v, want %v", got, want)
	}
}
