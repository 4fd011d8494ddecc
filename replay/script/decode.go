package script

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcptape/mcptape/internal/suggest"
)

// This file turns a yaml.Node tree into the script types by reflection, so
// that every error can name the file, line and field path. yaml.v3's own
// Decode reports lines but not paths, and it silently converts types (a
// number into a string field) that a script author should hear about.

// Pos is where a value was written: for errors found after decoding
// (schemas, templates, duplicate names).
type Pos struct {
	Line, Col int
	Path      string
	// fields locates the values of a mapping's keys, for errors found
	// after decoding.
	fields map[string]Pos
}

// maxNodes bounds the work of one decode: aliases can make a small file
// describe a huge tree ("billion laughs"). maxDepth bounds nesting, which
// an alias to an enclosing value makes infinite.
const (
	maxNodes = 1 << 18
	maxDepth = 100
)

// Error is one problem in a script, located.
type Error struct {
	File string
	Pos
	Msg string
}

func (e *Error) Error() string {
	path := e.Path
	if path == "" {
		path = "(top level)"
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Col, path, e.Msg)
}

// Errors is every problem found in one script, in file order.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// inFileOrder sorts es by where they are, as a compiler lists its
// errors: the compiler checks tools, then resources, then prompts, then
// events, whatever order the file has them in.
func (es Errors) inFileOrder() Errors {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	return es
}

type decoder struct {
	file  string
	errs  Errors
	nodes int
	depth int
}

// enter counts one more value and one more level; it reports false (once,
// as an error) when the script is too large or too deep.
func (d *decoder) enter(n *yaml.Node, path string) bool {
	d.nodes++
	d.depth++
	switch {
	case d.nodes > maxNodes:
		if d.nodes == maxNodes+1 {
			d.errorf(at(n, path), "script is too large (more than %d values after aliases)", maxNodes)
		}
		return false
	case d.depth > maxDepth:
		d.errorf(at(n, path), "nested more than %d levels deep (an alias inside itself?)", maxDepth)
		d.nodes = maxNodes + 2 // one error is enough: stop everything
		return false
	}
	return true
}

func (d *decoder) errorf(p Pos, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Pos: p, Msg: fmt.Sprintf(format, args...)})
}

func at(n *yaml.Node, path string) Pos { return Pos{Line: n.Line, Col: n.Column, Path: path} }

// nodeDecoder is implemented by types with their own YAML spelling.
type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, path string)
}

var (
	nodeDecoderType = reflect.TypeFor[nodeDecoder]()
	posType         = reflect.TypeFor[Pos]()
)

func resolve(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && (n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode); hops++ {
		if hops > 100 {
			return nil // an alias cycle
		}
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!binary":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	}
	return "a " + strings.TrimPrefix(n.ShortTag(), "!!")
}

func isString(n *yaml.Node) bool {
	t := n.ShortTag()
	return n.Kind == yaml.ScalarNode && (t == "!!str" || t == "!!timestamp")
}

// decode fills v (addressable) from n.
func (d *decoder) decode(n *yaml.Node, path string, v reflect.Value) {
	n = resolve(n)
	if n == nil {
		return
	}
	defer func() { d.depth-- }()
	if !d.enter(n, path) {
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(nodeDecoderType) {
		v.Addr().Interface().(nodeDecoder).decodeNode(d, n, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if n.ShortTag() == "!!null" {
			// A section (server, when, error, elicit, sample) written with
			// nothing after it would read as left out, and change what the
			// script means unseen: an override for a whole server, a
			// default answer for a when, an empty result for an error.
			if v.Type().Elem().Kind() == reflect.Struct {
				key := path[strings.LastIndex(path, ".")+1:]
				d.errorf(at(n, path), "want a mapping, got nothing: write what %s holds, or leave %s out", key, key)
			}
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, path, v.Elem())
	case reflect.String:
		if !isString(n) {
			d.errorf(at(n, path), "want a string, got %s (quote it if it is meant as text)", kindName(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			d.errorf(at(n, path), "want true or false, got %s", kindName(n))
			return
		}
		b, _ := strconv.ParseBool(strings.ToLower(n.Value))
		v.SetBool(b)
	case reflect.Int:
		var i int64
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" && n.Decode(&i) == nil {
			v.SetInt(i)
			return
		}
		d.errorf(at(n, path), "want an integer, got %s", kindName(n))
	case reflect.Float64:
		if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
			var f float64
			if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				v.SetFloat(f)
				return
			}
		}
		d.errorf(at(n, path), "want a finite number, got %s", kindName(n))
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(at(n, path), "want a list, got %s", kindName(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, fmt.Sprintf("%s[%d]", path, i), s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.errorf(at(n, path), "want a mapping, got %s", kindName(n))
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := resolve(n.Content[i]), n.Content[i+1]
			if k == nil || !isString(k) {
				d.errorf(at(n.Content[i], path), "keys must be strings")
				continue
			}
			e := reflect.New(v.Type().Elem()).Elem()
			d.decode(val, join(path, k.Value), e)
			m.SetMapIndex(reflect.ValueOf(k.Value), e)
		}
		v.Set(m)
	case reflect.Struct:
		d.decodeStruct(n, path, v)
	default:
		d.errorf(at(n, path), "internal: cannot decode into %s", v.Type())
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldsOf maps YAML keys to struct field indexes, in declaration order.
func fieldsOf(t reflect.Type) (map[string]int, []string) {
	idx := map[string]int{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		idx[tag] = i
		names = append(names, tag)
	}
	return idx, names
}

func (d *decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) {
	if pf := posField(v); pf.IsValid() {
		pf.Set(reflect.ValueOf(at(n, path)))
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(at(n, path), "want a mapping, got %s", kindName(n))
		return
	}
	idx, names := fieldsOf(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k == nil || !isString(k) {
			d.errorf(at(n.Content[i], path), "keys must be strings")
			continue
		}
		if d.twice(seen, k, path) {
			continue
		}
		fi, ok := idx[k.Value]
		if !ok {
			d.errorf(at(k, join(path, k.Value)), "unknown field %q (known: %s)%s", k.Value, strings.Join(names, ", "), suggest.DidYouMean(k.Value, names, "%q"))
			continue
		}
		d.decode(n.Content[i+1], join(path, k.Value), v.Field(fi))
		if pf := posField(v); pf.IsValid() {
			p := pf.Addr().Interface().(*Pos)
			if p.fields == nil {
				p.fields = map[string]Pos{}
			}
			p.fields[k.Value] = at(resolve(n.Content[i+1]), join(path, k.Value))
		}
	}
}

// twice reports a key given a second time in one mapping, which YAML
// forbids and yaml.v3 leaves to its reader (a node tree keeps both): the
// last would win silently, and what the author meant first be lost.
// seen maps the keys so far to their lines.
func (d *decoder) twice(seen map[string]int, k *yaml.Node, path string) bool {
	if first, ok := seen[k.Value]; ok {
		d.errorf(at(k, join(path, k.Value)), "%q is given twice in one mapping (first at line %d)", k.Value, first)
		return true
	}
	seen[k.Value] = k.Line
	return false
}

func posField(v reflect.Value) reflect.Value {
	for i := range v.NumField() {
		if v.Type().Field(i).Type == posType {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

// Value is a free-form JSON value written in YAML: a schema, a content
// block, structuredContent. Maps become map[string]any, so encoding/json
// writes their keys sorted: the same script gives the same bytes.
type Value struct {
	V   any
	Set bool
	Pos
	// node is where V was read, to locate what is wrong inside it (nil
	// for a Value not read from a file).
	node *yaml.Node
}

func (val *Value) decodeNode(d *decoder, n *yaml.Node, path string) {
	val.Pos = at(n, path)
	val.Set = true
	val.V = d.value(n, path)
	val.node = n
}

func (d *decoder) value(n *yaml.Node, path string) any {
	n = resolve(n)
	if n == nil {
		return nil
	}
	defer func() { d.depth-- }()
	if !d.enter(n, path) {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
				d.errorf(at(n.Content[i], path), "keys must be strings")
				continue
			}
			if d.twice(seen, k, path) {
				continue
			}
			m[k.Value] = d.value(n.Content[i+1], join(path, k.Value))
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = d.value(c, fmt.Sprintf("%s[%d]", path, i))
		}
		return s
	}
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		b, _ := strconv.ParseBool(strings.ToLower(n.Value))
		var x bool
		if n.Decode(&x) == nil {
			b = x
		}
		return b
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
		if x, ok := beyondFloat(n.Value, math.NaN()); ok {
			return x
		}
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			if x, ok := beyondFloat(n.Value, f); ok {
				return x
			}
			return f
		}
		d.errorf(at(n, path), "%q is not a number JSON can carry", n.Value)
		return nil
	case "!!str", "!!timestamp":
		return n.Value
	}
	d.errorf(at(n, path), "%s is not a JSON value", kindName(n))
	return nil
}

func (hs *Headers) decodeNode(d *decoder, n *yaml.Node, path string) {
	hs.Pos = at(n, path)
	if n.Kind != yaml.MappingNode {
		d.errorf(hs.Pos, "want a mapping of header names to values, got %s", kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k == nil || !isString(k) {
			d.errorf(at(n.Content[i], path), "keys must be strings")
			continue
		}
		if d.twice(seen, k, path) {
			continue // a header sent twice is a list of values
		}
		h := Header{Pos: at(k, join(path, k.Value)), Name: k.Value}
		vals := []*yaml.Node{v}
		if v != nil && v.Kind == yaml.SequenceNode {
			vals = v.Content
		}
		for _, x := range vals {
			// A header value is text: Retry-After: 30 is meant as "30".
			if x = resolve(x); x == nil || x.Kind != yaml.ScalarNode || x.ShortTag() == "!!null" || x.ShortTag() == "!!bool" {
				got := "nothing"
				if x != nil {
					got = kindName(x)
				}
				d.errorf(at(cmp.Or(x, k), h.Path), "want a header value (text or a number) or a list of them, got %s", got)
				continue
			}
			h.Values = append(h.Values, x.Value)
		}
		hs.List = append(hs.List, h)
	}
}

// Duration is written as Go spells durations: "250ms", "2s".
// wellFormedDuration is a duration time.ParseDuration refuses only for
// its size.
var wellFormedDuration = regexp.MustCompile(`^\+?([0-9]+(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

type Duration struct {
	D time.Duration
	Pos
}

func (du *Duration) decodeNode(d *decoder, n *yaml.Node, path string) {
	du.Pos = at(n, path)
	if !isString(n) {
		d.errorf(du.Pos, "want a duration such as \"250ms\" or \"2s\", got %s", kindName(n))
		return
	}
	x, err := time.ParseDuration(n.Value)
	switch {
	case err != nil && wellFormedDuration.MatchString(n.Value):
		d.errorf(du.Pos, "duration %q is too long: the longest is about 2562047h (292 years)", n.Value)
	case err != nil && strings.Contains(err.Error(), "invalid duration"):
		d.errorf(du.Pos, "want a duration such as \"250ms\" or \"2s\", got %q", n.Value)
	case err != nil: // "unknown unit", "missing unit", "overflow": Go says it best
		d.errorf(du.Pos, "want a duration such as \"250ms\" or \"2s\", got %q: %s", n.Value, strings.TrimPrefix(err.Error(), "time: "))
	case x < 0:
		d.errorf(du.Pos, "a duration cannot be negative, got %q", n.Value)
	default:
		du.D = x
	}
}

// sortedKeys returns m's keys in order, for deterministic iteration.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }
