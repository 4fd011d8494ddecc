package script

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestSchema_Examples: docs/script.schema.json, the editors' view of the
// format, accepts every example script and knows the same fields as the
// loader.
func TestSchema_Examples(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(peertest.ModuleRoot(), "docs", "script.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatal(err)
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(peertest.ModuleRoot(), "cassettes", "script-*"))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var n yaml.Node
			if err := yaml.Unmarshal(b, &n); err != nil {
				t.Fatal(err)
			}
			d := &decoder{file: f}
			v := d.value(&n, "")
			if err := rs.Validate(v); err != nil {
				t.Errorf("the schema refuses %s: %v", filepath.Base(f), err)
			}
		})
	}
	// Answers of prompts and resources hold one thing each, as the loader
	// wants.
	for _, bad := range []string{
		"prompts: [{name: p, answers: [{when: {subset: {a: x}}}]}]",
		"prompts: [{name: p, answers: [{messages: [{role: user, text: x}], error: {code: 1, message: m}}]}]",
		"resources: [{uri: u, name: n, answers: [{text: x, blob: aGk=}]}]",
		"resources: [{uri: u, name: n, roots: yes, answers: [{text: x}]}]",
		"resources: [{uri: readme.txt, name: n, text: x}]",
		// Faults: the loader's refusals (see TestLoad_BadFault).
		"tools: [{name: t, answers: [{fault: http-200}]}]",
		"tools: [{name: t, answers: [{fault: http-abc}]}]",
		"tools: [{name: t, answers: [{fault: http-600}]}]",
		"tools: [{name: t, answers: [{fault: http-5030}]}]",
		"tools: [{name: t, answers: [{fault: explode}]}]",
		"tools: [{name: t, answers: [{fault: http-503, headers: {Retry After: 1}}]}]",
		"tools: [{name: t, answers: [{fault: http-503, headers: {Retry-After: {s: 1}}}]}]",
		// Completions: the loader's refusals (see TestComplete_BadScripts).
		"prompts: [{name: p, arguments: [{name: a, complete: {}}]}]",
		"prompts: [{name: p, arguments: [{name: a, complete: {values: [x, x]}}]}]",
		"prompts: [{name: p, arguments: [{name: a, complete: {answers: [{values: [x], error: {code: 1, message: m}}]}}]}]",
		"resourceTemplates: [{uriTemplate: 'file:///{a}'}]",
		// An answer that says nothing (see TestLoad_BadInput).
		"tools: [{name: t, answers: [{}]}]",
		"tools: [{name: t, answers: [{when: {exact: {a: 1}}}]}]",
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(bad), &n); err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate((&decoder{}).value(&n, "")); err == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
	// Same field names as the Go types.
	defs := map[string]reflect.Type{
		"tool": reflect.TypeFor[Tool](), "answer": reflect.TypeFor[Answer](), "resource": reflect.TypeFor[Resource](),
		"prompt": reflect.TypeFor[Prompt](), "when": reflect.TypeFor[When](), "event": reflect.TypeFor[Event](),
		"elicit": reflect.TypeFor[Elicit](), "sample": reflect.TypeFor[Sample](), "message": reflect.TypeFor[PromptMsg](),
		"promptAnswer": reflect.TypeFor[PromptAnswer](), "resourceAnswer": reflect.TypeFor[ResourceAnswer](),
		"complete": reflect.TypeFor[Complete](), "completeAnswer": reflect.TypeFor[CompleteAnswer](),
		"resourceTemplate": reflect.TypeFor[ResourceTemplate](),
	}
	for name, typ := range defs {
		_, fields := fieldsOf(typ)
		var inSchema []string
		for k := range sch.Defs[name].Properties {
			inSchema = append(inSchema, k)
		}
		slices.Sort(fields)
		slices.Sort(inSchema)
		if !slices.Equal(fields, inSchema) {
			t.Errorf("$defs/%s has %v; the loader knows %v", name, inSchema, fields)
		}
	}
}
