package replay

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// peekBody reads what encoding/json read before it (json.Valid, then
// json.Unmarshal into the same fields), for bodies whose names are
// written exactly: the id, method, params' name, uri and _meta, and
// whether the body is valid JSON at all.
func TestPeekBody(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":[1,{"y":null}]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p"}}}`,
		`{"jsonrpc":"2.0","id":"a\u0062","method":"resources/read","params":{"uri":"file:///x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"x","params":null}`,
		`{"jsonrpc":"2.0","id":3,"method":"x","params":{"_meta":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"x","params":{"_meta":{"a\u0062":1}}}`,
		`{"jsonrpc":"2.0","id":4,"method":7,"params":[1,2]}`,
		`{"id":5,"id":6,"method":"a","method":"b"}`,
		` [{"jsonrpc":"2.0","id":1,"method":"ping"}] `,
		`"just a string"`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} x`,
		`[1,]`,
		``,
	} {
		t.Run(body, func(t *testing.T) {
			got, valid := peekBody([]byte(body))
			var want peek
			if wantValid := json.Valid([]byte(body)); valid != wantValid {
				t.Fatalf("valid = %v, json.Valid says %v", valid, wantValid)
			}
			if !valid {
				return
			}
			var old struct {
				ID     json.RawMessage `json:"id"`
				Method json.RawMessage `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal([]byte(body), &old) == nil {
				want.ID = old.ID
				_ = json.Unmarshal(old.Method, &want.Method)
				var params struct {
					Meta map[string]json.RawMessage `json:"_meta"`
					Name json.RawMessage            `json:"name"`
					URI  json.RawMessage            `json:"uri"`
				}
				if json.Unmarshal(old.Params, &params) == nil {
					want.Params.Name, want.Params.URI = params.Name, params.URI
					if len(params.Meta) > 0 {
						want.Params.Meta = params.Meta
					}
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("peekBody = %+v\nwant        %+v", got, want)
			}
		})
	}
}

// BenchmarkPeekBody_BigCall: what routing reads of a 16 MiB tools/call
// posted to mcpmock.
func BenchmarkPeekBody_BigCall(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upload","arguments":{"blob":"` +
		strings.Repeat("A", 16<<20) + `"}}}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, valid := peekBody(body); !valid {
			b.Fatal("invalid")
		}
	}
}
