package rerun

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/store"
)

// Where a tools/call's Mcp-Param-* headers come from: the live server's
// tools/list first, then the recording's as of the call, then the
// headers the recorded call carried; never a redacted value.
func TestParamHeaders_Sources(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{"a":"x","b":7}}}`
	list := func(schema string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":` + schema + `}]}}`)
	}
	markA := toolSchemas(nil).with(list(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`))
	markB := toolSchemas(nil).with(list(`{"type":"object","properties":{"b":{"type":"integer","x-mcp-header":"B"}}}`))
	none := toolSchemas(nil).with(list(`{"type":"object"}`))
	invalid := toolSchemas(nil).with(list(`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`))
	recorded := http.Header{"Mcp-Param-C": {"c"}, "Mcp-Param-Key": {store.Redacted}, "Authorization": {"Bearer x"}}
	tests := []struct {
		name string
		live toolSchemas
		st   *step
		want string // the Mcp-Param-* headers set, "K=V" joined by " "
		note string
	}{
		{"live first", markA, &step{tools: markB, header: recorded}, "A=x", ""},
		{"a live tool without annotations sends none", none, &step{tools: markB, header: recorded}, "", ""},
		{"then the recording's list", nil, &step{tools: markB, header: recorded}, "B=7", ""},
		{"an invalid definition is no definition", invalid, &step{tools: invalid, header: http.Header{"Mcp-Param-C": {"c"}}}, "C=c", ""},
		{"then the recorded headers, without the redacted", nil, &step{what: "tools/call (id 5)", header: recorded}, "C=c",
			"tools/call (id 5): not sent: Mcp-Param-Key, redacted in the recording, and no tools/list told which argument it mirrors"},
		{"the rerun's own reply", nil, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			note := paramHeaders(h, []byte(call), "t", tt.live, tt.st)
			var got []string
			for _, k := range []string{"A", "B", "C", "Key"} {
				if v := h.Get("Mcp-Param-" + k); v != "" {
					got = append(got, k+"="+v)
				}
			}
			if strings.Join(got, " ") != tt.want || note != tt.note || h.Get("Authorization") != "" {
				t.Errorf("headers %v, note %q\nwant %q, note %q", h, note, tt.want, tt.note)
			}
		})
	}
}

// A step knows the tools the recording had listed by its time, not those
// listed after it.
func TestPlanOf_ToolsAsOfTheCall(t *testing.T) {
	s := &store.TapeSession{}
	for _, l := range []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{"a":"x"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{"a":"x"}}}`,
	} {
		dir := store.C2S
		if l[0] == '<' {
			dir = store.S2C
		}
		s.Messages = append(s.Messages, &store.Message{Dir: dir, Frame: []byte(l[2:])})
	}
	p := planOf(s)
	if ps := p.steps[1].tools["t"]; len(ps) != 1 || ps[0].Name != "A" {
		t.Errorf("first call: %v, want header A", p.steps[1].tools)
	}
	if ps, ok := p.steps[3].tools["t"]; !ok || len(ps) != 0 {
		t.Errorf("second call: %v, want t known without headers", p.steps[3].tools)
	}
	if p.steps[0].tools != nil {
		t.Errorf("the first tools/list: %v, want nothing known yet", p.steps[0].tools)
	}
}
