package mcphttp

import (
	"net/http"
	"strings"
	"testing"
)

func TestDecodeValue(t *testing.T) {
	for _, s := range []string{"plain", "", " padded ", "ünïcode", "=?base64?looks?=", "tab\there"} {
		got, ok := DecodeValue(EncodeValue(s))
		if !ok || got != s {
			t.Errorf("DecodeValue(EncodeValue(%q)) = %q, %v", s, got, ok)
		}
	}
	if _, ok := DecodeValue("=?base64?not base64!?="); ok {
		t.Error("a sentinel around text that is not Base64 decoded")
	}
	if got, ok := DecodeValue("=?base64?half"); !ok || got != "=?base64?half" {
		t.Errorf("a value with only the prefix: %q, %v; want it as it stands", got, ok)
	}
}

func TestCheckParams(t *testing.T) {
	params := []ParamHeader{{Name: "Region", Path: []string{"region"}}, {Name: "Count", Path: []string{"opts", "count"}}}
	call := func(args string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":` + args + `}}`)
	}
	tests := []struct {
		name    string
		args    string
		headers map[string]string
		wantErr string // "" for none
	}{
		{"both right", `{"region":"eu","opts":{"count":3}}`, map[string]string{"Region": "eu", "Count": "3"}, ""},
		{"integer in another form", `{"region":"eu","opts":{"count":3.0}}`, map[string]string{"Region": "eu", "Count": "3"}, ""},
		{"encoded value", `{"region":"Zürich"}`, map[string]string{"Region": EncodeValue("Zürich")}, ""},
		{"absent argument, no header", `{}`, nil, ""},
		{"null argument, no header", `{"region":null}`, nil, ""},
		{"missing header", `{"region":"eu"}`, nil, "Mcp-Param-Region is missing; argument region is \"eu\""},
		{"header for an absent argument", `{}`, map[string]string{"Count": "3"}, "Mcp-Param-Count is sent, but argument opts.count is absent or null"},
		{"other value", `{"region":"eu"}`, map[string]string{"Region": "us"}, `Mcp-Param-Region is "us"; argument region is "eu"`},
		{"not a primitive", `{"region":{"a":1}}`, map[string]string{"Region": "x"}, "can carry only a string, integer or boolean"},
		{"bad Base64", `{"region":"eu"}`, map[string]string{"Region": "=?base64?%%?="}, "is not valid =?base64?…?= text"},
		{"boolean", `{"region":true}`, map[string]string{"Region": "true"}, ""},
		{"empty string, empty header (go-sdk's client)", `{"region":""}`, map[string]string{"Region": ""}, ""},
		{"empty string, its Base64 form", `{"region":""}`, map[string]string{"Region": "=?base64??="}, ""},
		{"an empty header for an absent argument", `{}`, map[string]string{"Region": ""}, "Mcp-Param-Region is sent, but argument region is absent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set("Mcp-Param-"+k, v)
			}
			err := CheckParams(h, call(tt.args), params)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
	// What SetParams sets, CheckParams accepts.
	h := http.Header{}
	frame := call(`{"region":" spaced ","opts":{"count":-7}}`)
	SetParams(h, frame, params)
	if err := CheckParams(h, frame, params); err != nil {
		t.Errorf("SetParams then CheckParams: %v", err)
	}
}
