package jsonrpc

import "strings"

// Tasks (2025-11-25): a requestor may ask the receiver to run a request
// as a task (params.task), where the receiver declared it takes tasks for
// that kind of request. lint, replay and scripts all need to know which
// requests those are, and what a peer declared.

// TaskAugmentable reports whether a request of method may carry
// params.task: a client's tools/call, and a server's
// sampling/createMessage and elicitation/create (run as the client's
// tasks).
func TaskAugmentable(method string) bool {
	switch method {
	case "tools/call", "sampling/createMessage", "elicitation/create":
		return true
	}
	return false
}

// TakesTasksFor reports whether tasks, a peer's capabilities.tasks,
// declares that it takes tasks for requests of method: its
// requests.<group>.<name> (tasks.requests.tools.call for tools/call), not
// null.
func TakesTasksFor(tasks []byte, method string) bool {
	group, name, _ := strings.Cut(method, "/")
	v := Member(tasks, "requests", group, name)
	return v != nil && string(v) != "null"
}
