package recorder_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/mcptape/mcptape/internal/syncbuf"
	"github.com/mcptape/mcptape/recorder"
	"github.com/mcptape/mcptape/store"
)

// A Child's lines go both ways through the recorder: cat, as a server,
// prints back what it is sent; Close ends it by closing its stdin, after
// every line it printed has been received; a Send after that fails.
func TestChild_SendReceiveClose(t *testing.T) {
	var tap memTap
	got := make(chan string, 4)
	child, err := recorder.StartChild(context.Background(), recorder.StdioProxy{Command: []string{"cat"}, Stderr: &syncbuf.Buffer{}, Tap: &tap, Grace: time.Second},
		func(line []byte) { got <- string(line) })
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		if err := child.Send([]byte(f)); err != nil {
			t.Fatal(err)
		}
		select {
		case line := <-got:
			if line != f {
				t.Errorf("received %q, want %q", line, f)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never came back", f)
		}
	}
	end := child.Close()
	if end.Reason != store.EndEOF || end.ExitCode == nil || *end.ExitCode != 0 {
		t.Errorf("end %+v, want EOF and exit code 0", end)
	}
	if n := tap.count(); n != 4 {
		t.Errorf("%d frames recorded, want 4 (two each way)", n)
	}
	if err := child.Send([]byte(`{}`)); err == nil {
		t.Error("Send after Close succeeded")
	}
	if _, runErr := child.Result(); runErr != nil {
		t.Errorf("Result error %v", runErr)
	}
}

// The line a Child's receiver gets is the one the recorder read and
// tapped, not a copy of it read back through a pipe: a long line is held
// once, not once for the Tap and again, with its pieces, for the receiver.
func TestChild_ReceivesTheTappedLine(t *testing.T) {
	tap := &keepTap{}
	child, got := startCat(t, tap)
	const f = `{"jsonrpc":"2.0","id":1,"result":{}}`
	if err := child.Send([]byte(f)); err != nil {
		t.Fatal(err)
	}
	var line []byte
	select {
	case line = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the line never came back")
	}
	tapped := tap.frame(store.S2C)
	if string(line) != f || string(tapped) != f {
		t.Fatalf("received %q, tapped %q; want %q for both", line, tapped, f)
	}
	if unsafe.SliceData(line) != unsafe.SliceData(tapped) {
		t.Error("the receiver got a copy of the tapped line, want the same bytes")
	}
}

// startCat starts cat as a Child's server, which prints back what it is
// sent, recording into tap: got receives each line it prints. The Child
// is closed when the test ends.
func startCat(t *testing.T, tap recorder.Tap) (child *recorder.Child, got <-chan []byte) {
	t.Helper()
	lines := make(chan []byte, 1)
	child, err := recorder.StartChild(context.Background(), recorder.StdioProxy{Command: []string{"cat"}, Stderr: &syncbuf.Buffer{}, Tap: tap, Grace: time.Second},
		func(line []byte) { lines <- line })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Close() })
	return child, lines
}

// keepTap keeps the last frame tapped in each direction.
type keepTap struct {
	mu   sync.Mutex
	last map[store.Dir][]byte
}

func (k *keepTap) Append(dir store.Dir, _ time.Time, frame []byte, _ *store.HTTPMeta) uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.last == nil {
		k.last = map[store.Dir][]byte{}
	}
	k.last[dir] = frame
	return 0
}

func (k *keepTap) frame(dir store.Dir) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.last[dir]
}

func TestChild_MissingCommand(t *testing.T) {
	_, err := recorder.StartChild(context.Background(), recorder.StdioProxy{Command: []string{"/no/such/mcp-server"}, Tap: &memTap{}}, func([]byte) {})
	var execErr *exec.Error
	if !errors.As(err, &execErr) || execErr.Name != "/no/such/mcp-server" {
		t.Fatalf("err %v, want exec's error naming the command", err)
	}
}

// memTap counts the frames it is handed and keeps their sizes.
type memTap struct {
	mu    sync.Mutex
	n     int
	sizes map[store.Dir][]int
}

func (m *memTap) Append(dir store.Dir, _ time.Time, frame []byte, _ *store.HTTPMeta) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	if m.sizes == nil {
		m.sizes = map[store.Dir][]int{}
	}
	m.sizes[dir] = append(m.sizes[dir], len(frame))
	return uint64(m.n)
}

// sizesOf are the sizes of the frames recorded in direction dir.
func (m *memTap) sizesOf(dir store.Dir) []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.sizes[dir]...)
}

func (m *memTap) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// The frame a Child sends is the one its Tap records, not a copy made to
// add the newline and read back from a pipe: a long request is held once,
// by its sender and the Tap.
func TestChild_TapsTheSentFrame(t *testing.T) {
	tap := &keepTap{}
	child, got := startCat(t, tap)
	f := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if err := child.Send(f); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-got:
		if string(line) != string(f) {
			t.Fatalf("the server got %q, want %q", line, f)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the line never came back")
	}
	if tapped := tap.frame(store.C2S); unsafe.SliceData(tapped) != unsafe.SliceData(f) || len(tapped) != len(f) {
		t.Errorf("tapped %q at %p, want the frame sent, %q at %p", tapped, unsafe.SliceData(tapped), f, unsafe.SliceData(f))
	}
}

// Frames sent from many goroutines at once reach the server as whole
// lines, each its own: a frame and its newline, written apart, are never
// split by another frame.
func TestChild_ConcurrentSendsStayWhole(t *testing.T) {
	const senders, each = 8, 50
	var tap memTap
	got := make(chan string, senders*each)
	child, err := recorder.StartChild(context.Background(), recorder.StdioProxy{Command: []string{"cat"}, Stderr: &syncbuf.Buffer{}, Tap: &tap, Grace: time.Second},
		func(line []byte) { got <- string(line) })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	var frames [senders][]string
	for s := range senders {
		for i := range each {
			// Longer than a pipe's buffer now and then, so that writes
			// are partial and would interleave if two went at once.
			pad := strings.Repeat("x", (i%5)*40000)
			f := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%d-%d","method":"ping","params":{"pad":"%s"}}`, s, i, pad)
			frames[s] = append(frames[s], f)
			want[f] = true
		}
	}
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, f := range frames[s] {
				if err := child.Send([]byte(f)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for range senders * each {
		select {
		case line := <-got:
			if !want[line] {
				t.Fatalf("the server got a line that was not sent whole: %.120q…", line)
			}
			delete(want, line)
		case <-time.After(10 * time.Second):
			t.Fatalf("%d lines never came back", len(want))
		}
	}
	child.Close()
}

// A Send after the server exited on its own fails, and does not wait for
// a Close.
func TestChild_SendAfterExitFails(t *testing.T) {
	child, err := recorder.StartChild(context.Background(), recorder.StdioProxy{Command: []string{"sh", "-c", "exit 3"}, Stderr: &syncbuf.Buffer{}, Tap: &memTap{}, Grace: time.Second},
		func([]byte) {})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	<-child.Exited()
	errc := make(chan error, 1)
	go func() { errc <- child.Send([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)) }()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("Send to a server that exited succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Send to a server that exited is still waiting")
	}
}

// Close ends a server that reads nothing while a frame to it is still
// being written: its stdin is closed, which ends the write, and it is
// stopped in steps.
func TestChild_CloseWhileSendBlocks(t *testing.T) {
	tap := &memTap{}
	child, err := recorder.StartChild(context.Background(), recorder.StdioProxy{Command: []string{"sleep", "60"}, Stderr: &syncbuf.Buffer{}, Tap: tap, Grace: 100 * time.Millisecond},
		func([]byte) {})
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() { sent <- child.Send(make([]byte, 4<<20)) }() // more than a pipe holds
	// Tapped, it is being written (or about to be).
	for deadline := time.Now().Add(10 * time.Second); tap.count() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the frame was never tapped")
		}
	}
	closed := make(chan store.EndInfo, 1)
	go func() { closed <- child.Close() }()
	select {
	case end := <-closed:
		if end.Reason != store.EndEOF || end.Signal == "" {
			t.Errorf("end %+v, want EOF, and the server stopped by a signal", end)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close is still waiting for a write the server never reads")
	}
	if err := <-sent; err == nil {
		t.Error("the Send the server never read succeeded")
	}
}
