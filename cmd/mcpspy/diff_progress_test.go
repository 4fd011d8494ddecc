package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// slowCallJSONL writes a session in which the client calls a slow tool
// asking for progress, and the server reports each of steps (the params
// of a notifications/progress, but for the token) before it answers, with
// the frames in banner (no JSON-RPC message: a server's stdout log line)
// first. It returns the file's path.
func slowCallJSONL(t *testing.T, name string, banner []string, steps ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"session":"s1","info":{"transport":"stdio","upstream":"server","start":"2026-11-21T10:00:00Z"}}` + "\n")
	seq := 0
	line := func(dir, body string) {
		seq++
		fmt.Fprintf(&b, `{"session":"s1","seq":%d,"dir":%q,"time":"2026-11-21T10:00:%02dZ",%s}`+"\n", seq, dir, seq, body)
	}
	for _, raw := range banner {
		line("s2c", fmt.Sprintf(`"raw":%q`, raw))
	}
	line("c2s", `"message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":`+fmt.Sprint(len(steps))+`}}}`)
	for _, s := range steps {
		line("s2c", `"message":{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+fmt.Sprint(len(steps))+`,`+s+`}}`)
	}
	line("s2c", `"message":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// diff compares the progress a server reported during each call both
// sides made: by default whether any came and the last one, since a
// server that reports as time passes sends another count each run;
// --progress steps compares every one, and --progress off none. The
// token, made afresh each run, never counts; --ignore reaches the
// notifications' members; --exit-code counts what differs.
func TestMcpspy_DiffProgress(t *testing.T) {
	three := []string{`"progress":1,"total":3`, `"progress":2,"total":3`, `"progress":3,"total":3,"message":"took 3s"`}
	five := []string{`"progress":1,"total":3`, `"progress":1.5,"total":3`, `"progress":2,"total":3`, `"progress":2.5,"total":3`, `"progress":3,"total":3,"message":"took 4s"`}
	a, b := slowCallJSONL(t, "a.jsonl", nil, three...), slowCallJSONL(t, "b.jsonl", nil, five...)
	none := slowCallJSONL(t, "none.jsonl", nil)
	const call = `~ tools/call {"name":"slow"}  (a#1 b#`
	const same = "1 the same, 0 answered differently, 0 only in a, 0 only in b\n"
	const differently = "0 the same, 1 answered differently, 0 only in a, 0 only in b\n"
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		detail string // the call's lines; "": the same
	}{
		{"another count, another message", []string{a, b}, 1, call + "1)\n" +
			"    - progress.last.message=\"took 3s\"\n    + progress.last.message=\"took 4s\"\n"},
		{"the message ignored", []string{"--ignore", "message", a, b}, 0, ""},
		// A member one side has at a path the other has not is shown,
		// as "(ignored)": the leaves stand apart by their path.
		{"every step", []string{"--ignore", "message", "--progress", "steps", a, b}, 1, call + "1)\n" +
			"    - progress.count=3\n    - progress[1].progress=2\n    - progress[2].message=\"(ignored)\"\n    - progress[2].progress=3\n" +
			"    + progress.count=5\n    + progress[1].progress=1.5\n" +
			"    … 6 more (--all-leaves shows them)\n"},
		{"every step, every leaf", []string{"--ignore", "message", "--progress", "steps", "--all-leaves", a, b}, 1, call + "1)\n" +
			"    - progress.count=3\n    - progress[1].progress=2\n    - progress[2].message=\"(ignored)\"\n    - progress[2].progress=3\n" +
			"    + progress.count=5\n    + progress[1].progress=1.5\n    + progress[2].progress=2\n" +
			"    + progress[3].progress=2.5\n    + progress[3].total=3\n    + progress[4].message=\"(ignored)\"\n" +
			"    + progress[4].progress=3\n    + progress[4].total=3\n"},
		{"none on one side", []string{a, none}, 1, call + "1)\n" +
			"    - progress.last.message=\"took 3s\"\n    - progress.last.progress=3\n    - progress.last.total=3\n    + progress=(none)\n"},
		{"not compared", []string{"--progress", "off", a, none}, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runCaptured(append([]string{"diff", "--exit-code"}, tt.args...)...)
			_, body, _ := strings.Cut(out, "+++ ")
			_, body, _ = strings.Cut(body, "\n")
			want := same
			if tt.detail != "" {
				want = tt.detail + differently
			}
			if code != tt.code || body != want || stderr != "" {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit %d and, after the head:\n%s", code, stderr, out, tt.code, want)
			}
		})
	}
	if code, _, stderr := runCaptured("diff", "--progress", "all", a, b); code != 2 || stderr != "mcpspy: diff: --progress \"all\": want last, steps or off\n" {
		t.Errorf("--progress all: exit %d, stderr %q", code, stderr)
	}
}

// A side with frames that are no JSON-RPC message (a banner a server
// printed on stdout) where the other has fewer is a difference: diff says
// how many each has and shows the first the other has no counterpart
// for, cut short. The same number on both sides is the same, whatever
// they say: a log line tells the time.
func TestMcpspy_DiffNotMessages(t *testing.T) {
	long := "starting server v2 " + strings.Repeat("x", 200)
	plain := slowCallJSONL(t, "plain.jsonl", nil)
	banner := slowCallJSONL(t, "banner.jsonl", []string{long})
	two := slowCallJSONL(t, "two.jsonl", []string{"starting server v1", "listening on stdout"})
	const same = "1 the same, 0 answered differently, 0 only in a, 0 only in b\n"
	for _, tt := range []struct {
		name string
		a, b string
		code int
		note string // the line after the count; "": none
	}{
		{"a banner in b", plain, banner, 1, `! frames from the server that are no JSON-RPC message: 0 in a, 1 in b; b's first: seq 1: invalid JSON: "starting server v2 ` + strings.Repeat("x", 61) + `"` + "\n"},
		{"more in a", two, banner, 1, `! frames from the server that are no JSON-RPC message: 2 in a, 1 in b; a's first past 1 frame: seq 2: invalid JSON: "listening on stdout"` + "\n"},
		{"as many on both sides", banner, banner, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runCaptured("diff", "--exit-code", tt.a, tt.b)
			if code != tt.code || !strings.HasSuffix(out, same+tt.note) || stderr != "" {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit %d and stdout ending:\n%s", code, stderr, out, tt.code, same+tt.note)
			}
		})
	}
}
