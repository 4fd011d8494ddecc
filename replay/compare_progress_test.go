package replay

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// progressCall is a session with one tools/call that asks for progress
// (token tok) and gets one notification for each of steps, then its
// answer. Each step is the notification's params but for the token.
func progressCall(tok string, steps ...string) []string {
	lines := []string{`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":` + tok + `}}}`}
	for _, s := range steps {
		lines = append(lines, `< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+tok+`,`+s+`}}`)
	}
	return append(lines, `< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
}

// A paired call is compared by the progress its server reported: with
// ProgressLast whether any came and the last one (a server that reports
// as time passes sends another count each run), with ProgressSteps every
// one; the zero value, CompareSessions', not at all. The token, made afresh each run, never counts; --ignore blanks a
// notification's members as it does an answer's.
func TestCompareSessions_Progress(t *testing.T) {
	three := []string{`"progress":1,"total":3`, `"progress":2,"total":3`, `"progress":3,"total":3,"message":"done"`}
	five := []string{`"progress":1,"total":3`, `"progress":1.5,"total":3`, `"progress":2,"total":3`, `"progress":2.5,"total":3`, `"progress":3,"total":3,"message":"done"`}
	tests := []struct {
		name string
		a, b []string
		opts CompareOptions
		want string // the call's Op and Detail
	}{
		{"not compared", progressCall(`1`, three...), progressCall(`1`), CompareOptions{}, "="},
		{"the same", progressCall(`"a"`, three...), progressCall(`7`, three...), CompareOptions{Progress: ProgressLast}, "="},
		{"another count, the same last", progressCall(`1`, three...), progressCall(`1`, five...), CompareOptions{Progress: ProgressLast}, "="},
		{"another count, every step compared", progressCall(`1`, three...), progressCall(`1`, five...), CompareOptions{Progress: ProgressSteps},
			"~- progress.count=3\n- progress[1].progress=2\n- progress[2].message=\"done\"\n- progress[2].progress=3\n+ progress.count=5\n+ progress[1].progress=1.5\n… 6 more"},
		{"another last", progressCall(`1`, three...), progressCall(`1`, `"progress":1,"total":3`, `"progress":2,"total":4`), CompareOptions{Progress: ProgressLast},
			"~- progress.last.message=\"done\"\n- progress.last.progress=3\n- progress.last.total=3\n+ progress.last.progress=2\n+ progress.last.total=4"},
		{"only one side's", progressCall(`1`, three...), progressCall(`1`), CompareOptions{Progress: ProgressLast},
			"~- progress.last.message=\"done\"\n- progress.last.progress=3\n- progress.last.total=3\n+ progress=(none)"},
		{"only the other side's", progressCall(`1`), progressCall(`1`, three...), CompareOptions{Progress: ProgressLast},
			"~- progress=(none)\n+ progress.last.message=\"done\"\n+ progress.last.progress=3\n+ progress.last.total=3"},
		{"another message, ignored", progressCall(`1`, `"progress":1,"message":"took 3s"`), progressCall(`1`, `"progress":1,"message":"took 4s"`),
			CompareOptions{Progress: ProgressLast, Ignore: []string{"message"}}, "="},
		{"another message", progressCall(`1`, `"progress":1,"message":"took 3s"`), progressCall(`1`, `"progress":1,"message":"took 4s"`),
			CompareOptions{Progress: ProgressLast}, "~- progress.last.message=\"took 3s\"\n+ progress.last.message=\"took 4s\""},
		// Progress for another token (a request not compared) is no
		// call's.
		{"a stray token", progressCall(`1`), append(progressCall(`1`), `< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":1}}`), CompareOptions{Progress: ProgressLast}, "="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := CompareSessionsWith(sessionOf(tt.a...), sessionOf(tt.b...), tt.opts)
			if len(d) != 1 {
				t.Fatalf("%d differences, want the one call: %v", len(d), d)
			}
			if got := fmt.Sprintf("%c%s", d[0].Op, d[0].Detail); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A token a client reuses once a call is done is the later call's from
// then on: each call is compared by its own progress.
func TestCompareSessions_ProgressTokenReused(t *testing.T) {
	a := slices.Concat(progressCall(`1`, `"progress":1`), []string{
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"other","_meta":{"progressToken":1}}}`,
		`< {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":7}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`,
	})
	b := strings.Join(a, "\n")
	b = strings.Replace(b, `"progress":7`, `"progress":8`, 1)
	d := CompareSessionsWith(sessionOf(a...), sessionOf(strings.Split(b, "\n")...), CompareOptions{Progress: ProgressLast})
	if len(d) != 2 || d[0].Op != Same || d[1].Op != AnswerDiffs || d[1].Detail != "- progress.last.progress=7\n+ progress.last.progress=8" {
		t.Errorf("got %v", d)
	}
}
