package jsonrpc

import "testing"

func TestTakesTasksFor(t *testing.T) {
	tasks := []byte(`{"list":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":null}}}`)
	for _, tc := range []struct {
		method string
		want   bool
	}{
		{"sampling/createMessage", true},
		{"elicitation/create", false}, // declared null: not taken
		{"tools/call", false},
	} {
		if got := TakesTasksFor(tasks, tc.method); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.method, got, tc.want)
		}
	}
	if TakesTasksFor(nil, "tools/call") || !TaskAugmentable("elicitation/create") || TaskAugmentable("tools/list") {
		t.Error("no capabilities take nothing; tools/list is no task-augmentable request")
	}
}
