package faults_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// SIGKILL mcpspy at random points of a recording, many times: every
// cassette opens, every session is a gap-free prefix of what the server
// sent, and nothing the client had received more than 100 ms before the
// kill is missing. The release binary is used: the 100 ms bound is the
// product's, not the race detector's.
func TestKill_RandomPoints(t *testing.T) {
	runs := pick(10, 100)
	const total = 20000 // about 1 s of stream: 1 ms pause every 20 messages
	bin := peertest.ReleaseBinary(t, "mcpspy")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d, %d runs", seed, runs)
	for i := range runs {
		// The first run is killed before the client sees anything;
		// the others at a random message.
		killAt := 0
		if i > 0 {
			killAt = 1 + rng.IntN(total-1)
		}
		t.Run(fmt.Sprintf("run%03d_at%d", i, killAt), func(t *testing.T) {
			killOnce(t, bin, total, killAt)
		})
	}
}

func killOnce(t *testing.T, bin string, total, killAt int) {
	db := filepath.Join(t.TempDir(), "killed.db")
	s := startStdioSpy(t, bin, db, "MCPTAPE_FAKE_SERVER=flood",
		fmt.Sprintf("MCPTAPE_FLOOD_N=%d", total), "MCPTAPE_FLOOD_BURST=20")
	seenAt := make([]time.Time, 0, killAt)
	for len(seenAt) < killAt {
		if _, err := s.out.ReadSlice('\n'); err != nil {
			t.Fatalf("after %d lines: %v\n%s", len(seenAt), err, s.Stderr())
		}
		seenAt = append(seenAt, time.Now())
	}
	killedAt := time.Now()
	if err := s.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitExit(t, s.Cmd.Process.Pid)

	tape, err := store.Load(db)
	if killAt == 0 && errors.Is(err, store.ErrNotFound) {
		return // killed before it created the file: nothing to open
	}
	if err != nil {
		t.Fatalf("cassette does not open after SIGKILL at message %d: %v", killAt, err)
	}
	if len(tape.Sessions) > 1 {
		t.Fatalf("%d sessions, want at most 1", len(tape.Sessions))
	}
	var msgs []*store.Message
	if len(tape.Sessions) == 1 {
		msgs = tape.Sessions[0].Messages
	}
	for i, m := range msgs {
		var v struct {
			Params struct{ Data struct{ N int } }
		}
		if err := json.Unmarshal(m.Frame, &v); err != nil || v.Params.Data.N != i+1 || m.Seq != uint64(i+1) || m.Dir != store.S2C {
			t.Fatalf("message %d is not the server's frame %d (seq %d, n %d, dir %s, %v): not a gap-free prefix", i, i+1, m.Seq, v.Params.Data.N, m.Dir, err)
		}
	}
	mustHave := 0
	for _, at := range seenAt {
		if killedAt.Sub(at) > 100*time.Millisecond {
			mustHave++
		}
	}
	if len(msgs) < mustHave {
		t.Errorf("cassette holds %d messages; the client had %d of them more than 100 ms before SIGKILL", len(msgs), mustHave)
	}
	t.Logf("client saw %d, cassette holds %d, %d were older than 100 ms", len(seenAt), len(msgs), mustHave)
}
