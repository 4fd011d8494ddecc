package lint

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonrpc"
	"github.com/mcptape/mcptape/store"
)

// shape lists the members a method's params and result must have, in a
// small path language: "uri" (a member, not null), "contents[]" (an
// array), "contents[].uri" (a member of each element), "text|blob" (one
// of them), "completion.values[]" (a member of a member).
type shape struct {
	params, result []string
}

// shapes are the spec's required members for the methods (requests and
// notifications) tools.go, lifecycle.go and progress.go do not already check, from the schema of 2025-11-25
// (earlier versions require no more of these).
var shapes = map[string]shape{
	"resources/list":           {result: []string{"resources[]", "resources[].uri", "resources[].name"}},
	"resources/templates/list": {result: []string{"resourceTemplates[]", "resourceTemplates[].uriTemplate", "resourceTemplates[].name"}},
	"resources/read":           {params: []string{"uri"}, result: []string{"contents[]", "contents[].uri", "contents[].text|blob"}},
	"resources/subscribe":      {params: []string{"uri"}},
	"resources/unsubscribe":    {params: []string{"uri"}},
	"prompts/list":             {result: []string{"prompts[]", "prompts[].name"}},
	"prompts/get":              {params: []string{"name"}, result: []string{"messages[]", "messages[].role", "messages[].content"}},
	"tools/call":               {params: []string{"name"}},
	"completion/complete":      {params: []string{"ref", "argument"}, result: []string{"completion.values[]"}},
	"logging/setLevel":         {params: []string{"level"}},
	"roots/list":               {result: []string{"roots[]", "roots[].uri"}},
	"sampling/createMessage":   {params: []string{"messages[]", "maxTokens"}, result: []string{"role", "content", "model"}},
	"elicitation/create":       {params: []string{"message"}, result: []string{"action"}},
	// Notifications. notifications/message also requires data, but any
	// JSON value is allowed there, null too, which "a member, not null"
	// would take for missing.
	"notifications/message":           {params: []string{"level"}},
	"notifications/resources/updated": {params: []string{"uri"}},
}

func (c *checker) paramsShape(f *frame) {
	for _, p := range shapes[f.method].params {
		if miss := lacks(f.params, p); miss != "" {
			c.report("params-shape", f.seq, 0, "%s params lack %s", f.method, miss)
			return
		}
	}
}

func (c *checker) resultShape(f *frame, r *request) {
	if answeredWithTask(f, r) {
		return // a CreateTaskResult (taskResult), not the method's result
	}
	for _, p := range shapes[r.method].result {
		if miss := lacks(f.result, p); miss != "" {
			c.report("result-shape", f.seq, r.seq, "the %s result lacks %s", r.method, miss)
			return
		}
	}
	switch r.method {
	case "completion/complete":
		var values []json.RawMessage
		if json.Unmarshal(member(member(f.result, "completion"), "values"), &values) == nil && len(values) > 100 {
			c.report("result-shape", f.seq, r.seq, "the completion/complete result has %d values; at most 100 are allowed", len(values))
		}
	case "elicitation/create":
		switch a, _ := stringOf(member(f.result, "action")); a {
		case "accept":
			if problem := formContentProblem(r.form, member(f.result, "content")); problem != "" {
				c.report("elicitation-content", f.seq, r.seq, "the accepted elicitation's content breaks its form: %s", problem)
			}
		case "decline", "cancel":
		default:
			c.report("result-shape", f.seq, r.seq, "the elicitation/create result's action is %s; it must be accept, decline or cancel", member(f.result, "action"))
		}
	case "ping":
		if len(objectMembers(f.result)) > 0 {
			c.report("ping-result", f.seq, r.seq, "ping is answered with %s; the answer is an empty result", f.result)
		}
	}
}

// lacks returns what of path value does not have ("contents[1].uri"), ""
// when it has it all.
func lacks(value json.RawMessage, path string) string {
	head, rest, _ := strings.Cut(path, ".")
	name, each := strings.CutSuffix(head, "[]")
	var got json.RawMessage
	for _, alt := range strings.Split(name, "|") {
		if v := member(value, alt); v != nil && string(v) != "null" {
			got = v
			break
		}
	}
	switch {
	case got == nil:
		return strings.ReplaceAll(name, "|", " or ")
	case each && jsonType(got) != "array":
		return name + " as an array"
	case rest == "":
		return ""
	case !each:
		if miss := lacks(got, rest); miss != "" {
			return name + "." + miss
		}
		return ""
	}
	i, miss := 0, ""
	jsonrpc.Elements(got, func(el []byte) {
		if miss == "" {
			if m := lacks(el, rest); m != "" {
				miss = fmt.Sprintf("%s[%d].%s", name, i, m)
			}
		}
		i++
	})
	return miss
}

// logLevel checks the level of logging/setLevel and notifications/message.
func (c *checker) logLevel(f *frame) {
	if f.method != "logging/setLevel" && f.method != "notifications/message" {
		return
	}
	raw := member(f.params, "level")
	if lv, _ := stringOf(raw); raw != nil && !slices.Contains(jsonrpc.LogLevels, lv) {
		c.report("log-level", f.seq, 0, "%s has level %s, none of %s", f.method, raw, strings.Join(jsonrpc.LogLevels, ", "))
	}
}

// subscriptions follows resources/subscribe and unsubscribe and, in
// 2026-07-28, the subscriptions/listen requests that name resources in
// params.notifications.resourceSubscriptions, so that an update for a
// resource nobody subscribed to shows. r is the request f is, nil for a
// notification.
func (c *checker) subscriptions(f *frame, r *request) {
	uri, _ := stringOf(member(f.params, "uri"))
	switch {
	case f.dir == store.C2S && f.method == "resources/subscribe":
		c.subscribed[uri] = true
	case f.dir == store.C2S && f.method == "resources/unsubscribe":
		delete(c.subscribed, uri)
	case f.dir == store.C2S && f.method == "subscriptions/listen" && r != nil:
		// The server sends the updates on the listen's stream, until it
		// answers the listen (its graceful end) or the client cancels it
		// or closes the stream, which is then over: an update after the
		// answer is one nobody listens for.
		jsonrpc.Elements(member(member(f.params, "notifications"), "resourceSubscriptions"), func(el []byte) {
			if u, ok := stringOf(el); ok {
				c.listens[u] = append(c.listens[u], r)
			}
		})
	case f.dir == store.S2C && f.method == "notifications/resources/updated" && uri != "" && !c.subscribed[uri] && !c.listening(uri):
		// (Without a uri it is params-shape's.)
		c.report("resource-not-subscribed", f.seq, 0, "an update for %q, which the client has not subscribed to", uri)
	}
}

// listening says whether a subscriptions/listen of the client that names
// uri is still open: not answered.
func (c *checker) listening(uri string) bool {
	return slices.ContainsFunc(c.listens[uri], func(r *request) bool { return r.answered == 0 })
}

// elicitationSchema checks that an elicitation form asks only for flat,
// primitive fields, as the spec restricts requestedSchema.
func (c *checker) elicitationSchema(f *frame) {
	if f.method != "elicitation/create" {
		return
	}
	schema := member(f.params, "requestedSchema")
	if schema == nil {
		return // 2025-11-25's URL mode has none; params-shape covers the rest
	}
	if typ, _ := stringOf(member(schema, "type")); typ != "object" {
		c.report("elicitation-schema", f.seq, 0, "requestedSchema's type is %s; it must be \"object\"", orNone(string(member(schema, "type"))))
		return
	}
	props := objectMembers(member(schema, "properties"))
	for _, name := range slices.Sorted(maps.Keys(props)) {
		prop := props[name]
		switch typ, _ := stringOf(member(prop, "type")); typ {
		case "string", "number", "integer", "boolean":
		case "array": // 2025-11-25: multi-select enums, arrays of strings
			if items, _ := stringOf(member(member(prop, "items"), "type")); items == "string" || member(member(prop, "items"), "anyOf") != nil {
				continue
			}
			fallthrough
		default:
			c.report("elicitation-schema", f.seq, 0, "requestedSchema property %q is of type %s; a form asks only for strings, numbers, integers, booleans and enums", name, orNone(string(member(prop, "type"))))
		}
	}
}
