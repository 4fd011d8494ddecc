package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var redactedJSON = []byte(`"[redacted]"`)

func named(names ...string) func(string) bool {
	return func(n string) bool {
		for _, want := range names {
			if strings.EqualFold(n, want) {
				return true
			}
		}
		return false
	}
}

func TestReplaceMembers(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		names []string
		want  string
		n     int
		ok    bool
	}{
		{"nested member, bytes around it kept", `{"jsonrpc":"2.0", "id":7,"params":{"arguments":{"api_key" : "sk-1", "q":"x"}}}`, []string{"api_key"},
			`{"jsonrpc":"2.0", "id":7,"params":{"arguments":{"api_key" : "[redacted]", "q":"x"}}}`, 1, true},
		{"any value type, at every depth", `{"token":{"token":1},"a":[{"Token":[1,2]},{"token":null}]}`, []string{"token"},
			`{"token":"[redacted]","a":[{"Token":"[redacted]"},{"token":"[redacted]"}]}`, 3, true},
		{"escaped name", `{"api\u005fkey":"s"}`, []string{"api_key"}, `{"api\u005fkey":"[redacted]"}`, 1, true},
		{"a string equal to the name is not a member", `{"q":"password"}`, []string{"password"}, `{"q":"password"}`, 0, true},
		{"white space and newline around the value kept", " {\"password\":\"p\"}\n", []string{"password"}, " {\"password\":\"[redacted]\"}\n", 1, true},
		{"nothing named", `{"a":1}`, nil, `{"a":1}`, 0, true},
		{"not JSON", `{"password":"p"`, []string{"password"}, `{"password":"p"`, 0, false},
		{"two values", `{"password":1} {"password":2}`, []string{"password"}, `{"password":1} {"password":2}`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			out, n, ok := ReplaceMembers(in, named(tt.names...), redactedJSON)
			if string(out) != tt.want || n != tt.n || ok != tt.ok {
				t.Errorf("ReplaceMembers(%s) = %s, %d, %v; want %s, %d, %v", tt.in, out, n, ok, tt.want, tt.n, tt.ok)
			}
			if string(in) != tt.in {
				t.Errorf("the input changed to %s", in)
			}
		})
	}
}

// FuzzReplaceMembers holds ReplaceMembers to a reference written on
// encoding/json's decoded values: the same tree with the named members'
// values replaced, and the input's bytes untouched when nothing matched.
func FuzzReplaceMembers(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"key":"v"}}}`,
		`[{"key":{"key":2}},"key"]`, `{"k\u0065y":1,"KEY":[true]}`, "\xff", `{"key":"\xff"}`} {
		f.Add([]byte(s), "key")
	}
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		match := named(name)
		orig := bytes.Clone(b)
		out, n, ok := ReplaceMembers(b, match, redactedJSON)
		if !bytes.Equal(b, orig) {
			t.Fatalf("the input changed")
		}
		if ok != json.Valid(b) {
			t.Fatalf("ok = %v for %q, json.Valid says otherwise", ok, b)
		}
		if !ok || n == 0 {
			if !bytes.Equal(out, b) {
				t.Fatalf("nothing replaced (ok %v) but the bytes changed: %q → %q", ok, b, out)
			}
			if !ok {
				return
			}
		}
		got, err := decodeJSONValue(out)
		if err != nil {
			t.Fatalf("the result %q is not JSON: %v", out, err)
		}
		want, _ := decodeJSONValue(b)
		changed := redactTree(&want, match)
		if (n > 0) != changed {
			t.Fatalf("replaced %d values; the reference changed: %v", n, changed)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ReplaceMembers(%q) = %q; decoded it differs from the reference %#v", b, out, want)
		}
	})
}

func decodeJSONValue(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// redactTree is the reference: it replaces, in a decoded value, what
// ReplaceMembers replaces in bytes.
func redactTree(v *any, match func(string) bool) (changed bool) {
	switch t := (*v).(type) {
	case map[string]any:
		for k, c := range t {
			if match(k) {
				t[k] = "[redacted]"
				changed = true
				continue
			}
			changed = redactTree(&c, match) || changed
			t[k] = c
		}
	case []any:
		for i := range t {
			changed = redactTree(&t[i], match) || changed
		}
	}
	return changed
}
