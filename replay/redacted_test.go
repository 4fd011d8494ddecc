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

// Ignore leaves the named members out of matching, on both sides: a host
// that stamps each call with a fresh id and time still gets the recorded
// answers, in recorded order; the other params still count.
func TestCassette_Ignore(t *testing.T) {
	tape := tapeOf(t,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","arguments":{"msg":"a","requestId":"r-1","meta":{"ts":1700000000}}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"logged a"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"log","arguments":{"msg":"a","requestId":"r-2","meta":{"ts":1700000005}}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"logged a again"}]}}`,
	)
	c, err := replay.NewCassette("test.db", tape, replay.Ignore("requestId", "ts"))
	if err != nil {
		t.Fatal(err)
	}
	s := mocktest.New(t, []replay.Source{c})
	cl := dial(t, s)
	for _, st := range []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"log","arguments":{"msg":"a","requestId":"live-9","meta":{"ts":1800000000}}}}`, "logged a"},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"log","arguments":{"meta":{"ts":5},"msg":"a","requestId":"live-10"}}}`, "logged a again"},
		{`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"log","arguments":{"msg":"b","requestId":"live-11","meta":{"ts":5}}}}`, "no recorded answer for tools/call"},
		{`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"log","arguments":{"msg":"a","meta":{"ts":5}}}}`, "no recorded answer for tools/call"},
	} {
		if got := cl.roundTrip(st.send); !strings.Contains(got, st.want) {
			t.Errorf("sent %s\n got  %s\n want %q in it", st.send, got, st.want)
		}
	}
	// The miss names what differs, not the ignored members.
	if w := s.Warnings(); !strings.Contains(w, `+ params.arguments.msg="b"`) || strings.Contains(w, `requestId="live-11"`) {
		t.Errorf("unmatched warning:\n%s", w)
	}

	// Without Ignore, the same first request misses.
	plain := mocktest.New(t, []replay.Source{cassetteOf(t, `> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","arguments":{"msg":"a","requestId":"r-1"}}}`, `< {"jsonrpc":"2.0","id":1,"result":{}}`)})
	if got := dial(t, plain).roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","arguments":{"msg":"a","requestId":"other"}}}`); !strings.Contains(got, "no recorded answer") {
		t.Errorf("without Ignore: %s", got)
	}
}
