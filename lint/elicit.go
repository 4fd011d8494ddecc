package lint

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// An accepted elicitation's content is what the user filled in on the
// form the server sent (requestedSchema). The spec (2025-11-25, Form Mode
// Security) has clients validate it against the form before they send it
// and servers after: a host whose form UI sends a number as a string, or
// leaves out a required field, is what elicitation-content finds. Like
// schemaProblem it judges only what a form may say (types, required
// fields, options, bounds), and never calls a valid value wrong.

// formContentProblem says how content breaks the form schema, "" when it
// fits it (or nothing can be told: no form, as in URL mode).
func formContentProblem(schema, content json.RawMessage) string {
	if schema == nil {
		return ""
	}
	if content == nil {
		content = json.RawMessage(`{}`) // accepted with nothing filled in
	}
	if problem := schemaProblem(schema, content); problem != "" {
		return problem
	}
	props := objectMembers(member(schema, "properties"))
	got := objectMembers(content)
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if prop := props[name]; prop != nil {
			if problem := fieldProblem(prop, got[name]); problem != "" {
				return fmt.Sprintf("member %q %s", name, problem)
			}
		}
	}
	return ""
}

// fieldProblem says how value breaks one form field's schema, "" if not.
func fieldProblem(prop, value json.RawMessage) string {
	if options := fieldOptions(prop); options != nil && !slices.ContainsFunc(options, func(o json.RawMessage) bool { return sameValue(o, value) }) {
		return fmt.Sprintf("is %s, none of the form's options (%s)", value, joinRaw(options))
	}
	if items := member(prop, "items"); items != nil {
		var elems []json.RawMessage
		if json.Unmarshal(value, &elems) == nil {
			if problem := outside(float64(len(elems)), prop, "minItems", "maxItems", "choices"); problem != "" {
				return problem
			}
			for i, el := range elems {
				if !typeFits(member(items, "type"), el) {
					return fmt.Sprintf("has %s at [%d], the form says %s", jsonType(el), i, member(items, "type"))
				}
				if problem := fieldProblem(items, el); problem != "" {
					return fmt.Sprintf("at [%d] %s", i, problem)
				}
			}
		}
		return ""
	}
	if s, ok := stringOf(value); ok {
		return outside(float64(utf8.RuneCountInString(s)), prop, "minLength", "maxLength", "characters")
	}
	var n float64
	if json.Unmarshal(value, &n) == nil {
		return outside(n, prop, "minimum", "maximum", "")
	}
	return ""
}

// fieldOptions are the values a field allows, from its enum or the const
// of each oneOf or anyOf entry (titled enums); nil when it names none.
func fieldOptions(prop json.RawMessage) []json.RawMessage {
	var options []json.RawMessage
	if json.Unmarshal(member(prop, "enum"), &options) == nil && options != nil {
		return options
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		var entries []json.RawMessage
		if json.Unmarshal(member(prop, key), &entries) != nil || len(entries) == 0 {
			continue
		}
		for _, e := range entries {
			c := member(e, "const")
			if c == nil {
				return nil // an entry that is no option: leave the field alone
			}
			options = append(options, c)
		}
		return options
	}
	return nil
}

// outside says how v breaks the bounds the schema keywords lo and hi set
// (of unit, "" for a plain value), "" if it does not.
func outside(v float64, prop json.RawMessage, lo, hi, unit string) string {
	what := fmt.Sprint(v)
	if unit != "" {
		if v == 1 {
			unit = strings.TrimSuffix(unit, "s")
		}
		what = fmt.Sprintf("%g %s", v, unit)
	}
	var bound float64
	if json.Unmarshal(member(prop, lo), &bound) == nil && member(prop, lo) != nil && v < bound {
		return fmt.Sprintf("has %s, under the form's %s %g", what, lo, bound)
	}
	if json.Unmarshal(member(prop, hi), &bound) == nil && member(prop, hi) != nil && v > bound {
		return fmt.Sprintf("has %s, over the form's %s %g", what, hi, bound)
	}
	return ""
}

// sameValue says whether two JSON values are equal (1 and 1.0 are).
func sameValue(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(x, y)
}

func joinRaw(vs []json.RawMessage) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
