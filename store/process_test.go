package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRecorderProcess_Running(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	self := thisProcess()
	elsewhere := self
	elsewhere.Host, elsewhere.Boot = "elsewhere.invalid", ""
	tests := []struct {
		name string
		p    *RecorderProcess
		want bool
	}{
		{"this process, as a writer notes it", &self, true},
		{"this process, by pid and host alone (an mcptape without /proc)", &RecorderProcess{PID: os.Getpid(), Host: host}, true},
		{"a pid on another machine, which cannot be asked", &elsewhere, false},
		{"no host noted", &RecorderProcess{PID: os.Getpid()}, false},
		{"no pid", &RecorderProcess{Host: host}, false},
		{"none noted (an older cassette, an import)", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Running(); got != tt.want {
				t.Errorf("Running() = %v, want %v (%+v)", got, tt.want, tt.p)
			}
		})
	}
}

func TestSessionInfo_EndState(t *testing.T) {
	self := thisProcess()
	gone := RecorderProcess{PID: os.Getpid(), Host: "elsewhere.invalid"}
	tests := []struct {
		name string
		info SessionInfo
		want string
	}{
		{"ended", SessionInfo{End: &EndInfo{Reason: EndExit, ExitCode: new(0)}, RecorderProcess: &self}, "exit(0)"},
		{"no end, its recorder runs", SessionInfo{RecorderProcess: &self}, StateRecording},
		{"no end, its recorder cannot be found", SessionInfo{RecorderProcess: &gone}, StateNoEnd},
		{"no end, no recorder noted", SessionInfo{}, StateNoEnd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.info.EndState(); got != tt.want {
				t.Errorf("EndState() = %q, want %q", got, tt.want)
			}
		})
	}
}

// A writer notes itself in each session it opens, however it opens it,
// and a reader of the cassette takes the session for recording until its
// end is stored.
func TestWriter_NotesRecorderProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	w, err := NewWriter(path, WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	opened, err := w.NewSession(SessionInfo{Transport: TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	started, err := w.StartSession(SessionInfo{Transport: TransportStdio})
	if err != nil {
		t.Fatal(err)
	}
	started.Append(C2S, time.Now(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)
	if err := opened.End(EndInfo{Reason: EndEOF}); err != nil { // commits the started one too
		t.Fatal(err)
	}
	var infos []SessionInfo
	if err := View(path, func(r *Reader) (err error) {
		infos, err = r.Sessions()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 {
		t.Fatalf("%d sessions, want 2", len(infos))
	}
	want := map[string]string{opened.ID(): "eof", started.ID(): StateRecording}
	for _, info := range infos {
		if p := info.RecorderProcess; p == nil || *p != thisProcess() {
			t.Errorf("%s: recorder process %+v, want %+v", info.ID, p, thisProcess())
		}
		if got := info.EndState(); got != want[info.ID] {
			t.Errorf("%s: EndState() = %q, want %q", info.ID, got, want[info.ID])
		}
	}
}
