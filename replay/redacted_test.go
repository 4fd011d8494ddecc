package replay_test

import (
	"strings"
	"testing"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/replay/mocktest"
)

// A shared cassette with its secrets blanked (mcpspy export --redact)
// still answers: a redacted recorded value matches any live value, and
// only there.
func TestServer_RedactedValuesMatchAnyValue(t *testing.T) {
	tape := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"cats","api_key":"[redacted]"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"cats found"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"dogs","api_key":"[redacted]"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"dogs found"}]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"login","arguments":{"auth":{"user":"[redacted]","password":"[redacted]"}}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"welcome"}]}}`,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"q":"owls","api_key":"k-recorded"}}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"owls, exactly"}]}}`,
		`> {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"list":["[redacted]"]}}}`,
		`< {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"a list"}]}}`,
	}
	s := mocktest.New(t, []replay.Source{cassetteOf(t, tape...)})
	c := dial(t, s)
	steps := []struct{ name, send, want string }{
		{"a live key in place of a redacted one",
			`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"search","arguments":{"api_key":"sk-live","q":"dogs"}}}`, "dogs found"},
		{"the other params still count",
			`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"search","arguments":{"api_key":"sk-live","q":"cats"}}}`, "cats found"},
		{"any JSON value, two names in one request",
			`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"login","arguments":{"auth":{"password":{"otp":123},"user":"ann"}}}}`, "welcome"},
		{"an exact match comes first",
			`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"search","arguments":{"api_key":"k-recorded","q":"owls"}}}`, "owls, exactly"},
		{"a redacted request for other params does not match",
			`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"search","arguments":{"api_key":"sk-live","q":"owls"}}}`, "no recorded answer for tools/call"},
		{"a missing member is not a redacted one",
			`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"search","arguments":{"q":"dogs"}}}`, "no recorded answer for tools/call"},
		{"a redacted array element is not a wildcard",
			`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"echo","arguments":{"list":["x"]}}}`, "no recorded answer for tools/call"},
	}
	for _, st := range steps {
		if got := c.roundTrip(st.send); !strings.Contains(got, st.want) {
			t.Errorf("%s:\n sent %s\n got  %s\n want %q in it", st.name, st.send, got, st.want)
		}
	}
}
