package lint

import (
	"encoding/json"
	"strings"

	"github.com/mcptape/mcptape/store"
)

// need names the capability a message depends on: whose it is and its
// path ("tools", "resources.subscribe"; a two-part path needs the member
// to be true).
type capNeed struct {
	ofServer bool
	path     string
	since    string // the version that introduced it; "" for all
}

// serverSent are the messages a server may only send when a capability
// was declared: its own (list_changed, logging) or the client's (the
// requests it makes of the client).
var serverSent = map[string]capNeed{
	"notifications/tools/list_changed":     {ofServer: true, path: "tools.listChanged"},
	"notifications/prompts/list_changed":   {ofServer: true, path: "prompts.listChanged"},
	"notifications/resources/list_changed": {ofServer: true, path: "resources.listChanged"},
	"notifications/resources/updated":      {ofServer: true, path: "resources.subscribe"},
	"notifications/message":                {ofServer: true, path: "logging"},
	"sampling/createMessage":               {path: "sampling"},
	"roots/list":                           {path: "roots"},
	"elicitation/create":                   {path: "elicitation"},
	// Tasks the client runs (task-augmented sampling or elicitation).
	"tasks/get":    {path: "tasks", since: "2025-11-25"},
	"tasks/result": {path: "tasks", since: "2025-11-25"},
	"tasks/list":   {path: "tasks.list", since: "2025-11-25"},
	"tasks/cancel": {path: "tasks.cancel", since: "2025-11-25"},
}

// clientSent are the client's messages that depend on a capability.
var clientSent = map[string]capNeed{
	"notifications/roots/list_changed": {path: "roots.listChanged"},
	"tools/list":                       {ofServer: true, path: "tools"},
	"tools/call":                       {ofServer: true, path: "tools"},
	"prompts/list":                     {ofServer: true, path: "prompts"},
	"prompts/get":                      {ofServer: true, path: "prompts"},
	"resources/list":                   {ofServer: true, path: "resources"},
	"resources/templates/list":         {ofServer: true, path: "resources"},
	"resources/read":                   {ofServer: true, path: "resources"},
	"resources/subscribe":              {ofServer: true, path: "resources.subscribe"},
	"resources/unsubscribe":            {ofServer: true, path: "resources.subscribe"},
	"logging/setLevel":                 {ofServer: true, path: "logging"},
	"completion/complete":              {ofServer: true, path: "completions", since: "2025-03-26"},
	"tasks/get":                        {ofServer: true, path: "tasks", since: "2025-11-25"},
	"tasks/result":                     {ofServer: true, path: "tasks", since: "2025-11-25"},
	"tasks/list":                       {ofServer: true, path: "tasks.list", since: "2025-11-25"},
	"tasks/cancel":                     {ofServer: true, path: "tasks.cancel", since: "2025-11-25"},
}

// capability checks that a request or notification was declared for.
func (c *checker) capability(f *frame) {
	table := clientSent
	if f.dir == store.S2C {
		table = serverSent
	}
	need, ok := table[f.method]
	if !ok || (need.since != "" && !c.atLeast(need.since)) {
		return
	}
	caps, known, whose := c.clientCaps, c.clientCapsKnown, "client"
	if need.ofServer {
		caps, known, whose = c.serverCaps, c.serverCapsKnown, "server"
	}
	if !known || hasCapability(caps, need.path) {
		return
	}
	c.report("undeclared-capability", f.seq, 0, "%s sends %s, but the %s did not declare capabilities.%s", side(f.dir), f.method, whose, need.path)
}

// hasCapability reports whether caps declares path: "tools" is present
// (as an object), "tools.listChanged" is true, "tasks.list" an object.
func hasCapability(caps map[string]json.RawMessage, path string) bool {
	top, sub, nested := strings.Cut(path, ".")
	v, ok := caps[top]
	if !ok || string(v) == "null" {
		return false
	}
	if !nested {
		return true
	}
	m := member(v, sub)
	return string(m) == "true" || (len(m) > 0 && m[0] == '{')
}

// deprecatedIn2026 are the features 2026-07-28 deprecates (SEP-2577:
// roots, sampling and logging), which still work for a while.
var deprecatedIn2026 = map[string]string{
	"roots/list": "roots", "notifications/roots/list_changed": "roots",
	"sampling/createMessage": "sampling",
	"logging/setLevel":       "logging", "notifications/message": "logging",
}

// deprecated notes a deprecated feature used in a 2026-07-28 session.
func (c *checker) deprecated(f *frame) {
	if feature, ok := deprecatedIn2026[f.method]; ok && c.version != "" && c.atLeast(statelessVersion) {
		c.report("deprecated", f.seq, 0, "%s uses %s, which protocol %s deprecates", f.method, feature, c.version)
	}
}
