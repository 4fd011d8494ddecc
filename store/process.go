package store

import (
	"errors"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// A session whose end is not recorded is either still being recorded or
// lost its recorder (SIGKILL, a crash, a power cut): nothing in the
// cassette changes when a recorder dies. So a writer notes, in each
// session it opens, which process it is (RecorderProcess), and a reader
// asks whether that process still runs (EndState).

// What EndState says of a session with no end recorded.
const (
	// StateRecording: the process recording it still runs, on this
	// machine.
	StateRecording = "recording"
	// StateNoEnd: no process recording it runs here: it was killed (or
	// crashed, or the machine went down) before it could record the end,
	// or it runs on another machine, or the session was imported without
	// an end or recorded by an mcptape older than RecorderProcess.
	StateNoEnd = "no end recorded"
)

// RecorderProcess identifies the process that recorded a session.
type RecorderProcess struct {
	PID  int    `json:"pid"`
	Host string `json:"host,omitempty"`
	// Boot and Ticks tell the process apart from a later one given the
	// same pid, and from one in another pid namespace (a container) of
	// the same machine: the kernel's boot id and the process's start
	// time in clock ticks since boot. Linux only; empty elsewhere.
	Boot  string `json:"boot,omitempty"`
	Ticks uint64 `json:"ticks,omitempty"`
}

// String is "pid 4242 on HOST", for the session detail.
func (p *RecorderProcess) String() string {
	s := "pid " + strconv.Itoa(p.PID)
	if p.Host != "" {
		s += " on " + p.Host
	}
	return s
}

// Running says whether the process still runs: on this machine, not a
// zombie, and (where Boot and Ticks were noted) not another process that
// took its pid since. A process on another machine cannot be asked, and
// counts as not running. nil is not running.
func (p *RecorderProcess) Running() bool {
	if p == nil || p.PID <= 0 {
		return false
	}
	if p.Boot != "" && p.Ticks != 0 {
		return p.Boot == bootID() && processStarted(p.PID) == p.Ticks
	}
	host, err := os.Hostname()
	if err != nil || p.Host == "" || host != p.Host {
		return false
	}
	// Signal 0 checks that the pid exists without signalling it; EPERM
	// says it exists under another user.
	err = unix.Kill(p.PID, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// thisProcess is this process, as NewSession and StartSession note it.
var thisProcess = sync.OnceValue(func() RecorderProcess {
	p := RecorderProcess{PID: os.Getpid(), Boot: bootID()}
	p.Host, _ = os.Hostname()
	p.Ticks = processStarted(p.PID)
	return p
})

// recorderProcess is a copy of thisProcess for one session's info.
func recorderProcess() *RecorderProcess {
	p := thisProcess()
	return &p
}

// EndState is how the session ended, for listings: its end's Short form
// when one is recorded; else StateRecording while the process recording
// it runs on this machine, and StateNoEnd when it does not.
func (s *SessionInfo) EndState() string {
	switch {
	case s.End != nil:
		return s.End.Short()
	case s.RecorderProcess.Running():
		return StateRecording
	}
	return StateNoEnd
}
