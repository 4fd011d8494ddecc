package faults_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// mockRSSLimit bounds mcpmock's peak RSS for a 64 MiB tools/call on stdio,
// alone or in a run: 2.6× the frame, against 2.2× for one call and 2.34×
// for a run measured here (the line as read, its pieces or one copy made
// of it). Before, a call cost 5.6× to 7.7× (its params copied member by
// member, its arguments grown into a decoder's buffer, its match key
// written twice to sort it), then 3.2× with the copies gone, while the
// pieces of the line, collected but kept, could not hold the next copy.
// A run of calls whose answers wait 2 s (a script's delay, a recording's
// timing) costs the same, 2.34×: a waiting call holds what its answer
// needs, where it held its frame, and a script's call its decoded
// arguments too (12× to 16× for the script, 6× to 8× for the
// recording, as more or fewer of the calls waited at once).
const mockRSSLimit = frameSize * 13 / 5

// unmatchedRSSLimit bounds mcpmock's peak RSS for a 64 MiB tools/call
// nothing matches: 5× the frame, against 4.2× measured (the frame, the
// match key tried, the canonical params whose start the error shows and
// the key the nearest recorded request is found by, one after the other,
// the garbage collector's pacing letting them add up). Before, its error
// held the whole call twice and its log line once: 16×; a call of millions
// of short strings cost 16.6× after that, a leaf and a path per string in
// the search for the nearest recorded request, and 4.2× now.
const unmatchedRSSLimit = frameSize * 5

// shortAnswer bounds the answer to a big call nothing matches: an error
// that shows the call's start and its length, not the call.
const shortAnswer = 4 << 10

// bigCall is a tools/call of exactly size bytes asking the tool "upload"
// with one big string argument.
func bigCall(id, size int) []byte {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"upload","arguments":{"blob":"`, id)
	const tail = `"}}}`
	b := bytes.Repeat([]byte{'B'}, size)
	copy(b, head)
	copy(b[size-len(tail):], tail)
	return b
}

// manyValuesCall is a tools/call of about size bytes asking the tool
// "upload" with one argument, an array of short strings: millions of
// values, each of which a search walking the call may take as a leaf.
func manyValuesCall(id, size int) []byte {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"upload","arguments":{"items":[`, id)
	const elem, tail = `"BBBBBBBBBBBBBBBBBB",`, `"B"]}}}`
	return []byte(head + strings.Repeat(elem, (size-len(head)-len(tail))/len(elem)) + tail)
}

// writeCalls writes n calls of frameSize bytes, made by call with ids 1 to
// n, to p's stdin back to back, on a goroutine of its own: it says on the
// channel how that went, and counts in sent (when not nil) each call
// written.
func writeCalls(p *spy, n int, call func(id, size int) []byte, sent *atomic.Int32) <-chan error {
	errc := make(chan error, 1)
	go func() {
		for i := range n {
			if _, err := p.in.Write(append(call(i+1, frameSize), '\n')); err != nil {
				errc <- err
				return
			}
			if sent != nil {
				sent.Add(1)
			}
		}
		errc <- nil
	}()
	return errc
}

// mockSources are what mcpmock serves in the memory tests: a script whose
// tool "upload" answers any call, and a recording of one small call to it.
var mockSources = map[string]string{
	"script.yaml": "server: {name: big, version: 1.0.0}\ntools:\n  - name: upload\n    answers:\n      - text: stored\n",
	// Its answer waits 2 s: long enough for a run of calls to be read
	// while the first still waits.
	"delayed.yaml": "server: {name: big, version: 1.0.0}\ntools:\n  - name: upload\n    answers:\n      - text: stored\n        delay: 2s\n",
	"tape.jsonl": `{"session":"s1","info":{"transport":"stdio"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"blob":"small"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-01-01T00:00:01Z","message":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"stored"}]}}}
`,
	// Answered 2 s after the call, as delayed.yaml answers.
	"slow-tape.jsonl": `{"session":"s1","info":{"transport":"stdio"}}
{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"blob":"small"}}}}
{"session":"s1","seq":2,"dir":"s2c","time":"2026-01-01T00:00:02Z","message":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"stored"}]}}}
`,
}

// A 64 MiB tools/call to mcpmock on stdio, alone or in a run of them sent
// back to back, costs about what the frame does: mcpmock holds the frame,
// and a copy at a time of what it needs of it (a script's decoded
// arguments, a recording's match key), not a copy for each step that
// looks at it (DESIGN.md, "Flat memory"). The recording is matched by
// method alone (--match ignore-params): a recorded 64 MiB call would be in
// what mcpmock loads too; the big call's match key is made all the same.
// Answers that wait are read while the calls after them come in.
// Matched by params, the call matches nothing, and gets a short error.
// The release binary is measured.
func memoryBigCallsMockStdio(t *testing.T) {
	bin := peertest.ReleaseBinary(t, "mcpmock")
	dir := t.TempDir()
	for name, text := range mockSources {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := []string{"script.yaml"}
	tape := []string{"--match", "ignore-params=tools/call", "tape.jsonl"}
	delayed := []string{"delayed.yaml"}
	slowTape := []string{"--timing", "recorded", "--match", "ignore-params=tools/call", "slow-tape.jsonl"}
	const stored, unmatched = `"text":"stored"`, `"code":-32602`
	for _, tc := range []struct {
		name  string
		args  []string // mcpmock serve's
		calls int
		want  string                    // in each answer
		limit int                       // of the peak RSS
		call  func(id, size int) []byte // bigCall when nil
	}{
		{"script one call", script, 1, stored, mockRSSLimit, nil},
		{"script run", script, runFrames, stored, mockRSSLimit, nil},
		{"recording one call", tape, 1, stored, mockRSSLimit, nil},
		{"recording run", tape, runFrames, stored, mockRSSLimit, nil},
		// Every call of the run is read while the first still waits for
		// its answer: a call that waits holds what its answer needs, not
		// the call.
		{"script run, answers delayed", delayed, runFrames, stored, mockRSSLimit, nil},
		{"recording run, recorded timing", slowTape, runFrames, stored, mockRSSLimit, nil},
		// Matched by params, the recorded call's "small" is not the big
		// one's blob: an error names the recorded call.
		{"recording unmatched", []string{"tape.jsonl"}, 1, unmatched, unmatchedRSSLimit, nil},
		// Its arguments are millions of short strings, not one long one.
		{"recording unmatched, many values", []string{"tape.jsonl"}, 1, unmatched, unmatchedRSSLimit, manyValuesCall},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := tc.call
			if call == nil {
				call = bigCall
			}
			p := startStdio(t, dir, nil, append([]string{bin, "serve"}, tc.args...)...)
			hwm := watchHWM(p.Cmd.Process.Pid)
			var sent atomic.Int32 // calls mcpmock has read (all but a pipe's worth)
			errc := writeCalls(p, tc.calls, call, &sent)
			var beforeFirst int32 // calls mcpmock had read when the first answer came
			for i := range tc.calls {
				line, err := p.out.ReadString('\n')
				if err != nil {
					t.Fatalf("answer %d: %v; mcpmock stderr:\n%s", i+1, err, p.Stderr())
				}
				if i == 0 {
					beforeFirst = sent.Load()
				}
				if !strings.Contains(line, tc.want) {
					t.Fatalf("answer %d is %.2000q, want it to hold %s", i+1, line, tc.want)
				}
				if tc.want == unmatched && len(line) > shortAnswer {
					t.Errorf("answer %d is %d bytes, want an error of at most %d: %.2000q", i+1, len(line), shortAnswer, line)
				}
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			p.in.Close()
			peak := hwm.Peak() << 10
			t.Logf("mcpmock %s: peak RSS %.1f MiB for %d MiB calls (%.2f×; limit %.1f×); %d of %d calls sent before the first answer", tc.name, float64(peak)/(1<<20), frameSize>>20, float64(peak)/frameSize, float64(tc.limit)/frameSize, beforeFirst, tc.calls)
			if peak >= tc.limit {
				t.Errorf("mcpmock %s: peak RSS %d MiB, want under %d MiB", tc.name, peak>>20, tc.limit>>20)
			}
		})
	}
}

// recordedCallRSSLimit bounds mcpmock's peak RSS when a recording holding a
// 64 MiB call is asked it: 3.6× the frame, against 3.2× measured (the live
// call, its match key, the recorded call's key).
const recordedCallRSSLimit = frameSize * 18 / 5

// A recording that holds a 64 MiB call costs about what the call does to
// load, and, asked nothing, as much to the end, its report included: the
// recorded call's match key is made once and kept where it was made, and
// the report shows the unused call by its start. Before, loading wrote the
// key into an arena block sized four times over and copied it into the
// index, and the report copied it twice more: 6.2× the frame. Asked the
// call, mcpmock holds the live call and its key beside the recorded key.
func memoryBigRecordingMockStdio(t *testing.T) {
	bin := peertest.ReleaseBinary(t, "mcpmock")
	dir := t.TempDir()
	var tape bytes.Buffer
	tape.WriteString(`{"session":"s1","info":{"transport":"stdio"}}` + "\n")
	tape.WriteString(`{"session":"s1","seq":1,"dir":"c2s","time":"2026-01-01T00:00:00Z","message":`)
	tape.Write(bigCall(1, frameSize))
	tape.WriteString("}\n" + `{"session":"s1","seq":2,"dir":"s2c","time":"2026-01-01T00:00:01Z","message":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"stored"}]}}}` + "\n")
	if err := os.WriteFile(filepath.Join(dir, "big.jsonl"), tape.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		calls int
		limit int
	}{
		{"asked nothing", 0, mockRSSLimit},
		{"asked it", 1, recordedCallRSSLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startStdio(t, dir, nil, bin, "serve", "--report", "report.json", "big.jsonl")
			hwm := watchHWM(p.Cmd.Process.Pid)
			if tc.calls > 0 {
				errc := make(chan error, 1)
				go func() {
					_, err := p.in.Write(append(bigCall(2, frameSize), '\n'))
					errc <- err
				}()
				line, err := p.out.ReadString('\n')
				if err != nil {
					t.Fatalf("answer: %v; mcpmock stderr:\n%s", err, p.Stderr())
				}
				if !strings.Contains(line, `"text":"stored"`) {
					t.Fatalf("answer is %.2000q, want the recorded one", line)
				}
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
			}
			p.in.Close()
			peak := hwm.Peak() << 10
			t.Logf("mcpmock, a recorded %d MiB call %s: peak RSS %.1f MiB (%.2f×; limit %.1f×)", frameSize>>20, tc.name, float64(peak)/(1<<20), float64(peak)/frameSize, float64(tc.limit)/frameSize)
			if peak >= tc.limit {
				t.Errorf("mcpmock, a recorded call %s: peak RSS %d MiB, want under %d MiB", tc.name, peak>>20, tc.limit>>20)
			}
		})
	}
}
