package script

import (
	"strings"
	"testing"
)

// A call no answer matches is told which answer came nearest (the fewest
// points missed, the first of those) and what it missed, as a cassette's
// unmatched request is told the nearest recorded one.
func TestNoAnswer_NamesTheNearestAnswer(t *testing.T) {
	s, err := Parse("near.yaml", []byte(`server: {name: near, version: "1"}
tools:
  - name: book
    answers:
      - when: {exact: {city: Oslo, nights: 2, extra: {bed: true}}}
        text: a
      - when: {exact: {city: Oslo, nights: 3}}
        text: b
      - when: {subset: {guest: {name: Ada, vip: true}}, regex: {code: "^[A-Z]{3}$"}}
        text: c
  - name: long
    answers:
      - when: {exact: {a: 1, b: 2, c: 3, d: 4, e: 5}}
        text: d
      - when: {exact: {blob: small}}
        text: e
`))
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "mcpmock script: no answer of tool "
	long := strings.Repeat("é", 40)
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"one value differs", "book", map[string]any{"city": "Oslo", "nights": 4},
			`"book" matches the arguments {"city":"Oslo","nights":4}; nearest: the answer at line 7: arguments.nights is 4, want 3`},
		{"a member exact does not have", "book", map[string]any{"city": "Oslo", "nights": 3, "pets": 1},
			`"book" matches the arguments {"city":"Oslo","nights":3,"pets":1}; nearest: the answer at line 7: arguments.pets is 1, which exact does not have`},
		{"subset nested, and regex", "book", map[string]any{"guest": map[string]any{"name": "Ada", "vip": false}, "code": "abc"},
			`"book" matches the arguments {"code":"abc","guest":{"name":"Ada","vip":false}}; nearest: the answer at line 9: arguments.guest.vip is false, want true; arguments.code is "abc", which ^[A-Z]{3}$ does not match`},
		{"a regex argument missing or not a string", "book", map[string]any{"guest": map[string]any{"name": "Ada", "vip": true}, "code": 7},
			`"book" matches the arguments {"code":7,"guest":{"name":"Ada","vip":true}}; nearest: the answer at line 9: arguments.code is 7, want a string matching ^[A-Z]{3}$`},
		{"the fewest missed wins", "long", map[string]any{},
			`"long" matches the arguments {}; nearest: the answer at line 15: arguments.blob is missing, want "small"`},
		{"three named, the rest counted", "long", map[string]any{"a": 0, "b": 0, "c": 3, "d": 0, "e": 0, "blob": "x"},
			`"long" matches the arguments {"a":0,"b":0,"blob":"x","c":3,"d":0,"e":0}; nearest: the answer at line 13: arguments.a is 0, want 1; arguments.b is 0, want 2; arguments.d is 0, want 4; and 2 more`},
		{"a long value cut, not inside a character", "long", map[string]any{"blob": long},
			`"long" matches the arguments {"blob":"` + long + `"}; nearest: the answer at line 15: arguments.blob is "` + strings.Repeat("é", 31) + `…(82 bytes), want "small"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, s)
			if got := firstText(t, c.result("tools/call", toolCall(tt.tool, tt.args))); got != prefix+tt.want {
				t.Errorf("got  %s\nwant %s", got, prefix+tt.want)
			}
		})
	}
}
