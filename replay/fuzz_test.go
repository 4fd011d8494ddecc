package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/store"
)

// recordingExchange collects what the session writes for one frame.
type recordingExchange struct {
	mu       sync.Mutex
	msgs     [][]byte
	dones    int
	finished chan struct{}
}

func newRecordingExchange() *recordingExchange {
	return &recordingExchange{finished: make(chan struct{}, 1)}
}

func (e *recordingExchange) send(m []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.msgs = append(e.msgs, m)
	return nil
}

func (e *recordingExchange) reply(m []byte, _ bool) error { return e.send(m) }

func (*recordingExchange) refuse(int, bool, *HTTPRefusal) error { return errNoStatus }

func (e *recordingExchange) done() {
	e.mu.Lock()
	e.dones++
	e.mu.Unlock()
	e.finished <- struct{}{}
}

func fuzzCassette(tb testing.TB) *Cassette {
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
	}
	s := store.TapeSession{Info: store.SessionInfo{ID: "s1"}}
	for i, l := range lines {
		dir := store.C2S
		if i == 1 || i == 3 || i == 4 {
			dir = store.S2C
		}
		s.Messages = append(s.Messages, &store.Message{Session: "s1", Seq: uint64(i + 1), Dir: dir, Frame: []byte(l)})
	}
	c, err := NewCassette("fuzz.db", &store.Tape{Sessions: []store.TapeSession{s}})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// FuzzHandle: whatever a client sends, the session answers with valid
// JSON-RPC (or nothing), finishes the exchange exactly once, and never
// panics or stalls.
func FuzzHandle(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"},"_meta":{"progressToken":"t"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":3}`,
		`{"jsonrpc":`, `null`, ``, `"\u0000"`,
	} {
		f.Add([]byte(seed))
	}
	srv, err := NewServer([]Source{fuzzCassette(f)}, Options{CallTimeout: 50 * time.Millisecond})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		sess := srv.newSession(context.Background(), func([]byte) error { return nil }, nil)
		ex := newRecordingExchange()
		sess.handle(frame, ex)
		select {
		case <-ex.finished:
		case <-time.After(5 * time.Second):
			// A hung (NoReply) request, or a progress barrier waiting for
			// a ping reply, only ends with the session.
			sess.close()
			<-ex.finished
		}
		sess.close()
		ex.mu.Lock()
		defer ex.mu.Unlock()
		if ex.dones != 1 {
			t.Fatalf("exchange finished %d times", ex.dones)
		}
		for _, m := range ex.msgs {
			if !json.Valid(m) {
				t.Fatalf("wrote invalid JSON %q for %q", m, frame)
			}
		}
	})
}

// FuzzCanonParams: canonical params are valid JSON, stable, and accepted
// exactly when the input is valid JSON.
func FuzzCanonParams(f *testing.F) {
	for _, seed := range []string{
		`{"b":1,"a":[1,2,{"y":"\u00e9","x":null}],"_meta":{"progressToken":3,"k":"v"}}`,
		`{"_meta":{"progressToken":1}}`, `[1, 2]`, `"s"`, `{"a":"\/<>&"}`, `{"a":1e5,"b":-0.5}`, `{`, `{"a":01}`,
		`{"k":"[redacted]","l":["[redacted]"],"m":{"\u006b":"\u005bredacted]"},"[redacted]":1,"n":"x\"[redacted]"}`,
		`{"name":"t","task":{"ttl":1},"\u0074ask":[1],"arguments":{"task":2}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		for _, method := range []string{"tools/call", "initialize", "ping", "tasks/get"} {
			sameAsRef(t, method, params)
			// Canonical params that may hold a "[redacted]" member are
			// said to: loading looks for them only then.
			canon, _, redacted, ok := appendCanonNoted(nil, method, params)
			if r := (redactedNames{}); ok && !redacted {
				if r.add(method, canon); len(r) > 0 {
					t.Fatalf("%s %q: redacted members %v not noted", method, params, r)
				}
			}
		}
		canon, ok := canonParams("tools/call", params)
		if ok != json.Valid(params) && len(bytes.Trim(params, " \t\r\n")) > 0 { // blank = absent
			t.Fatalf("canonParams(%q) ok=%v, json.Valid=%v", params, ok, json.Valid(params))
		}
		if !ok || canon == "" {
			return
		}
		if !json.Valid([]byte(canon)) {
			t.Fatalf("canonParams(%q) = %q: not JSON", params, canon)
		}
		again, _ := canonParams("tools/call", json.RawMessage(canon))
		if again != canon {
			t.Fatalf("not stable: %q → %q → %q", params, canon, again)
		}
	})
}

// sameAsRef fails t unless appendCanonToken writes what the reference
// writes: match keys, and the progress token dropped, must not change.
func sameAsRef(t *testing.T, method string, params []byte) {
	t.Helper()
	want, wantTok, wantOK := appendCanonTokenRef([]byte("m\x00"), method, params)
	// Keys are appended after the method, into a buffer with room to
	// spare or (in a loader's arena) with none.
	for _, prefix := range [][]byte{append(make([]byte, 0, 4096), "m\x00"...), []byte("m\x00")[:2:2]} {
		got, gotTok, gotOK := appendCanonToken(prefix, method, params)
		if gotOK != wantOK || !bytes.Equal(got, want) || !bytes.Equal(gotTok, wantTok) {
			t.Fatalf("%s %q: canon %q %q %v, reference %q %q %v", method, params, got, gotTok, gotOK, want, wantTok, wantOK)
		}
	}
}

// TestCanonParams_SameAsRef holds the one-pass canonical form to the
// reference on the cases that matter: order, escapes, what is dropped,
// duplicates, nesting at JSON's limit and past it, invalid input.
func TestCanonParams_SameAsRef(t *testing.T) {
	deep := func(n int, open, close string) string {
		return `{"a":` + strings.Repeat(open, n) + strings.Repeat(close, n) + `}`
	}
	tests := []struct{ name, params string }{
		{"sorted", `{"a":1,"b":[true,false,null],"c":"x"}`},
		{"unsorted nested", `{"name":"echo","arguments":{"i":100000,"text":"words"}}`},
		{"white space", " { \"b\" : [ 1 , { \"y\" : 2 , \"x\" : 3 } ] , \"a\" : { } } "},
		{"escaped keys and values", `{"\u0062":"\u00e9\/","a\n":"\"q\"","c":"\ud800"}`},
		{"escaped key sorts decoded", `{"\u007a":1,"y":2,"\u0061":3}`},
		{"duplicate keys keep order", `{"b":1,"a":2,"b":3,"a":4}`},
		{"meta dropped", `{"_meta":{"progressToken":"t","traceparent":"x","keep":1},"name":"n"}`},
		{"meta emptied", `{"name":"n","_meta":{"progressToken":7}}`},
		{"meta only", `{"_meta":{"progressToken":7,"otel.x":1}}`},
		{"two metas", `{"_meta":{"progressToken":1},"_meta":{"progressToken":2,"k":1}}`},
		{"meta not an object", `{"_meta":[1],"a":1}`},
		{"nested meta kept", `{"a":{"_meta":{"progressToken":1}}}`},
		{"initialize drops", `{"protocolVersion":"x","clientInfo":{"name":"c"},"capabilities":{},"z":1}`},
		{"no arguments", `{"name":"n","arguments":{ }}`}, {"null arguments", `{"arguments":null,"name":"n"}`},
		{"arguments only", `{"arguments":{}}`}, {"some arguments", `{"arguments":{"a":{}},"name":"n"}`},
		{"a long member moved first", `{"name":"t","arguments":{"blob":"` + strings.Repeat("x", 300) + `"}}`},
		{"a short member moved past long ones", `{"z":"` + strings.Repeat("y", 300) + `","m":[1,"` + strings.Repeat("w", 100) + `"],"a":1}`},
		{"long members reversed", `{"c":"` + strings.Repeat("c", 100) + `","b":"` + strings.Repeat("b", 90) + `","a":"` + strings.Repeat("a", 110) + `"}`},
		{"many members reversed", `{"t":1,"s":2,"r":3,"q":4,"p":5,"o":6,"n":7,"m":8,"l":9,"k":10,"j":11,"i":12,"h":13,"g":14,"f":15,"e":16,"d":17,"c":18}`},
		{"array top", `[{"b":1,"a":2},[],{}]`},
		{"string top", `"s\u0041"`},
		{"number top", `-1.5e3`},
		{"empty", `{}`}, {"null", `null`}, {"blank", " "},
		{"depth at limit", deep(9999, "[", "]")},
		{"depth past limit", deep(10000, "[", "]")},
		{"objects at limit", `{"a":` + strings.Repeat(`{"a":`, 9998) + `1` + strings.Repeat(`}`, 9999)},
		{"objects past limit", `{"a":` + strings.Repeat(`{"a":`, 9999) + `1` + strings.Repeat(`}`, 10000)},
		{"deep in meta", `{"_meta":{"progressToken":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`},
		{"deep in dropped meta", `{"_meta":{"progressToken":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}}`},
		{"trailing", `{"a":1} x`}, {"trailing comma", `{"a":1,}`}, {"missing colon", `{"a" 1}`},
		{"bad number", `{"a":01}`}, {"bad literal", `{"a":tru}`}, {"bad escape", `{"a":"\x"}`},
		{"control byte", "{\"a\":\"\x01\"}"}, {"invalid UTF-8", "{\"a\":\"\xff\",\"\xfe\":1}"},
		{"unclosed", `{"a":[1,2`}, {"two values", `1 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.params) > 1000 {
				// The reference takes seconds on deep nesting: hold the
				// limit to json.Valid's instead.
				if _, _, ok := appendCanonToken(nil, "tools/call", []byte(tt.params)); ok != json.Valid([]byte(tt.params)) {
					t.Fatalf("ok=%v, json.Valid=%v", ok, !ok)
				}
				return
			}
			for _, method := range []string{"tools/call", "initialize", "tools/list"} {
				sameAsRef(t, method, []byte(tt.params))
			}
		})
	}
}

func TestCanonParams(t *testing.T) {
	tests := []struct {
		name, method, a, b string
		same               bool
	}{
		{"key order and space", "tools/call", `{"name":"e","arguments":{"x":1,"y":2}}`, `{ "arguments" : {"y":2, "x":1}, "name":"e" }`, true},
		{"string escapes", "tools/call", `{"name":"\u00e9\/"}`, `{"name":"é/"}`, true},
		{"progress token and tracing", "tools/call", `{"name":"e","_meta":{"progressToken":1,"traceparent":"00-a"}}`, `{"name":"e"}`, true},
		{"W3C trace state", "tools/call", `{"name":"e","_meta":{"tracestate":"a=1"}}`, `{"name":"e"}`, true},
		{"W3C baggage", "tools/call", `{"name":"e","_meta":{"baggage":"user=1"}}`, `{"name":"e"}`, true},
		{"Sentry trace", "tools/call", `{"name":"e","_meta":{"sentry-trace":"abc-1"}}`, `{"name":"e"}`, true},
		{"OpenTelemetry keys", "tools/call", `{"name":"e","_meta":{"otel.trace_id":"t1"}}`, `{"name":"e","_meta":{"otel.trace_id":"t2"}}`, true},
		{"stateless-era meta", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"x"}}}`, ``, true},
		{"other meta kept", "tools/call", `{"name":"e","_meta":{"app":1}}`, `{"name":"e"}`, false},
		{"initialize client", "initialize", `{"protocolVersion":"2025-06-18","clientInfo":{"name":"a"},"capabilities":{"roots":{}}}`, `{"protocolVersion":"2025-11-25","clientInfo":{"name":"b"},"capabilities":{}}`, true},
		{"clientInfo elsewhere kept", "tools/call", `{"clientInfo":1}`, `{"clientInfo":2}`, false},
		{"numbers by value", "tools/call", `{"n":1,"m":[100,0.5]}`, `{"n":1.0,"m":[1e2,5E-1]}`, true},
		{"numbers of other values", "tools/call", `{"n":1}`, `{"n":1.0000000000000000001}`, false},
		{"absent, null, empty", "tools/list", `null`, `{}`, true},
		{"a call's arguments absent or {}", "tools/call", `{"name":"e"}`, `{"name":"e","arguments":{}}`, true},
		{"a call's arguments absent or null", "tools/call", `{"name":"e"}`, `{"name":"e","arguments":null}`, true},
		{"a prompt's arguments absent or {}", "prompts/get", `{"name":"p","arguments":{}}`, `{"name":"p"}`, true},
		{"an empty argument kept", "tools/call", `{"name":"e","arguments":{"a":{}}}`, `{"name":"e","arguments":{}}`, false},
		{"arguments of other methods kept", "completion/complete", `{"arguments":{}}`, ``, false},
		{"values differ", "tools/call", `{"name":"a"}`, `{"name":"b"}`, false},
		{"a retry's requestState", "tools/call", `{"name":"e","requestState":"run1","inputResponses":{"a":{"action":"accept"}}}`, `{"name":"e","requestState":"run2","inputResponses":{"a":{"action":"accept"}}}`, true},
		{"a retry's input kept", "prompts/get", `{"name":"e","requestState":"s","inputResponses":{"a":{"action":"accept"}}}`, `{"name":"e","requestState":"s","inputResponses":{"a":{"action":"decline"}}}`, false},
		{"requestState nested kept", "tools/call", `{"name":"e","arguments":{"requestState":1}}`, `{"name":"e","arguments":{"requestState":2}}`, false},
		{"requestState of other methods kept", "completion/complete", `{"requestState":1}`, `{"requestState":2}`, false},
		{"a poll's task metadata", "tasks/get", `{"taskId":"t1","task":{"ttl":60000}}`, `{"taskId":"t1"}`, true},
		{"a result fetch's task metadata", "tasks/result", `{"taskId":"t1","task":{"ttl":60000}}`, `{"taskId":"t1","task":{}}`, true},
		{"polls of two tasks", "tasks/get", `{"taskId":"t1"}`, `{"taskId":"t2"}`, false},
		{"a task call's ttl", "tools/call", `{"name":"e","task":{"ttl":60000}}`, `{"name":"e","task":{"ttl":1000}}`, true},
		{"a task call is not a plain call", "tools/call", `{"name":"e","task":{}}`, `{"name":"e"}`, false},
		{"task nested kept", "tools/call", `{"name":"e","arguments":{"task":{"ttl":1}}}`, `{"name":"e","arguments":{"task":{"ttl":2}}}`, false},
		{"task of other methods kept", "prompts/get", `{"name":"p","task":{"ttl":1}}`, `{"name":"p","task":{"ttl":2}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, okA := canonParams(tt.method, json.RawMessage(tt.a))
			b, okB := canonParams(tt.method, json.RawMessage(tt.b))
			if !okA || !okB {
				t.Fatalf("canonParams failed: %v %v", okA, okB)
			}
			if (a == b) != tt.same {
				t.Errorf("canon %q vs %q: same=%v, want %v", a, b, a == b, tt.same)
			}
		})
	}
}

func TestParseMatch(t *testing.T) {
	tests := []struct {
		mode    string
		wantErr bool
	}{
		{"", false}, {"default", false}, {"strict", false}, {"ignore-params", false},
		{"ignore-params=tools/list,resources/read", false},
		{"ignore-params=", true}, {"ignore-params=a,,b", true}, {"loose", true},
	}
	for _, tt := range tests {
		_, err := parseMatch(tt.mode)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseMatch(%q) error = %v, want error %v", tt.mode, err, tt.wantErr)
		}
	}
}

// An answer drops its requestState (an input_required answer's opaque
// state) when compared, and nothing else: initialize's answer keeps the
// protocolVersion and capabilities its request drops.
func TestAnswerCanonMethod(t *testing.T) {
	for method, want := range map[string]string{"tools/call": "tools/call", "prompts/get": "prompts/get", "resources/read": "resources/read", "initialize": "", "tools/list": ""} {
		if got := answerCanonMethod(method); got != want {
			t.Errorf("answerCanonMethod(%q) = %q, want %q", method, got, want)
		}
	}
	a, _ := canonParams(answerCanonMethod("initialize"), json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{}}`))
	b, _ := canonParams(answerCanonMethod("initialize"), json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{}}`))
	if a == b {
		t.Errorf("initialize answers of two versions compare the same: %s", a)
	}
	// A CreateTaskResult is the server's: its task compares whole, though
	// a call's own task metadata counts by presence alone.
	ta, _ := canonAnswer("tools/call", json.RawMessage(`{"task":{"taskId":"a","status":"working"}}`))
	tb, _ := canonAnswer("tools/call", json.RawMessage(`{"task":{"taskId":"b","status":"working"}}`))
	if string(ta) == string(tb) {
		t.Errorf("two CreateTaskResults compare the same: %s", ta)
	}
}
