package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Building YAML for FromTape: a yaml.Node tree, so that keys keep the
// order a reader expects (a tool's name before its schema, a content
// block's type before its text) and notes can ride along as comments.

// mapNode is a YAML mapping under construction.
type mapNode struct{ n *yaml.Node }

func newMap() mapNode { return mapNode{&yaml.Node{Kind: yaml.MappingNode}} }

// set appends key: v; a nil v is left out.
func (m mapNode) set(key string, v *yaml.Node) {
	if v == nil {
		return
	}
	m.n.Content = append(m.n.Content, strNode(key), v)
}

// strNode is a string; one of several lines is written as a block, as a
// person would write it.
func strNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.Contains(strings.TrimSuffix(s, "\n"), "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

func intNode(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(i)}
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(b)}
}

func seqNode(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

// flow writes a small collection on one line.
func flow(n *yaml.Node) *yaml.Node {
	n.Style = yaml.FlowStyle
	return n
}

// jsonNode turns a JSON value into YAML, members in the order written.
// Numbers keep their text, so 1.0 and 10000000000000000001 survive.
func jsonNode(raw []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := jsonValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return n, nil
}

func jsonValue(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			m := newMap()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				m.set(k.(string), v)
			}
			_, err := dec.Token() // }
			return m.n, err
		}
		s := seqNode()
		for dec.More() {
			v, err := jsonValue(dec)
			if err != nil {
				return nil, err
			}
			s.Content = append(s.Content, v)
		}
		_, err := dec.Token() // ]
		return s, err
	case string:
		return strNode(t), nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(t.String(), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case bool:
		return boolNode(t), nil
	default: // nil
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
}

// member returns the value of key in a mapping node, or nil.
func member(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// literalTemplate writes s as a template that renders s: the script
// treats answer texts as Go templates, and a recorded "{{" is text.
func literalTemplate(s string) string {
	return strings.ReplaceAll(s, "{{", `{{"{{"}}`)
}

// literalTemplateNode makes the string scalar n a literal template.
func literalTemplateNode(n *yaml.Node) {
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		n.Value = literalTemplate(n.Value)
	}
}

// encodeYAML writes the document with two-space indents.
func encodeYAML(doc *yaml.Node) ([]byte, error) {
	back, restore := standInAstral(doc)
	defer restore()
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if back == nil {
		return b.Bytes(), nil
	}
	return []byte(back.Replace(b.String())), nil
}

// privateUse is the Basic Multilingual Plane's private use area, where
// standInAstral finds its stand-ins.
const privateUseFirst, privateUseLast = 0xE000, 0xF8FF

// standInAstral puts, in every string of doc, a stand-in from the private
// use area for each character beyond the Basic Multilingual Plane (an
// emoji), and returns the replacer that puts them back in the encoded
// text (nil: doc has none) and the func that restores doc. go-yaml v3
// takes such characters for unprintable and writes a string that holds
// one double-quoted, with \U escapes: a tool's description of several
// lines becomes one long escaped line. The stand-ins are printable to it,
// so the string is written as it would be without them, and YAML allows
// the characters themselves in any style. A stand-in is a character no
// string of doc uses; past the area's 6,400, the rest stay escaped.
func standInAstral(doc *yaml.Node) (back *strings.Replacer, restore func()) {
	var scalars []*yaml.Node
	used := map[rune]bool{}
	astral := false
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			scalars = append(scalars, n)
		}
		for _, s := range []string{n.Value, n.HeadComment, n.LineComment, n.FootComment} {
			for _, r := range s {
				used[r] = true
				astral = astral || r > 0xFFFF
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(doc)
	if !astral {
		return nil, func() {}
	}
	standIn := map[rune]rune{}
	var pairs []string
	next := rune(privateUseFirst)
	for r := range used {
		if r <= 0xFFFF {
			continue
		}
		for next <= privateUseLast && used[next] {
			next++
		}
		if next > privateUseLast {
			break
		}
		standIn[r] = next
		pairs = append(pairs, string(next), string(r))
		next++
	}
	was := make([]string, len(scalars))
	for i, n := range scalars {
		was[i] = n.Value
		n.Value = strings.Map(func(r rune) rune {
			if s, ok := standIn[r]; ok {
				return s
			}
			return r
		}, n.Value)
	}
	return strings.NewReplacer(pairs...), func() {
		for i, n := range scalars {
			n.Value = was[i]
		}
	}
}
