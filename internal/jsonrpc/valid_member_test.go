package jsonrpc

import (
	"bytes"
	"strings"
	"testing"
)

func TestMemberOfValid(t *testing.T) {
	tests := []struct {
		name string
		b    string
		path []string
		want string // "<nil>" for nil
	}{
		{"nested", `{"params":{"name":"x","_meta":{"progressToken":7}}}`, []string{"params", "_meta", "progressToken"}, `7`},
		{"white space", " { \"params\" :\n{ \"_meta\" : { \"a\" : [ 1 , \"]\" ] } } } ", []string{"params", "_meta"}, `{ "a" : [ 1 , "]" ] }`},
		{"escaped quotes and brackets in strings", `{"a":"x\"}{","b":{"c":"\\"},"_meta":true}`, []string{"_meta"}, `true`},
		{"escaped key", `{"_m\u0065ta":1}`, []string{"_meta"}, `1`},
		{"last of repeated names", `{"_meta":1,"x":[{}],"_meta":2}`, []string{"_meta"}, `2`},
		{"missing", `{"params":{"name":"x"}}`, []string{"params", "_meta"}, "<nil>"},
		{"not an object on the way", `{"params":[{"_meta":1}]}`, []string{"params", "_meta"}, "<nil>"},
		{"empty object", `{}`, []string{"a"}, "<nil>"},
		{"number then member", `{"a":-1.5e3,"b":null}`, []string{"b"}, `null`},
		{"no path", `{"a":1}`, nil, `{"a":1}`},
		// Not valid JSON: any answer, but an answer.
		{"unterminated string", `{"a":"x`, []string{"a"}, "<nil>"},
		{"unterminated object", `{"a":{"b":1`, []string{"a", "b"}, "<nil>"},
		{"missing colon", `{"a" 1}`, []string{"a"}, "<nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MemberOfValid([]byte(tt.b), tt.path...)
			if s := string(got); got == nil && tt.want != "<nil>" || got != nil && s != tt.want {
				t.Errorf("MemberOfValid(%s, %q) = %q, want %s", tt.b, tt.path, got, tt.want)
			}
		})
	}
}

// BenchmarkMemberOfValid_BigCall: finding params._meta in a 16 MiB
// tools/call whose arguments come after it, unchecked against Member's
// validating scan, side by side.
func BenchmarkMemberOfValid_BigCall(b *testing.B) {
	params := []byte(`{"name":"upload","_meta":{"progressToken":"p"},"arguments":{"blob":"` + strings.Repeat("A", 16<<20) + `","n":[1,2,3]}}`)
	want := []byte(`{"progressToken":"p"}`)
	for _, bm := range []struct {
		name string
		find func([]byte, ...string) []byte
	}{{"unchecked", MemberOfValid}, {"validating", Member}} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(params)))
			for b.Loop() {
				if got := bm.find(params, "_meta"); !bytes.Equal(got, want) {
					b.Fatalf("%q", got)
				}
			}
		})
	}
}
