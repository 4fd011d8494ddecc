package store

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// On Linux a recorder is known by its start time too: a process that
// took a dead recorder's pid does not pass for it, and neither does one
// that has died and waits for its parent to reap it (a recorder killed
// by SIGKILL under a parent that has not waited for it yet).
func TestRecorderProcess_RunningLinux(t *testing.T) {
	self := thisProcess()
	if self.Boot == "" || self.Ticks == 0 {
		t.Fatalf("this process noted without a boot id or start time: %+v", self)
	}
	other := self
	other.Ticks++
	if other.Running() {
		t.Errorf("a process with this pid and another start time passes for running: %+v", other)
	}
	otherBoot := self
	otherBoot.Boot = "00000000-0000-0000-0000-000000000000"
	if otherBoot.Running() {
		t.Errorf("a process with this pid and start time, of another boot, passes for running: %+v", otherBoot)
	}

	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := false
	t.Cleanup(func() {
		if !reaped {
			_ = child.Process.Kill()
			_ = child.Wait()
		}
	})
	p := RecorderProcess{PID: child.Process.Pid, Host: self.Host, Boot: bootID(), Ticks: processStarted(child.Process.Pid)}
	if !p.Running() {
		t.Fatalf("a running child does not pass for running: %+v", p)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not reaped: the child stays a zombie until Wait. SIGKILL takes
	// effect asynchronously, so poll.
	for deadline := time.Now().Add(10 * time.Second); p.Running(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a killed child, not reaped, still passes for running after 10 s: %+v", p)
		}
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(p.PID)); err != nil {
		t.Errorf("the killed child was gone before it was reaped, so its zombie went untested: %v", err)
	}
	_ = child.Wait()
	reaped = true
	if p.Running() {
		t.Errorf("a killed and reaped child passes for running: %+v", p)
	}
}
