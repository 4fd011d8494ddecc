package mcphttp

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The encoding examples of 2026-07-28's Value Encoding, and the edges
// around them.
func TestEncodeValue(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain ASCII", "us-west1", "us-west1"},
		{"non-ASCII", "Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{"leading and trailing spaces", " padded ", "=?base64?IHBhZGRlZCA=?="},
		{"newline", "line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"looks like the sentinel", "=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"inner spaces", "a b", "a b"},
		{"a tab", "a\tb", "=?base64?YQli?="},
		{"trailing tab", "a\t", "=?base64?YQk=?="},
		{"DEL", "a\x7f", "=?base64?YX8=?="},
		{"sentinel prefix only", "=?base64?x", "=?base64?x"},
		{"empty", "", "=?base64??="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EncodeValue(tt.in); got != tt.want {
				t.Errorf("EncodeValue(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParamHeaders(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []string // "Name=a.b", sorted
		err          string
	}{
		{"the spec's example", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"query":{"type":"string"}},"required":["region","query"]}`,
			[]string{"Region=region"}, ""},
		{"nested properties", `{"type":"object","properties":{"loc":{"type":"object","properties":{"zone":{"type":"integer","x-mcp-header":"Zone"}}},"on":{"type":"boolean","x-mcp-header":"On"}}}`,
			[]string{"On=on", "Zone=loc.zone"}, ""},
		{"nullable string", `{"type":"object","properties":{"r":{"type":["string","null"],"x-mcp-header":"R"}}}`, []string{"R=r"}, ""},
		{"a property named x-mcp-header", `{"type":"object","properties":{"x-mcp-header":{"type":"object"}}}`, nil, ""},
		{"in a default value", `{"type":"object","properties":{"o":{"type":"object","default":{"x-mcp-header":"No"}}}}`, nil, ""},
		{"none", `{"type":"object"}`, nil, ""},
		{"under items", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`, nil, `property l: x-mcp-header is allowed only on a property reached through "properties" alone`},
		{"under oneOf", `{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, nil, "property a: x-mcp-header is allowed only"},
		{"in $defs", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string","x-mcp-header":"A"}}}`, nil, "x-mcp-header is allowed only"},
		{"at the root", `{"type":"object","x-mcp-header":"Root"}`, nil, "the schema root: x-mcp-header is allowed only"},
		{"a number", `{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}`, nil, `property n: x-mcp-header "N" on type number; only integer, string and boolean may be mirrored`},
		{"no type", `{"type":"object","properties":{"n":{"x-mcp-header":"N"}}}`, nil, "on type <nil>"},
		{"empty", `{"type":"object","properties":{"n":{"type":"string","x-mcp-header":""}}}`, nil, "must be a non-empty string"},
		{"not a string", `{"type":"object","properties":{"n":{"type":"string","x-mcp-header":7}}}`, nil, "must be a non-empty string"},
		{"not a token", `{"type":"object","properties":{"n":{"type":"string","x-mcp-header":"My Header"}}}`, nil, `x-mcp-header "My Header" is not an HTTP token`},
		{"CR LF", `{"type":"object","properties":{"n":{"type":"string","x-mcp-header":"A\r\nB"}}}`, nil, "is not an HTTP token"},
		{"duplicate but for case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"REGION"}}}`, nil, "(names compare without case)"},
		{"not JSON", `{`, nil, "inputSchema:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := ParamHeaders([]byte(tt.schema))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q in it", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.Name+"="+strings.Join(p.Path, "."))
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSetParams(t *testing.T) {
	params := []ParamHeader{
		{"Region", []string{"region"}}, {"Greeting", []string{"greeting"}}, {"Count", []string{"count"}},
		{"Flag", []string{"flag"}}, {"Zone", []string{"loc", "zone"}}, {"Gone", []string{"gone"}},
		{"Nil", []string{"nil"}}, {"Obj", []string{"obj"}}, {"Ratio", []string{"ratio"}},
	}
	frame := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{` +
		`"region":"us-west1","greeting":"Hello, 世界","count":4.2e1,"flag":false,"loc":{"zone":" padded "},` +
		`"nil":null,"obj":{"a":1},"ratio":0.5}}}`
	h := http.Header{}
	SetParams(h, []byte(frame), params)
	want := http.Header{
		"Mcp-Param-Region":   {"us-west1"},
		"Mcp-Param-Greeting": {"=?base64?SGVsbG8sIOS4lueVjA==?="},
		"Mcp-Param-Count":    {"42"},
		"Mcp-Param-Flag":     {"false"},
		"Mcp-Param-Zone":     {"=?base64?IHBhZGRlZCA=?="},
		"Mcp-Param-Ratio":    {"0.5"}, // not an integer: mirrored as written, for the server to refuse
	}
	if len(h) != len(want) {
		t.Errorf("got %v\nwant %v", h, want)
	}
	for k, v := range want {
		if h.Get(k) != v[0] {
			t.Errorf("%s: got %q, want %q", k, h.Get(k), v[0])
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"-7", "-7"}, {"42.0", "42"}, {"1e3", "1000"}, {"9007199254740993", "9007199254740993"}, {"1e300", "1e300"},
	} {
		if got := integerText(tt.in); got != tt.want {
			t.Errorf("integerText(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestListedTools(t *testing.T) {
	tests := []struct {
		name, result string
		want         []string // "name usable Header=path"
	}{
		{"marks read", `{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}}]}`,
			[]string{"a true Region=r"}},
		{"no marks", `{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}`, []string{"b true"}},
		{"no inputSchema", `{"tools":[{"name":"c"}]}`, []string{"c false"}},
		{"a mark on a number", `{"tools":[{"name":"d","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}}]}`,
			[]string{"d false"}},
		{"not a tool list", `{"content":[]}`, nil},
		{"not JSON", `{`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, lt := range ListedTools([]byte(tt.result)) {
				s := lt.Name + " " + map[bool]string{true: "true", false: "false"}[lt.Usable]
				for _, p := range lt.Params {
					s += " " + p.Name + "=" + strings.Join(p.Path, ".")
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ListedTools(%s) = %q, want %q", tt.result, got, tt.want)
			}
		})
	}
}
