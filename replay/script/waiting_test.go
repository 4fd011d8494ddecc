package script

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"text/template"

	"github.com/mcptape/mcptape/replay"
)

// bigUpload is a tools/call of the tool "upload" whose argument blob is
// size bytes.
func bigUpload(size int) *replay.Request {
	frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"upload","arguments":{"blob":"%s"}}}`, strings.Repeat("B", size))
	params := frame[strings.Index(string(frame), `"params":`)+len(`"params":`) : len(frame)-1]
	return &replay.Request{ID: json.RawMessage("2"), Method: "tools/call", Params: params, Frame: frame}
}

func delayedUpload(t *testing.T, text string) replay.Preparer {
	t.Helper()
	s, err := Parse("delayed.yaml", fmt.Appendf(nil, "server: {name: big, version: 1.0.0}\ntools:\n  - name: upload\n    answers:\n      - text: %q\n        delay: 1ms\n", text))
	if err != nil {
		t.Fatal(err)
	}
	return s.Open().(replay.Preparer)
}

// A call whose answer waits (a delay) holds what its answer needs: not
// the frame, its params, nor its decoded arguments, when no template of
// the answer reads them. Before, the prepared answer held the call and
// its arguments, twice its size, for as long as it waited.
func TestPrepare_WaitingCallHoldsNotItsArguments(t *testing.T) {
	const size = 8 << 20
	sess := delayedUpload(t, "stored")
	var base, held runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	p, ok := sess.Prepare(bigUpload(size))
	if !ok || p.Play == nil {
		t.Fatalf("the call was not prepared to play: %v %+v", ok, p)
	}
	runtime.GC()
	runtime.ReadMemStats(&held)
	if got := int64(held.HeapAlloc) - int64(base.HeapAlloc); got > size/4 {
		t.Errorf("a prepared call with a %d MiB argument, waiting, holds %.1f MiB; want under %.1f MiB", size>>20, float64(got)/(1<<20), float64(size/4)/(1<<20))
	}
	r := p.Play(context.Background(), nil, &replay.Request{ID: json.RawMessage("2"), Method: "tools/call"})
	if !strings.Contains(string(r.Result), `"stored"`) {
		t.Errorf("answered %s, want the text stored", r.Result)
	}
}

// An answer that waits and renders the arguments still has them.
func TestPrepare_WaitingAnswerRendersArguments(t *testing.T) {
	sess := delayedUpload(t, "{{len .args.blob}} bytes")
	req := bigUpload(1 << 20)
	p, ok := sess.Prepare(req)
	if !ok || p.Play == nil {
		t.Fatalf("the call was not prepared to play: %v %+v", ok, p)
	}
	r := p.Play(context.Background(), nil, req.Waiting())
	if want := fmt.Sprintf(`"%d bytes"`, 1<<20); !strings.Contains(string(r.Result), want) {
		t.Errorf("answered %.300s, want the text %s", r.Result, want)
	}
}

// readsArgs errs towards yes: whatever may reach the arguments reads them.
func TestReadsArgs(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"stored", false},
		{"{{.tool}} call {{.call}} of request {{.request}}", false},
		{"{{if .elicited}}{{.elicited.content.name}}{{end}}", false},
		{"{{$t := .tool}}{{upper $t}}", false},
		{"{{with .tool}}{{.}}{{end}}", true}, // dot: it could be anything
		{"{{.args.blob}}", true},
		{"{{len .args.blob}}", true},
		{"{{with .args}}{{.blob}}{{end}}", true},
		{"{{range $k, $v := .args}}{{$k}}{{end}}", true},
		{"{{$.args.blob}}", true},
		{"{{json $}}", true},
		{"{{json .}}", true},
		{"{{index . \"args\"}}", true},
		{"{{(.args).blob}}", true},
		{"{{$a := .args}}{{$a.blob}}", true},
		{"{{if .tool}}x{{else}}{{.args.blob}}{{end}}", true},
		{`{{define "a"}}{{.args.blob}}{{end}}{{template "a" .}}`, true},
	} {
		tm := template.Must(template.New("t").Funcs(funcs).Parse(tc.text))
		if got := readsArgs(tm); got != tc.want {
			t.Errorf("readsArgs(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
