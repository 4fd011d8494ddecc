package script

import (
	"text/template"
	"text/template/parse"
)

// readsArgs says whether any of ts may read the call's arguments: a path
// through .args or $.args, or dot or $ themselves, which may be the
// arguments (in {{with .args}}) or hand them whole to a function or a
// named template. It errs towards yes: an answer whose templates do not
// read them can let them go while it waits (a tool's arguments may be
// most of a 64 MiB call), and one that does keeps them.
func readsArgs(ts ...*template.Template) bool {
	for _, t := range ts {
		if t == nil {
			continue
		}
		for _, d := range t.Templates() { // {{define}}d ones too
			if d.Tree != nil && nodeReadsArgs(d.Tree.Root) {
				return true
			}
		}
	}
	return false
}

func nodeReadsArgs(n parse.Node) bool {
	switch n := n.(type) {
	case *parse.DotNode:
		return true
	case *parse.FieldNode:
		return n.Ident[0] == "args"
	case *parse.VariableNode:
		// $ is the data; $x is a variable, whose assignment is looked at.
		return n.Ident[0] == "$" && (len(n.Ident) == 1 || n.Ident[1] == "args")
	case *parse.ChainNode:
		return nodeReadsArgs(n.Node) // its fields are of what n.Node gives
	case *parse.ListNode:
		if n == nil {
			return false
		}
		for _, m := range n.Nodes {
			if nodeReadsArgs(m) {
				return true
			}
		}
	case *parse.ActionNode:
		return nodeReadsArgs(n.Pipe)
	case *parse.PipeNode:
		if n == nil {
			return false
		}
		for _, c := range n.Cmds {
			if nodeReadsArgs(c) {
				return true
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			if nodeReadsArgs(a) {
				return true
			}
		}
	case *parse.IfNode:
		return branchReadsArgs(&n.BranchNode)
	case *parse.RangeNode:
		return branchReadsArgs(&n.BranchNode)
	case *parse.WithNode:
		return branchReadsArgs(&n.BranchNode)
	case *parse.TemplateNode:
		return nodeReadsArgs(n.Pipe)
	}
	return false
}

func branchReadsArgs(b *parse.BranchNode) bool {
	return nodeReadsArgs(b.Pipe) || nodeReadsArgs(b.List) || nodeReadsArgs(b.ElseList)
}

// templates are the templates an answer renders.
func (a *answer) templates() []*template.Template {
	var ts []*template.Template
	for _, b := range a.content {
		ts = append(ts, b.text, b.resource)
	}
	if a.err != nil {
		ts = append(ts, a.err.msg)
	}
	for _, s := range a.progress {
		ts = append(ts, s.msg)
	}
	for _, l := range a.log {
		ts = append(ts, l.text)
	}
	return ts
}
