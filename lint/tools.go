package lint

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// toolName is the 2025-11-25 rule for tool names.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func (c *checker) toolsListResult(f *frame) {
	res := objectMembers(f.result)
	var tools []json.RawMessage
	if json.Unmarshal(res["tools"], &tools) != nil {
		c.report("tools-list", f.seq, 0, "the tools/list result has no tools array")
		return
	}
	seen := map[string]bool{}
	for i, raw := range tools {
		t := objectMembers(raw)
		name, ok := stringOf(t["name"])
		if !ok {
			c.report("tools-list", f.seq, 0, "tools[%d] has no name", i)
			continue
		}
		if seen[name] {
			c.report("tool-duplicate", f.seq, 0, "tool %q is listed twice", name)
		}
		seen[name] = true
		if c.atLeast("2025-11-25") && !toolName.MatchString(name) {
			c.report("tool-name", f.seq, 0, "tool name %q is not 1–128 characters of A–Z a–z 0–9 _ - .", name)
		}
		schema := objectMembers(t["inputSchema"])
		if typ, _ := stringOf(schema["type"]); typ != "object" {
			what := "no inputSchema"
			if schema != nil {
				what = fmt.Sprintf("an inputSchema of type %s", orNone(string(schema["type"])))
			}
			c.report("tool-input-schema", f.seq, 0, "tool %q has %s; it must be a JSON Schema of type \"object\"", name, what)
		}
		ts, _ := stringOf(member(t["execution"], "taskSupport"))
		c.tools[name] = &tool{outputSchema: t["outputSchema"], taskSupport: ts}
	}
	if _, more := res["nextCursor"]; !more {
		c.toolsListed = true
	}
}

func (c *checker) toolCallRequest(f *frame) {
	if f.method != "tools/call" || !c.toolsListed {
		return
	}
	name, _ := stringOf(member(f.params, "name"))
	if c.tools[name] == nil {
		c.report("tool-unknown", f.seq, 0, "calls tool %q, which the server never listed", name)
	}
}

// toolCallResult checks a CallToolResult: its content blocks, and its
// structuredContent against the tool's outputSchema.
func (c *checker) toolCallResult(f *frame, r *request) {
	if answeredWithTask(f, r) {
		return // a CreateTaskResult, not a CallToolResult
	}
	res := objectMembers(f.result)
	var content []json.RawMessage
	if json.Unmarshal(res["content"], &content) != nil || jsonType(res["content"]) != "array" {
		c.report("tool-result", f.seq, r.seq, "the tools/call result has no content array")
	}
	for i, block := range content {
		if problem := c.contentBlock(block); problem != "" {
			c.report("tool-result", f.seq, r.seq, "content[%d] %s", i, problem)
		}
	}
	name := r.tool
	t := c.tools[name]
	if t == nil || len(t.outputSchema) == 0 || string(res["isError"]) == "true" {
		return
	}
	sc, ok := res["structuredContent"]
	if !ok {
		c.report("structured-content", f.seq, r.seq, "tool %q declares an outputSchema but its result has no structuredContent", name)
		return
	}
	if problem := schemaProblem(t.outputSchema, sc); problem != "" {
		c.report("structured-content", f.seq, r.seq, "tool %q's structuredContent does not fit its outputSchema: %s", name, problem)
	}
}

// contentBlock says what a content block lacks, "" when it is fine.
func (c *checker) contentBlock(raw json.RawMessage) string {
	b := objectMembers(raw)
	if b == nil {
		return "is not an object"
	}
	typ, ok := stringOf(b["type"])
	if !ok {
		return "has no type"
	}
	var need []string
	switch {
	case typ == "text":
		need = []string{"text"}
	case typ == "image", typ == "audio" && c.atLeast("2025-03-26"):
		need = []string{"data", "mimeType"}
	case typ == "resource":
		need = []string{"resource"}
	case typ == "resource_link" && c.atLeast("2025-06-18"):
		need = []string{"uri", "name"}
	default:
		return fmt.Sprintf("has type %q, which protocol %s does not define", typ, orNone(c.version))
	}
	var missing []string
	for _, n := range need {
		if _, ok := b[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("(%s) lacks %s", typ, strings.Join(missing, ", "))
	}
	return ""
}

// schemaProblem checks a value against the top of a JSON Schema: its type,
// its required members and the types of its properties. It is not a full
// validator: nested schemas, formats, patterns and combinators are left
// alone, so that it never calls a valid value wrong.
func schemaProblem(schemaRaw, value json.RawMessage) string {
	schema := objectMembers(schemaRaw)
	if !typeFits(schema["type"], value) {
		return fmt.Sprintf("it is %s, the schema says %s", jsonType(value), schema["type"])
	}
	obj := objectMembers(value)
	if obj == nil {
		return ""
	}
	var required []string
	_ = json.Unmarshal(schema["required"], &required)
	for _, name := range required {
		if _, ok := obj[name]; !ok {
			return fmt.Sprintf("required member %q is missing", name)
		}
	}
	props := objectMembers(schema["properties"])
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if p := objectMembers(props[name]); p != nil && !typeFits(p["type"], obj[name]) {
			return fmt.Sprintf("member %q is %s, the schema says %s", name, jsonType(obj[name]), p["type"])
		}
	}
	return ""
}

// typeFits reports whether value has one of the JSON Schema types named
// by typ (a string or an array of strings); no type fits anything.
func typeFits(typ, value json.RawMessage) bool {
	var names []string
	if s, ok := stringOf(typ); ok {
		names = []string{s}
	} else if json.Unmarshal(typ, &names) != nil || len(names) == 0 {
		return true
	}
	got := jsonType(value)
	for _, n := range names {
		switch {
		case n == got, n == "number" && got == "integer":
			return true
		case n == "integer" && got == "number":
			if v, err := strconv.ParseFloat(string(value), 64); err == nil && v == math.Trunc(v) {
				return true
			}
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// listMethods are the paginated methods; a walk is one client's way
// through the pages of one of them.
var listMethods = map[string]bool{"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true, "tasks/list": true}

// walk is the cursors handed out along one pagination, from a request
// without a cursor to the page without nextCursor.
type walk struct{ cursors map[string]bool }

func (c *checker) paginationRequest(f *frame, r *request) {
	if !listMethods[f.method] {
		return
	}
	cursor, _ := stringOf(member(f.params, "cursor"))
	if cursor != "" {
		r.walk = c.walks[f.method+"\x00"+cursor]
	}
	if r.walk == nil {
		r.walk = &walk{cursors: map[string]bool{}}
	}
	if cursor != "" {
		r.walk.cursors[cursor] = true
	}
}

// paginationResult flags a nextCursor this walk already went through: a
// client following it would loop for ever.
func (c *checker) paginationResult(f *frame, r *request) {
	if r.walk == nil {
		return
	}
	next, _ := stringOf(member(f.result, "nextCursor"))
	if next == "" {
		return
	}
	if r.walk.cursors[next] {
		c.report("cursor-loop", f.seq, r.seq, "%s hands out nextCursor %q again: a client following the pages would loop", r.method, next)
		return
	}
	r.walk.cursors[next] = true
	c.walks[r.method+"\x00"+next] = r.walk
}
