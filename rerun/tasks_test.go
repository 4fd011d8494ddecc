package rerun_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/rerun"
	"github.com/mcptape/mcptape/store"
)

// TestRun_Tasks: a recording of the TypeScript SDK client calling
// server-everything's simulate-research-query as a task (tasks-client.mjs
// eager: one tasks/get, then tasks/result, tasks/get, tasks/list), made
// through mcpspy, rerun against a fresh server-everything. That server
// makes task ids of its own; the rerun names them in its tasks/get and
// tasks/result in place of the recorded ones, so each is answered, not
// refused as an unknown task, and the result is the recorded one.
func TestRun_Tasks(t *testing.T) {
	spy := peertest.Binary(t, "mcpspy")
	db := filepath.Join(t.TempDir(), "tasks.db")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	argv := peertest.NodeScript(t, "tasks-client.mjs", append([]string{"eager", "stdio", spy, "record", "-o", db, "--"}, peertest.ServerEverything(t, "stdio")...)...)
	if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("recording: %v\n%s", err, out)
	}
	tape, err := store.Load(db)
	if err != nil {
		t.Fatal(err)
	}
	recorded := &tape.Sessions[0]
	res := runOK(t, recorded, rerun.Options{Command: peertest.ServerEverything(t, "stdio"), Timeout: 30 * time.Second})
	if len(res.Unanswered) > 0 {
		t.Errorf("unanswered: %q", res.Unanswered)
	}
	// The live ids differ from the recorded ones (server-everything makes
	// random ones), and every tasks/* request named a live one.
	created, named := map[string]bool{}, 0
	var result string
	for _, m := range res.Session.Messages {
		sum := jsonrpc.Classify(m.Frame)
		switch {
		case m.Dir == store.S2C && strings.Contains(string(m.Frame), `"task":{"taskId"`):
			for id := range strings.SplitSeq(string(m.Frame), `"taskId":"`) {
				if i := strings.IndexByte(id, '"'); i > 0 && !strings.HasPrefix(id, "{") {
					created[id[:i]] = true
					break
				}
			}
		case m.Dir == store.C2S && strings.HasPrefix(sum.Method, "tasks/") && sum.Method != "tasks/list":
			named++
			ok := false
			for id := range created {
				ok = ok || strings.Contains(string(m.Frame), `"taskId":"`+id+`"`)
			}
			if !ok {
				t.Errorf("seq %d %s names no task the live server created (%v): %s", m.Seq, sum.Method, created, m.Frame)
			}
		case m.Dir == store.S2C && sum.Kind == jsonrpc.Error:
			t.Errorf("seq %d: the live server refused: %s", m.Seq, m.Frame)
		case m.Dir == store.S2C && strings.Contains(string(m.Frame), "Research Report"):
			result = string(m.Frame)
		}
	}
	for id := range created {
		if strings.Contains(string(firstFrameWith(recorded, `"task":{"taskId"`)), id) {
			t.Errorf("the live server gave the recorded task id %s again: the test shows nothing", id)
		}
	}
	if len(created) == 0 || named == 0 || !strings.Contains(result, "magnetic tape") {
		t.Errorf("created %v, %d requests named a task, result %.80q", created, named, result)
	}
	// Compared, the two runs' requests line up, tasks named by their
	// order: none stands on one side only.
	for _, d := range replay.CompareSessions(recorded, &res.Session) {
		if d.Op == replay.OnlyInA || d.Op == replay.OnlyInB {
			t.Errorf("compared with the recording: %s", d)
		}
	}
}

// firstFrameWith is the first recorded frame that contains s.
func firstFrameWith(s *store.TapeSession, sub string) []byte {
	for _, m := range s.Messages {
		if strings.Contains(string(m.Frame), sub) {
			return m.Frame
		}
	}
	return nil
}
