package jsonrpc

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  Summary
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, Summary{Kind: Request, Method: "tools/list", ID: "1"}},
		{"string id stays quoted", `{"jsonrpc":"2.0","id":"1","method":"ping"}`, Summary{Kind: Request, Method: "ping", ID: `"1"`}},
		{"tool call with progress token", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"tok"}}}`,
			Summary{Kind: Request, Method: "tools/call", ID: "2", Tool: "echo", ProgressToken: `"tok"`}},
		{"notification", `{"method":"notifications/initialized","jsonrpc":"2.0"}`, Summary{Kind: Notification, Method: "notifications/initialized"}},
		{"progress notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1}}`,
			Summary{Kind: Notification, Method: "notifications/progress", ProgressToken: "5"}},
		{"result first, as the TS SDK writes", `{"result":{},"jsonrpc":"2.0","id":3}`, Summary{Kind: Response, ID: "3"}},
		{"isError result", `{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}`, Summary{Kind: Response, ID: "3", IsError: true}},
		{"input_required result", `{"jsonrpc":"2.0","id":3,"result":{"content":null,"resultType":"input_required","inputRequests":{}}}`, Summary{Kind: Response, ID: "3", InputRequired: true}},
		{"complete result", `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"x","resultType":"input_required"}],"resultType":"complete"}}`, Summary{Kind: Response, ID: "3"}},
		{"error", `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"x"}}`, Summary{Kind: Error, ID: "4", IsError: true, ErrorCode: -32601}},
		{"error with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, Summary{Kind: Error, IsError: true, ErrorCode: -32700}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, Summary{Kind: Batch}},
		{"surrounding space and CR", " {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r", Summary{Kind: Request, Method: "ping", ID: "1"}},
		{"not json", `hello`, Summary{Kind: Malformed, Reason: "invalid JSON"}},
		{"json but not an object", `"hello"`, Summary{Kind: Malformed, Reason: "not a JSON object"}},
		{"escaped key and method", `{"jsonrpc":"2.0","\u0069d":1,"method":"tools\/list"}`, Summary{Kind: Request, Method: "tools/list", ID: "1"}},
		{"keys are case-sensitive", `{"jsonrpc":"2.0","ID":1,"method":"x"}`, Summary{Kind: Notification, Method: "x"}},
		{"last duplicate wins", `{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`, Summary{Kind: Request, Method: "x", ID: "2"}},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"x"} x`, Summary{Kind: Malformed, Reason: "invalid JSON"}},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, Summary{Kind: Malformed, ID: "1", Reason: "method is not a string"}},
		{"empty", ``, Summary{Kind: Malformed, Reason: "empty frame"}},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"x"}`, Summary{Kind: Malformed, Reason: `jsonrpc is not "2.0"`}},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"x"}`, Summary{Kind: Malformed, Reason: "id is neither a string nor a number"}},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, Summary{Kind: Malformed, Reason: "result without id"}},
		{"nothing", `{"jsonrpc":"2.0","id":1}`, Summary{Kind: Malformed, ID: "1", Reason: "neither method, result nor error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify([]byte(tt.frame)); got != tt.want {
				t.Errorf("Classify(%s)\n got %+v\nwant %+v", tt.frame, got, tt.want)
			}
		})
	}
	if got := Classify([]byte(`{"jsonrpc":"2.0","id":1,"method":`)); got.Kind != Malformed {
		t.Errorf("truncated JSON classified as %v", got.Kind)
	}
}

// TestClassify_NestingLimit pins the one place a hand-written validator
// easily parts from json.Valid: encoding/json rejects values nested more
// than 10000 deep, and so must Classify, or a frame the replay engine cannot
// decode would be recorded as a message.
func TestClassify_NestingLimit(t *testing.T) {
	nest := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }
	for _, tt := range []struct {
		name  string
		frame string
	}{
		{"batch at the limit", nest(maxDepth)},
		{"batch past the limit", nest(maxDepth + 1)},
		{"params past the limit", `{"jsonrpc":"2.0","method":"x","params":` + nest(maxDepth) + `}`},
		{"params at the limit", `{"jsonrpc":"2.0","method":"x","params":` + nest(maxDepth-1) + `}`},
		{"objects past the limit", strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1)},
		{"siblings do not add up", `[` + strings.Repeat(nest(maxDepth-1)+",", 3) + `1]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify([]byte(tt.frame))
			valid := json.Valid([]byte(tt.frame))
			if valid != (got.Reason != "invalid JSON") {
				t.Errorf("json.Valid = %v, Classify = %+v", valid, got)
			}
		})
	}
}

// BenchmarkClassify measures the per-frame cost the store pays at commit.
func BenchmarkClassify(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("lorem ipsum ", 80) + `"},"_meta":{"progressToken":"p-42"}}}`)
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if Classify(frame).Kind != Request {
			b.Fatal("misclassified")
		}
	}
}

func TestKindNames(t *testing.T) {
	for k := Malformed; k <= Batch; k++ {
		if back, ok := ParseKind(k.String()); !ok || back != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), back, ok)
		}
	}
}

// FuzzClassify: never panics; a frame it calls a message is valid JSON and
// its id text, if any, is valid JSON too.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"x"}`, `[]`, `{"jsonrpc":"2.0","id":"a","result":{"isError":true}}`, "\xff", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := Classify(b)
		if s.Kind != Malformed && !json.Valid(b) {
			t.Fatalf("invalid JSON classified as %v", s.Kind)
		}
		// The hand-written validator agrees with encoding/json.
		if valid := json.Valid(b); valid != (s.Reason != "invalid JSON" && s.Reason != "empty frame") {
			t.Fatalf("json.Valid = %v but Classify says %+v", valid, s)
		} else if Valid(b) != valid {
			t.Fatalf("json.Valid = %v but Valid says %v", valid, !valid)
		}
		// What it extracts is what encoding/json reads (maps keep exact keys).
		var m map[string]json.RawMessage
		if (s.Kind == Request || s.Kind == Notification) && json.Unmarshal(b, &m) == nil {
			var method string
			if json.Unmarshal(m["method"], &method) != nil || method != s.Method {
				t.Fatalf("method %q, encoding/json reads %q", s.Method, method)
			}
		}
		if s.ID != "" && !json.Valid([]byte(s.ID)) {
			t.Fatalf("id %q is not JSON", s.ID)
		}
		if s.Kind == Malformed && s.Reason == "" {
			t.Fatalf("malformed without a reason")
		}
		// On valid JSON the unchecking look-up finds what Member finds;
		// on any bytes it returns.
		for _, path := range [][]string{{"params", "_meta"}, {"id"}, {"params", "_meta", "progressToken"}} {
			got := MemberOfValid(b, path...)
			if want := Member(b, path...); json.Valid(b) && !bytes.Equal(got, want) {
				t.Fatalf("MemberOfValid(%q) = %q, Member finds %q", path, got, want)
			}
		}
		var got, want []string
		gotOK := MembersOfValid(b, func(name, value []byte) { got = append(got, string(name), string(value)) })
		wantOK := Members(b, func(name, value []byte) { want = append(want, string(name), string(value)) })
		if json.Valid(b) && (gotOK != wantOK || !slices.Equal(got, want)) {
			t.Fatalf("MembersOfValid = %q, %v; Members gives %q, %v", got, gotOK, want, wantOK)
		}
	})
}

func TestInputHelpers(t *testing.T) {
	for method, want := range map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true, "tools/list": false, "elicitation/create": false} {
		if MayAskForInput(method) != want {
			t.Errorf("MayAskForInput(%q) = %v", method, !want)
		}
	}
	for method, want := range map[string]bool{"elicitation/create": true, "sampling/createMessage": true, "roots/list": true, "tools/call": false} {
		if IsInputRequestMethod(method) != want {
			t.Errorf("IsInputRequestMethod(%q) = %v", method, !want)
		}
	}
	for result, want := range map[string]bool{
		`{"resultType":"input_required","inputRequests":{}}`:      true,
		`{"resultType":"complete"}`:                               false,
		`{"content":[{"resultType":"input_required"}]}`:           false, // only the result's own member
		`{"resultType":"input_\u0072equired"}`:                    true,
		`{"resultType":"input_required","resultType":"complete"}`: false, // the last one counts
	} {
		if AsksForInput([]byte(result)) != want {
			t.Errorf("AsksForInput(%s) = %v", result, !want)
		}
	}
}

// FuzzContainsInputRequired: the quick search finds the word exactly
// where bytes.Contains does.
func FuzzContainsInputRequired(f *testing.F) {
	for _, s := range []string{"input_required", `{"resultType":"input_required"}`, "_input_required_", "input_", "_required", "input__required", "xinput_requiredx", "", "_"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := containsInputRequired(b), bytes.Contains(b, inputRequiredWord); got != want {
			t.Fatalf("containsInputRequired(%q) = %v, bytes.Contains %v", b, got, want)
		}
	})
}
