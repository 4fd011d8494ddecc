package replay

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mcptape/mcptape/internal/jsonrpc"
)

// A 2026-07-28 client asks, in each subscriptions/listen request, which
// change notifications it wants on that stream; a server sends it those
// only. mcpmock does the same with what a recording carried, whatever
// the filters of the recorded client's listens were: another client (or
// SDK) splits them otherwise (go-sdk one listen for the tool list and one
// for each resource, mcp-go one for all).

// listenFilter is the notifications member of a listen request.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged"`
	PromptsListChanged    bool     `json:"promptsListChanged"`
	ResourcesListChanged  bool     `json:"resourcesListChanged"`
	ResourceSubscriptions []string `json:"resourceSubscriptions"`
}

// filterOf reads a listen request's filter from its params; nil (every
// notification) when it has none.
func filterOf(params json.RawMessage) *listenFilter {
	n := jsonrpc.Member(params, "notifications")
	if n == nil {
		return nil
	}
	f := &listenFilter{}
	if json.Unmarshal(n, f) != nil {
		return nil
	}
	return f
}

// wants says whether a stream with filter f (nil: none) carries the
// notification msg. Notifications no filter names go on every stream.
func (f *listenFilter) wants(msg []byte) bool {
	if f == nil {
		return true
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return true
	}
	switch m.Method {
	case "notifications/tools/list_changed":
		return f.ToolsListChanged
	case "notifications/prompts/list_changed":
		return f.PromptsListChanged
	case "notifications/resources/list_changed":
		return f.ResourcesListChanged
	case "notifications/resources/updated":
		return slices.Contains(f.ResourceSubscriptions, m.Params.URI)
	}
	return true
}

// holdListen answers a listen request no source answers: it acknowledges
// the filter the client asked for, then keeps the stream open for the
// session's notifications until the client closes it or the session ends.
func (s *session) holdListen(ctx context.Context, req *Request, ex exchange) {
	defer ex.done()
	ack := map[string]any{"_meta": map[string]json.RawMessage{"io.modelcontextprotocol/subscriptionId": req.ID}}
	if n := jsonrpc.Member(req.Params, "notifications"); n != nil {
		ack["notifications"] = json.RawMessage(n)
	}
	params, _ := json.Marshal(ack)
	if ex.send(notificationMessage("notifications/subscriptions/acknowledged", params)) != nil {
		return
	}
	select {
	case <-ctx.Done():
	case <-s.draining:
	}
}
