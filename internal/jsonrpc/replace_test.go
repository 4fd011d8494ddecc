package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var redactedJSON = []byte(`"[redacted]"`)

func named(names ...string) func([]string, string) bool {
	return func(_ []string, n string) bool {
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
		{"in an array at the top", `[{"password":1}]`, []string{"password"}, `[{"password":"[redacted]"}]`, 1, true},
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
		`[{"key":{"key":2}},"key"]`, `{"k\u0065y":1,"KEY":[true]}`, `{"skip":{"key":1},"a":{"key":2}}`, "\xff", `{"key":"\xff"}`} {
		f.Add([]byte(s), "key", 0)
		f.Add([]byte(s), "key", 1)
	}
	f.Fuzz(func(t *testing.T, b []byte, name string, minDepth int) {
		minDepth = minDepth % 4 // 0 to 3, or lower for negative input
		match := func(path []string, n string) bool {
			// Also a rule on the path's names, as export's is.
			return len(path) >= minDepth && strings.EqualFold(n, name) && !slices.Contains(path, "skip")
		}
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
		changed := redactTree(&want, nil, match)
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
// path names the members enclosing *v.
func redactTree(v *any, path []string, match func([]string, string) bool) (changed bool) {
	switch t := (*v).(type) {
	case map[string]any:
		for k, c := range t {
			if match(path, k) {
				t[k] = "[redacted]"
				changed = true
				continue
			}
			changed = redactTree(&c, append(slices.Clip(path), k), match) || changed
			t[k] = c
		}
	case []any:
		for i := range t {
			changed = redactTree(&t[i], path, match) || changed
		}
	}
	return changed
}

// match sees the names enclosing each member; arrays add none.
func TestReplaceMembers_Path(t *testing.T) {
	var seen []string
	in := `{"params":{"arguments":{"list":[{"key":1}]},"k\u0065y":{"x":2}},"id":1}`
	out, n, ok := ReplaceMembers([]byte(in), func(path []string, name string) bool {
		seen = append(seen, strings.Join(append(slices.Clip(path), name), "."))
		return name == "x"
	}, redactedJSON)
	want := []string{"params.arguments.list.key", "params.arguments.list", "params.arguments", "params.key.x", "params.key", "params", "id"}
	if !slices.Equal(seen, want) {
		t.Errorf("paths seen %q, want %q", seen, want)
	}
	if string(out) != `{"params":{"arguments":{"list":[{"key":1}]},"k\u0065y":{"x":"[redacted]"}},"id":1}` || n != 1 || !ok {
		t.Errorf("got %s, %d, %v", out, n, ok)
	}
}
