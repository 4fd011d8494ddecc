package fallback

import (
	"testing"
	"unsafe"
)

// The requests and notifications the fallback writes carry the live
// client's params as it wrote them (json.Marshal would copy them twice and
// turn < > & into \u003c …), on one line however the client broke them.
func TestMessage_ParamsAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"request", request(3, "tools/call", []byte(`{"name":"x","arguments":{"q":"<a> & b"}}`)),
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{"q":"<a> & b"}}}`},
		{"request without params", request(12, "ping", nil), `{"jsonrpc":"2.0","id":12,"method":"ping"}`},
		{"notification", notification("notifications/initialized", nil), `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"params on many lines", notification("notifications/roots/list_changed", []byte("{\n  \"a\": \"b\\nc\"\r\n}")),
			`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{   "a": "b\nc"` + "\r " + `}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if string(tc.got) != tc.want {
				t.Errorf("got  %s\nwant %s", tc.got, tc.want)
			}
		})
	}
}

// A server's answer is handed to the live request as the frame holds it,
// not copied: a 64 MiB result is held once.
func TestDeliver_ResultSharesTheFrame(t *testing.T) {
	u := &upstream{pending: map[string]*call{}}
	calls := map[string]*call{}
	for _, id := range []string{"3", "4"} {
		calls[id] = &call{done: make(chan answer, 1)}
		u.pending[id] = calls[id]
	}
	frame := []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"big"}]}}`)
	u.receive(frame, "")
	a := <-calls["3"].done
	if want := `{"content":[{"type":"text","text":"big"}]}`; string(a.result) != want || a.err != nil {
		t.Fatalf("answer %s, %v; want %s", a.result, a.err, want)
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(frame)))
	if at := uintptr(unsafe.Pointer(unsafe.SliceData(a.result))); at < start || at >= start+uintptr(len(frame)) {
		t.Error("the result is a copy, want it to share the frame's bytes")
	}

	u.receive([]byte(`{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"no such tool","data":{"tool":"x"}}}`), "")
	a = <-calls["4"].done
	if a.err == nil || a.err.Code != -32000 || a.err.Message != "no such tool" || string(a.err.Data) != `{"tool":"x"}` || a.result != nil {
		t.Errorf("answer %s, %+v; want the error -32000 no such tool with its data", a.result, a.err)
	}
}
