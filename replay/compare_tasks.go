package replay

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcptape/mcptape/store"
)

// Tasks in a comparison. A server makes a task's id (and its createdAt
// and lastUpdatedAt) afresh on every run, so two runs of the same host
// against the same server never share them, and every tasks/get would
// stand as a request only one side made. The comparison therefore names
// each task by the order the session created it ("task #1"), in the
// requests that name it and in the answers, and leaves a task's two
// times out: what is compared is what the tasks did.

// taskNames maps the task ids a session's servers created, as JSON
// strings, to their names by order of creation.
type taskNames map[string]string

// taskNamesOf reads a session's created tasks (result.task.taskId of any
// answer); nil when it has none.
func taskNamesOf(s *store.TapeSession) taskNames {
	var names taskNames
	for _, m := range s.Messages {
		f := m.Frame
		if !bytes.Contains(f, []byte(`"task"`)) {
			continue
		}
		var m struct {
			Result struct {
				Task struct {
					TaskID *string `json:"taskId"`
				} `json:"task"`
			} `json:"result"`
		}
		if json.Unmarshal(f, &m) != nil || m.Result.Task.TaskID == nil {
			continue
		}
		if names == nil {
			names = taskNames{}
		}
		if _, seen := names[*m.Result.Task.TaskID]; !seen {
			names[*m.Result.Task.TaskID] = fmt.Sprintf("task #%d", len(names)+1)
		}
	}
	return names
}

// rename returns raw with each taskId the session created replaced by its
// name, and createdAt and lastUpdatedAt left out of the objects that hold
// a taskId; raw itself when it names no task.
func (n taskNames) rename(raw json.RawMessage) json.RawMessage {
	if len(n) == 0 || !bytes.Contains(raw, []byte(`"taskId"`)) {
		return raw
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, err := json.Marshal(n.walk(v))
	if err != nil {
		return raw
	}
	return b
}

func (n taskNames) walk(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["taskId"].(string); ok {
			if name, known := n[id]; known {
				x["taskId"] = name
				delete(x, "createdAt")
				delete(x, "lastUpdatedAt")
			}
		}
		for k, e := range x {
			x[k] = n.walk(e)
		}
	case []any:
		for i, e := range x {
			x[i] = n.walk(e)
		}
	}
	return v
}
