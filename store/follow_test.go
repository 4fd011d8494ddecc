package store_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcptape/mcptape/store"
)

// rangeRead is what the inspector's reads of seqs [from, to] saw: seq and
// method per summary, seq and frame per frame.
func rangeRead(t *testing.T, path string, from, to uint64) (summaries, frames []string) {
	t.Helper()
	err := store.View(path, func(r *store.Reader) error {
		if err := r.RawSummaries("s1", from, to, func(s *store.RawSummary) error {
			summaries = append(summaries, fmt.Sprintf("%d %s", s.Seq, s.Method))
			return nil
		}); err != nil {
			return err
		}
		return r.Frames("s1", from, to, func(seq uint64, f []byte) error {
			frames = append(frames, fmt.Sprintf("%d %s", seq, f))
			return nil
		})
	})
	if err != nil {
		t.Fatalf("reading %s seqs [%d, %d]: %v", path, from, to, err)
	}
	return summaries, frames
}

// TestReader_FollowRanges: RawSummaries and Frames give exactly the seqs
// in [from, to] (to 0: all from on), so a follower that asks from the last
// seq it saw plus one gets only the messages recorded since.
func TestReader_FollowRanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w := newWriter(t, path)
	s, _ := w.NewSession(store.SessionInfo{Transport: store.TransportStdio})
	frame := func(seq int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m%d"}`, seq, seq) }
	record := func(first, last int) {
		t.Helper()
		for seq := first; seq <= last; seq++ {
			s.Append(store.C2S, time.Now(), []byte(frame(seq)), nil)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(from, to uint64, first, last int) {
		t.Helper()
		var wantSummaries, wantFrames []string
		for seq := first; seq <= last; seq++ {
			wantSummaries = append(wantSummaries, fmt.Sprintf("%d m%d", seq, seq))
			wantFrames = append(wantFrames, fmt.Sprintf("%d %s", seq, frame(seq)))
		}
		summaries, frames := rangeRead(t, path, from, to)
		if d := cmp.Diff(wantSummaries, summaries); d != "" {
			t.Errorf("RawSummaries(s1, %d, %d) (-want +got):\n%s", from, to, d)
		}
		if d := cmp.Diff(wantFrames, frames); d != "" {
			t.Errorf("Frames(s1, %d, %d) (-want +got):\n%s", from, to, d)
		}
	}
	record(1, 5)
	check(2, 4, 2, 4)
	check(5, 5, 5, 5)
	check(1, 0, 1, 5)
	check(6, 0, 1, 0) // nothing new yet
	record(6, 7)
	check(6, 0, 6, 7) // what a follower that saw 1..5 asks for next
}
