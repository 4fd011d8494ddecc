package faults_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/store"
)

// fallbackServer is the real server behind mcpmock's fallback in the
// memory tests: it answers initialize and ping, a tools/call of the tool
// "big" with a result of MCPTAPE_BIG_SIZE bytes, and any other request
// with the length of its line; notifications get nothing. It never holds a
// whole line: it reads the id and method from a line's first 64 KiB
// (the fallback writes them before the params) and counts the rest.
func fallbackServer() {
	size := envInt("MCPTAPE_BIG_SIZE", 64<<20)
	idRE := regexp.MustCompile(`"id":(\d+)`)
	methodRE := regexp.MustCompile(`"method":"([^"]*)"`)
	versionRE := regexp.MustCompile(`"protocolVersion":"([^"]*)"`)
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for {
		var head string
		n := 0
		var err error
		for first := true; ; first = false {
			var chunk []byte
			chunk, err = r.ReadSlice('\n')
			if first {
				head = string(chunk)
			}
			n += len(chunk)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if n == 0 && err != nil {
			return
		}
		id, method := idRE.FindStringSubmatch(head), methodRE.FindStringSubmatch(head)
		switch {
		case id == nil || method == nil: // a notification, or an answer
		case method[1] == "initialize":
			version := "2025-06-18"
			if v := versionRE.FindStringSubmatch(head); v != nil {
				version = v[1]
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"fallback","version":"1.0.0"}}}`+"\n", id[1], version)
		case method[1] == "tools/call" && strings.Contains(head, `"name":"big"`):
			var idn int
			fmt.Sscan(id[1], &idn)
			w.Write(bigFrame(idn, size))
			w.WriteString("\n")
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"len %d"}]}}`+"\n", id[1], n)
		}
		if w.Flush() != nil {
			return
		}
	}
}

// fallbackTape is what mcpmock serves in front of the fallback: one
// recorded tools/list, so that every tools/call goes to the real server.
const fallbackTape = `{"session":"s1","info":{"transport":"stdio"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-01-01T00:00:01Z","message":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}
`

// Bounds of mcpmock's peak RSS while its stdio fallback passes 64 MiB
// frames on and records them as a new session, measured with the release
// binary on 2 cores:
//
//   - a 64 MiB call: 4.16× (the live call, the request of the fallback's
//     own built around its params, the store's commit copy). Bounded at
//     4.75×. Before, recorder.Child copied the request to add the newline
//     and its proxy read it back from a pipe, in pieces and whole: 5.35×.
//   - a run of them, sent back to back: 7.9× to 8.4×, bounded at 10×.
//     Before: 12.4× to 13.4×. The engine reads the next call while one is
//     with the server, so a run holds more than one.
//   - a small call answered with 64 MiB: 6.73×; a run, 8.1× to 10.2×. The
//     answer is handed on as the line read holds it (before, copied out
//     through a json.RawMessage), but replay's stdio writer copies the
//     response it builds from it to add a newline, and keeps that buffer:
//     with the writer writing the newline apart (tried, not in this
//     change), 4.48×, against 5.48× with the old copy. Until then these
//     bounds guard against more, as the old code's 5.48× to 6.77× (one)
//     and 8.05× to 9.05× (run) met them too.
const (
	fallbackCallRSSLimit   = frameSize * 19 / 4
	fallbackRunRSSLimit    = frameSize * 10
	fallbackAnswerRSSLimit = frameSize * 15 / 2
	fallbackAnswersLimit   = frameSize * 12
)

// A 64 MiB tools/call nothing recorded answers, passed to a stdio server
// by mcpmock's fallback and recorded as a new session, and a small call
// whose answer from that server is 64 MiB, cost mcpmock a bounded
// multiple of the frame, alone or in a run (DESIGN.md, "Flat memory"): the
// fallback holds a frame it passes on once, not once more for each step
// it takes. The release binary is measured.
func TestMemory_BigFramesMockFallbackStdio(t *testing.T) {
	bin := peertest.ReleaseBinary(t, "mcpmock")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tape.jsonl"), []byte(fallbackTape), 0o600); err != nil {
		t.Fatal(err)
	}
	smallCall := func(id, _ int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big","arguments":{}}}`, id)
	}
	for _, tc := range []struct {
		name  string
		calls int
		call  func(id, size int) []byte
		// want is in each answer; wantLen is each answer's least length
		want    string
		wantLen int
		limit   int
	}{
		// The server got it whole: its length, the id of the fallback's
		// own (one digit or two) and "\n" in it, is 64 MiB and a few.
		{"c2s one call", 1, bigCall, `"text":"len 6710886`, 0, fallbackCallRSSLimit},
		{"c2s run", runFrames, bigCall, `"text":"len 6710886`, 0, fallbackRunRSSLimit},
		{"s2c one call", 1, smallCall, `"blob":"AAAA`, frameSize, fallbackAnswerRSSLimit},
		{"s2c run", runFrames, smallCall, `"blob":"AAAA`, frameSize, fallbackAnswersLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "new.db")
			env := []string{"MCPTAPE_FAKE_SERVER=fallback", fmt.Sprintf("MCPTAPE_BIG_SIZE=%d", frameSize)}
			p := startStdio(t, dir, env, bin, "serve", "--record-new", db, "tape.jsonl", "--", self)
			hwm := watchHWM(p.Cmd.Process.Pid)
			errc := writeCalls(p, tc.calls, tc.call, nil)
			for i := range tc.calls {
				line, err := p.out.ReadString('\n')
				if err != nil {
					t.Fatalf("answer %d: %v; mcpmock stderr:\n%s", i+1, err, p.Stderr())
				}
				if !strings.Contains(line, tc.want) || len(line) < tc.wantLen {
					t.Fatalf("answer %d is %d bytes, %.300q, want it to hold %s", i+1, len(line), line, tc.want)
				}
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			p.in.Close()
			peak := hwm.Peak() << 10
			big := 0
			err := store.View(db, func(r *store.Reader) error {
				infos, err := r.Sessions()
				for _, in := range infos {
					err = r.Summaries(in.ID, 1, nil, func(s *store.Summary) error {
						if s.Size >= frameSize-64 {
							big++
						}
						return nil
					})
				}
				return err
			})
			if err != nil || big != tc.calls {
				t.Errorf("the new session holds %d big frames (%v), want %d; mcpmock stderr:\n%s", big, err, tc.calls, p.Stderr())
			}
			t.Logf("mcpmock fallback %s: peak RSS %.1f MiB for %d MiB frames (%.2f×; limit %.2f×)", tc.name, float64(peak)/(1<<20), frameSize>>20, float64(peak)/frameSize, float64(tc.limit)/frameSize)
			if peak >= tc.limit {
				t.Errorf("mcpmock fallback %s: peak RSS %d MiB, want under %d MiB", tc.name, peak>>20, tc.limit>>20)
			}
		})
	}
}
