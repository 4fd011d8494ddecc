package cli

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/syncbuf"
)

// The first SIGINT cancels the command's context, for it to end in good
// order; a second ends the process at once, saying so, with 130 as a
// shell gives for SIGINT. (The signals go to this test's own process,
// which the watch catches, as it does mcpspy's.)
func TestInterruptible_SecondSignalExits(t *testing.T) {
	var stderr syncbuf.Buffer
	exited := make(chan int, 1)
	ctx, stop := interruptible("mcpspy", &stderr, func(code int) { exited <- code })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first SIGINT did not cancel the context")
	}
	select {
	case code := <-exited:
		t.Fatalf("the first SIGINT exited (%d)", code)
	default:
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		if code != 130 {
			t.Errorf("exit %d, want 130", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second SIGINT did not end the process")
	}
	if got := stderr.String(); !strings.Contains(got, "mcpspy: interrupt again: stopping at once") {
		t.Errorf("stderr %q; want it to say why it stops at once", got)
	}
}
