package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcptape/mcptape/internal/peertest"
)

// openPTY opens a pseudo-terminal pair: the controller the test reads and
// writes, and the terminal the program under test gets.
func openPTY(t *testing.T) (controller, terminal *os.File) {
	t.Helper()
	c, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	fd := int(c.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	term, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pts: %v", err)
	}
	if err := unix.IoctlSetWinsize(int(term.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 100}); err != nil {
		t.Fatalf("set window size: %v", err)
	}
	t.Cleanup(func() { c.Close(); term.Close() })
	return c, term
}

// The inspector on a real (pseudo) terminal: it draws the shipped
// cassette, and q quits with exit 0. The view tests use tcell's simulation
// screen; this is the path a user takes, where starting the screen once
// crashed without a terminal (see TestMcpspy_InspectWithoutTerminal).
func TestMcpspy_InspectOnATerminal(t *testing.T) {
	controller, term := openPTY(t)
	cassette := shippedCassette(t, "everything-stdio.db")
	n := len(readTape(t, cassette).Sessions[0].Messages)
	cmd := exec.Command(peertest.Binary(t, "mcpspy"), "inspect", cassette)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true} // term becomes its controlling terminal
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close() // the child has it now
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := controller.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return // EIO once the child is gone
			}
		}
	}()
	seen := func() string { mu.Lock(); defer mu.Unlock(); return screen.String() }
	deadline := time.Now().Add(10 * time.Second)
	// The status line counts the messages; the table shows the first ones.
	for !strings.Contains(seen(), fmt.Sprintf("%d/%d", n, n)) || !strings.Contains(seen(), "tools/call echo") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the inspector drew no message table within 10 s; terminal output:\n%q", seen())
		}
		time.Sleep(20 * time.Millisecond) // polling the terminal, with a deadline
	}
	if _, err := io.WriteString(controller, "q"); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("inspect exited with %v; terminal output:\n%q", err, seen())
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("q did not quit the inspector within 10 s")
	}
}

// Without a terminal (a CI job, no controlling tty) inspect says so in one
// line and points at show. It used to panic inside tview.
func TestMcpspy_InspectWithoutTerminal(t *testing.T) {
	cmd := exec.Command(peertest.Binary(t, "mcpspy"), "inspect", shippedCassette(t, "everything-stdio.db"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // a new session has no controlling terminal
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("inspect without a terminal: %v, want exit 1; stderr:\n%s", err, stderr.String())
	}
	msg := strings.TrimSuffix(stderr.String(), "\n")
	if !strings.HasPrefix(msg, "mcpspy: inspect needs a terminal: ") || !strings.HasSuffix(msg, "; mcpspy show prints the messages as text") || strings.Contains(msg, "\n") {
		t.Errorf("stderr %q", msg)
	}
}
