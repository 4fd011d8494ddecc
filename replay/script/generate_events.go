package script

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file gives FromTape's script the recorded server's list changes as
// events: a server that added, removed or changed a tool (resource,
// prompt, resource template) and said so with notifications/…/list_changed starts with what
// it listed first, and an event changes the lists after the request that
// made the server change them, as it did. A test of how a host follows
// list changes can then start from the recording.
//
// Only a one-session recording gets events: events fire per session, and
// sessions that changed at different points have no one script.

// listKind is a list a server can change: its kind (the list method
// without "/list"), the member of the list result that holds its items,
// the member that names an item, and the kind of the list_changed
// notification that announces a change.
type listKind struct{ kind, items, key, notice string }

// listKinds are the lists a server can change. Resource templates have no
// notification of their own: the spec's resources/list_changed stands for
// a change of resources, of templates or of both.
var listKinds = []listKind{
	{"tools", "tools", "name", "tools"},
	{"resources", "resources", "uri", "resources"},
	{"prompts", "prompts", "name", "prompts"},
	{templatesKind, "resourceTemplates", "uriTemplate", "resources"},
}

// templatesKind is the kind of resources/templates/list.
const templatesKind = "resources/templates"

// listMark is one step of a session's list history: a listing (its pages
// joined) or a notification that the list changed.
type listMark struct {
	kind    string    // for a change, the notification's (a listKind's notice)
	changed bool      // a notifications/KIND/list_changed
	trigger *exchange // for a change: the request that made it due
	names   []string  // for a listing: the items' keys, in order
	defs    map[string]json.RawMessage
}

// noteListing adds an answered tools/list (resources/list, prompts/list)
// to the session's history; a page with a cursor joins the listing before.
func (r *recording) noteListing(x *exchange) {
	kind, ok := strings.CutSuffix(x.method, "/list")
	i := slices.IndexFunc(listKinds, func(k listKind) bool { return k.kind == kind })
	if !ok || i < 0 || len(x.result) == 0 {
		return
	}
	var res map[string]json.RawMessage
	var items []json.RawMessage
	if json.Unmarshal(x.result, &res) != nil || json.Unmarshal(res[listKinds[i].items], &items) != nil {
		return
	}
	var m *listMark
	var cursor struct {
		Cursor string `json:"cursor"`
	}
	if json.Unmarshal(x.params, &cursor) == nil && cursor.Cursor != "" {
		for j := len(r.hist) - 1; j >= 0 && m == nil; j-- {
			if r.hist[j].kind == kind && !r.hist[j].changed {
				m = r.hist[j]
			}
		}
	}
	if m == nil {
		m = &listMark{kind: kind, defs: map[string]json.RawMessage{}}
		r.hist = append(r.hist, m)
	}
	appendDefs(m.defs, &m.names, items, listKinds[i].key)
}

// noteChange adds a list_changed notification to the session's history.
func (r *recording) noteChange(method string, trigger *exchange) {
	kind := strings.TrimSuffix(strings.TrimPrefix(method, "notifications/"), "/list_changed")
	if trigger != nil {
		r.hist = append(r.hist, &listMark{kind: kind, changed: true, trigger: trigger})
	}
}

// recordedEvents is what the session's list history says changed, and when.
type recordedEvents struct {
	first   map[string]*listMark       // by kind: the first listing
	added   map[string]map[string]bool // by kind: keys that an event adds and the first listing lacks
	changes []*listChange              // in the order they fell due
	byKind  map[string][]*listChange   // the changes to each kind
	starts  map[string][]*listChange   // by tool: the changes that add or replace it
}

// listChange is one event: the lists' changes that one request made due.
type listChange struct {
	trigger *exchange
	deltas  map[string]*listDelta // by kind
	from    map[string]*listMark  // by kind: the listing each delta is measured from
}

// listDelta is how a listing differs from the one before its change.
type listDelta struct {
	added, removed, replaced []string
	defs                     map[string]json.RawMessage // the new listing's
}

// recordedEvents reads the session's history; nil when it shows no list
// change that a later listing confirms.
func (r *recording) recordedEvents() *recordedEvents {
	ev := &recordedEvents{
		first: map[string]*listMark{}, added: map[string]map[string]bool{},
		byKind: map[string][]*listChange{}, starts: map[string][]*listChange{},
	}
	made := map[*exchange]*listChange{} // by trigger
	for _, k := range listKinds {
		var prev *listMark
		var notes []int // the changes announced since prev, by place in hist
		for i, m := range r.hist {
			switch {
			case m.changed:
				// A resources/list_changed counts for resources and for
				// templates alike: the listings that follow say which
				// changed (a delta that is empty is dropped).
				if m.kind == k.notice {
					notes = append(notes, i)
				}
			case m.kind != k.kind:
			case prev == nil:
				ev.first[k.kind] = m
				prev, notes = m, nil
			default:
				if len(notes) > 0 {
					ev.change(made, k.kind, r.dueOf(k, notes), prev, m)
				}
				prev, notes = m, nil
			}
		}
	}
	if len(ev.changes) == 0 {
		return nil
	}
	slices.SortStableFunc(ev.changes, func(a, b *listChange) int { return a.trigger.order - b.trigger.order })
	for _, c := range ev.changes {
		for kind, d := range c.deltas {
			ev.byKind[kind] = append(ev.byKind[kind], c)
			for _, key := range d.added {
				if first := ev.first[kind]; first.defs[key] == nil {
					if ev.added[kind] == nil {
						ev.added[kind] = map[string]bool{}
					}
					ev.added[kind][key] = true
				}
			}
			if kind == "tools" {
				for _, name := range slices.Concat(d.added, d.replaced) {
					ev.starts[name] = append(ev.starts[name], c)
				}
			}
		}
	}
	return ev
}

// dueOf is the request that made due the change of kind k that its
// listing now shows, of the changes announced since k was last listed
// (notes, by place in hist): the first. But a notification that also
// stands for another kind (resources/list_changed, for templates too)
// and that a changed listing of that kind explains is passed over for a
// later one: that server changed the other list then, and k later.
func (r *recording) dueOf(k listKind, notes []int) *exchange {
	for _, i := range notes {
		if !r.explainedElsewhere(k, i) {
			return r.hist[i].trigger
		}
	}
	return r.hist[notes[0]].trigger
}

// explainedElsewhere says whether the change announced at hist[i] shows
// in a list of another kind that its notification stands for: listed
// after it, before the next such notification, with other items than
// that kind's listing before it.
func (r *recording) explainedElsewhere(k listKind, i int) bool {
	for _, o := range listKinds {
		if o.kind == k.kind || o.notice != k.notice {
			continue
		}
		var before, after *listMark
		for _, m := range r.hist[:i] {
			if !m.changed && m.kind == o.kind {
				before = m
			}
		}
		for _, m := range r.hist[i+1:] {
			if m.changed && m.kind == k.notice {
				break
			}
			if !m.changed && m.kind == o.kind {
				after = m
				break
			}
		}
		if before != nil && after != nil && !maps.EqualFunc(before.defs, after.defs, jsonValueEqual) {
			return true
		}
	}
	return false
}

// change records that listing next of kind differs from prev, the one
// before the change trigger made due; made holds the change each trigger
// has made so far. A second listing after the same trigger is compared
// with the same prev.
func (ev *recordedEvents) change(made map[*exchange]*listChange, kind string, trigger *exchange, prev, next *listMark) {
	c := made[trigger]
	if c == nil {
		c = &listChange{trigger: trigger, deltas: map[string]*listDelta{}, from: map[string]*listMark{}}
		made[trigger] = c
	}
	if b := c.from[kind]; b != nil {
		prev = b
	} else {
		c.from[kind] = prev
	}
	d := &listDelta{defs: next.defs}
	for _, key := range next.names {
		switch old, ok := prev.defs[key]; {
		case !ok:
			d.added = append(d.added, key)
		case !jsonValueEqual(old, next.defs[key]):
			d.replaced = append(d.replaced, key)
		}
	}
	for _, key := range prev.names {
		if _, ok := next.defs[key]; !ok {
			d.removed = append(d.removed, key)
		}
	}
	if len(d.added)+len(d.removed)+len(d.replaced) == 0 {
		delete(c.deltas, kind)
	} else {
		c.deltas[kind] = d
	}
	if len(c.deltas) > 0 && !slices.Contains(ev.changes, c) {
		ev.changes = append(ev.changes, c)
	}
	if len(c.deltas) == 0 {
		ev.changes = slices.DeleteFunc(ev.changes, func(y *listChange) bool { return y == c })
	}
}

// initially says whether the script's first lists hold key: not when an
// event adds it.
func (ev *recordedEvents) initially(kind, key string) bool { return !ev.added[kind][key] }

// initialDef is key's definition before any event: as first listed, if it
// was in the first listing of a changed list.
func (ev *recordedEvents) initialDef(kind, key string, def json.RawMessage, listed bool) (json.RawMessage, bool) {
	if len(ev.byKind[kind]) == 0 {
		return def, listed
	}
	if d, ok := ev.first[kind].defs[key]; ok {
		return d, true
	}
	return def, listed
}

// callsOf are the calls of tool name that its version from change c (nil:
// the first) answered: those asked after c fell due and before the next
// change that adds or replaces it. The request that makes a change due is
// answered before it, as mcpmock fires events.
func (ev *recordedEvents) callsOf(name string, c *listChange, calls []*exchange) []*exchange {
	starts := ev.starts[name]
	from, until := 0, -1 // by request order
	if c != nil {
		i := slices.Index(starts, c)
		from = c.trigger.order
		starts = starts[i+1:]
	}
	if len(starts) > 0 {
		until = starts[0].trigger.order
	}
	var out []*exchange
	for _, x := range calls {
		if x.order > from && (until < 0 || x.order <= until) {
			out = append(out, x)
		}
	}
	return out
}

// eventsNode writes the changes as the script's events. A tool, resource
// or prompt of an event that does not load is left out of it, with the
// others' comments.
func (r *recording) eventsNode() *yaml.Node {
	out := seqNode()
	for _, c := range r.events.changes {
		e := newMap()
		after := newMap()
		t := c.trigger
		if t.tool != "" {
			after.set("tool", strNode(t.tool))
			after.set("calls", intNode(t.callN))
		} else {
			after.set("requests", intNode(t.nth))
		}
		e.set("after", flow(after.n))
		what := t.method
		if t.tool != "" {
			what += " " + t.tool
		}
		e.n.HeadComment = fmt.Sprintf("The server's lists changed after %s (%s seq %d).", what, t.session, t.seq)
		if d := c.deltas["tools"]; d != nil {
			tool := func(name string) (*yaml.Node, error) {
				return r.toolNode(name, d.defs[name], true, r.events.callsOf(name, c, r.calls[name]))
			}
			r.setItems(e, "addTools", "tool", d.added, tool)
			setNames(e, "removeTools", d.removed)
			r.setItems(e, "replaceTools", "tool", d.replaced, tool)
		}
		// Resources and prompts have no replace: adding one that is
		// listed replaces it in its place, as replaceTools does a tool.
		// Removed first and added again, it would go to the end, and the
		// replayed list would lose the recorded order.
		if d := c.deltas["resources"]; d != nil {
			setNames(e, "removeResources", d.removed)
			r.setItems(e, "addResources", "resource", slices.Concat(d.added, d.replaced), func(uri string) (*yaml.Node, error) {
				return r.resourceNode(uri, d.defs[uri], true)
			})
		}
		if d := c.deltas["prompts"]; d != nil {
			setNames(e, "removePrompts", d.removed)
			r.setItems(e, "addPrompts", "prompt", slices.Concat(d.added, d.replaced), func(name string) (*yaml.Node, error) {
				return r.promptNode(name, d.defs[name], true)
			})
		}
		if d := c.deltas[templatesKind]; d != nil {
			setNames(e, "removeResourceTemplates", d.removed)
			r.setItems(e, "addResourceTemplates", "resource template", slices.Concat(d.added, d.replaced), func(uri string) (*yaml.Node, error) {
				return r.templateNode(uri, d.defs[uri])
			})
		}
		out.Content = append(out.Content, e.n)
	}
	return out
}

// setItems sets key to the items build writes for keys, leaving out (and
// noting) those that do not load.
func (r *recording) setItems(m mapNode, key, kind string, keys []string, build func(string) (*yaml.Node, error)) {
	list := seqNode()
	for _, k := range keys {
		n, err := build(k)
		if err != nil {
			r.omit(kind, k, err)
			continue
		}
		list.Content = append(list.Content, n)
	}
	if len(list.Content) > 0 {
		m.set(key, list)
	}
}

// setNames sets key to a flow list of names, if there are any.
func setNames(m mapNode, key string, names []string) {
	if len(names) == 0 {
		return
	}
	list := seqNode()
	for _, n := range names {
		list.Content = append(list.Content, strNode(n))
	}
	list.Style = yaml.FlowStyle
	m.set(key, list)
}
