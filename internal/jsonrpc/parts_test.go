package jsonrpc

import (
	"fmt"
	"testing"
)

// FuzzMembersSplit: MembersSplit sees what Members sees, and the parts it
// splits out are what RawMembers finds in the value, the last of each
// name counting.
func FuzzMembersSplit(f *testing.F) {
	for _, s := range []string{
		`{"session":"s1","seq":1,"message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}}`,
		`{"message":{"id":1,"id":"2","result":{}},"message":[1]}`,
		`{"message":[1],"m\u0065ssage":{"error":{"code":1}}}`,
		`{"message":{"\u0069d":1,"result":null}}`,
		`{"message":{} }`, ` {"message" : { "id" : 1 } } `, `{"message":null}`, `{}`, `{"a":1,}`, `{"message":{"id":1}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []string
		var last []byte // the last "message" value
		wantOK := Members(b, func(name, v []byte) {
			want = append(want, string(name)+"="+string(v))
			if string(name) == "message" {
				last = v
			}
		})
		var got []string
		var parts Parts
		ok, split := MembersSplit(b, "message", &parts, func(name, v []byte) { got = append(got, string(name)+"="+string(v)) })
		if ok != wantOK {
			t.Fatalf("MembersSplit(%q) ok=%v, Members %v", b, ok, wantOK)
		}
		if !ok {
			if split {
				t.Fatalf("MembersSplit(%q): split but not ok", b)
			}
			return
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("MembersSplit(%q) members %q, Members %q", b, got, want)
		}
		isObject := len(last) > 0 && last[0] == '{'
		if split != isObject {
			t.Fatalf("MembersSplit(%q) split=%v, last message %q", b, split, last)
		}
		if !split {
			return
		}
		var wp Parts
		if !RawMembers(last, func(k, v []byte) {
			vs := cap(last) - cap(v) // v is last[vs:…]
			wp.note(k, vs, vs+len(v), 0)
		}) {
			t.Fatalf("%q: the message is not an object to RawMembers", last)
		}
		for _, sp := range []struct {
			name      string
			got, want Span
		}{{"id", parts.ID, wp.ID}, {"method", parts.Method, wp.Method}, {"params", parts.Params, wp.Params}, {"result", parts.Result, wp.Result}, {"error", parts.Error, wp.Error}} {
			if sp.got != sp.want {
				t.Fatalf("%q: %s is %q, RawMembers finds %q", b, sp.name, sp.got.Of(last), sp.want.Of(last))
			}
		}
	})
}
